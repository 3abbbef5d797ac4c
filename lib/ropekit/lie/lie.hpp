#pragma once
#pragma once
// Generators of N-dimensional RoPE in so(n) and the Lie-algebra checks of spec nd-rope.md section 1
// ("Rethinking RoPE", Liu & Zhou 2025, sections 2.4 and 4-5: Eqs. 21-23 and 25-30, restated in the spec).
//   R(x) = exp(sum_i x_i B_i),  x in R^N (positions),  B_i n x n.
//   Relativity  R(x1)^T R(x2) = R(x2 - x1) for all x1, x2  <=>  B_i^T = -B_i and [B_i, B_j] = 0.
//   Reversibility  x -> R(x) injective on a window; needs the B_i linearly independent, hence N <= floor(n/2).
// A commuting skew set is B_i = Q T_i Q^T with Q orthogonal and T_i = diag_b(w_ib J) on the maximal torus,
// J = [[0, -1], [1, 0]], so that R(x) = Q diag_b(R(w_b . x)) Q^T in closed form.
//
// A GeneratorSet stores the base generators T_i and an optional mixing Q, as the JSON file does
// (generator_io.hpp); the generators that act are B_i = Q T_i Q^T (spec: "orthogonal mixing").
// Norms: |.|_F is the Frobenius norm, |.|_2 the spectral norm; eps = 2^-52.
//
// The pieces, one concept a header: generators.hpp (GeneratorSet and its families), mixing.hpp (Q),
// encoder.hpp (R(x) and the induced kernel), lie_check.hpp (the checks).

#include "ropekit/lie/encoder.hpp"
#include "ropekit/lie/generators.hpp"
#include "ropekit/lie/lie_check.hpp"
#include "ropekit/lie/mixing.hpp"
