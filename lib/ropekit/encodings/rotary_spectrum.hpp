#pragma once
// An encoding whose relative operator is a fixed direct sum of scaled rotations, G(Dp) = (+)_i c_i R(-theta_i Dp)
// (+) a constant real part, has kernel and content variance as plain cosine sums (spec encodings.md section 1, per
// block: tr G = k m c_0 cos, tr G^2 = k m c_0^2 cos 2phase, ||G||_F^2 constant):
//   tr G(Dp)   = c_tr + sum_i a_i cos(theta_i Dp),      tr G(Dp)^2 = c_sq + sum_i b_i cos(2 theta_i Dp),
//   ||G||_F^2  = fro,
// which the vector kernels of core/vecmath.hpp evaluate for a block of lags at once (an even grid by the
// angle-addition recurrence, scattered lags by the vector sincos), with no allocation per lag. RoPE with any scheme
// that does not depend on the lag, rope-freqs, rope-matched, nope and their direct sums have this form; encodings
// whose coefficients move with the lag (damped, Jordan, ALiBi, xPos, poly), the per-lag schemes (dynamic NTK and
// LongRoPE without a sequence length), rf-rope (its rows carry per-lag spectrum terms) and N-D encodings do not,
// and take the block-by-block route.

#include <optional>
#include <vector>

#include "ropekit/encodings/types.hpp"

namespace ropekit {

struct RotarySpectrum {
  std::vector<double> theta, a, b;  ///< per rotary block: frequency, its tr G and tr G^2 weights
  double c_tr = 0, c_sq = 0, fro = 0;
  double trace_at_zero() const;     ///< tr G(0) = c_tr + sum a
};

/// The spectrum, read off the encoding's own blocks at two lags (1 and 2^20 + 3: the same coefficients, and phases
/// -theta Dp at each, bit for bit); nullopt where the encoding is not of this form. Interruptible.
std::optional<RotarySpectrum> rotary_spectrum(const Encoding& e, std::optional<double> seq_len);

/// The kernel tr G / tr G(0) and the content moments (mean rho tr G, variance ||G||_F^2 + rho^2 tr G^2) of n 1-D
/// lags, into whichever of kernel, mean, variance is not null, when the encoding is a fixed sum of rotations;
/// false (nothing written) otherwise. @throws InputError naming a lag that is not finite.
/// `grid`: lags that form an exact even grid (as a whole) go through the grid kernel; its values then depend on
/// where the grid starts (its anchors), so a caller that splits one request into blocks (the command line's
/// streaming, whose bytes must not depend on the block size) passes false and every lag is evaluated on its own.
bool rotary_kernel(const Encoding& e, const double* lags, std::size_t n, double rho, std::optional<double> seq_len,
                   double* kernel, double* mean, double* variance, bool grid = false);

/// out[j] = tr G(lags[j]) and, if `square` is given, square[j] = tr G(lags[j])^2, for n 1-D lags: with `grid`, an
/// exact even grid
/// by the grid kernel (vecmath.hpp's cos_sums_grid, re-anchored every kAnchor lags), else lag by lag (cos_sums;
/// phases past 1e14 rad by glibc's cos). One cosine per term gives both: cos 2x = 2 cos^2 x - 1. Interruptible.
void spectrum_traces(const RotarySpectrum& s, const double* lags, std::size_t n, double* out, double* square,
                     bool grid = true);

}  // namespace ropekit
