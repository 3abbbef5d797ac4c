#pragma once
// The RF-RoPE estimator for fixed content (RF-RoPE paper eq. (Si-decomp), Theorem 2, Proposition 4;
// spec rf-rope.md section 1). Blocks q_i, k_i in R^2 of the query and key give
//   A_i = q_i . k_i,   B_i = q_i^T J k_i,   J = [[0,-1],[1,0]],   S_i = A_i cos u_i + B_i sin u_i,
// with u_i = Dp . w_i, and S = sum_i S_i. Theorem 2: E[S] = (q . k) Phi(Dp). Proposition 4:
// Var(S_i) = (A_i^2 + B_i^2)/2 + (A_i^2 - B_i^2)/2 Phi2 - A_i^2 Phi^2, Var(S) = sum_i Var(S_i).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/spectral/spectrum.hpp"

namespace ropekit {

/// Query and key content, block by block.
struct Content {
  Eigen::MatrixX2d q;  ///< rows = D blocks: q_i
  Eigen::MatrixX2d k;  ///< rows = D blocks: k_i
  int blocks() const { return static_cast<int>(q.rows()); }
};

/// How `make_content` draws content from a seed.
enum class ContentKind {
  random,      ///< q, k entries i.i.d. N(0, 1): A_i, B_i of both signs, q . k ~ sqrt(D)
  correlated,  ///< q_i a random unit vector, k_i = R(phi_i) q_i, phi_i ~ U(-pi/3, pi/3): A_i in [1/2, 1], q . k ~ D
  aligned,     ///< k_i = q_i, a random unit vector: A_i = 1, B_i = 0
};

/// "random", "correlated", "aligned". @throws InputError otherwise.
ContentKind parse_content_kind(std::string_view name);
std::string content_kind_name(ContentKind kind);

/// Content for D blocks from (seed, stream "content"), block by block: the first D blocks do not
/// depend on how many follow. @throws InputError if blocks < 1.
Content make_content(ContentKind kind, int blocks, std::uint64_t seed);
/// Content from explicit vectors q, k in R^{2D}, (q_{i,0}, q_{i,1}) = (q[2i], q[2i+1]).
/// @throws InputError for sizes that differ, are odd or zero, or non-finite entries.
Content content_from_vectors(const std::vector<double>& q, const std::vector<double>& k);

/// A_i and B_i of every block.
struct Coefficients {
  Eigen::VectorXd A;  ///< size D: q_i . k_i
  Eigen::VectorXd B;  ///< size D: q_i^T J k_i = q_{i,1} k_{i,0} - q_{i,0} k_{i,1}
  double qk() const { return A.sum(); }  ///< q . k
};
Coefficients coefficients(const Content& c);

/// S for one draw of frequencies (rows = D, cols = k) at lag Dp (size k): sum_i A_i cos u_i + B_i sin u_i.
double score(const Coefficients& c, const Eigen::MatrixXd& w, std::span<const double> lag);
/// S as the paper defines it: rotate q_i by R(p_m . w_i) and k_i by R(p_n . w_i), then sum the dot
/// products (Dp = p_n - p_m). An independent route to `score`, for tests.
double score_by_rotation(const Content& c, const Eigen::MatrixXd& w, std::span<const double> p_m,
                         std::span<const double> p_n);

/// How the D block frequencies of one trial are drawn.
enum class Sampling {
  iid,         ///< independent draws from p (the paper's setting)
  antithetic,  ///< pairs (w, -w) in blocks (2j, 2j+1); an odd last block is an independent draw
  stratified,  ///< k = 1: w_i = Q((pi_i + U_i)/D), pi a random permutation, Q the quantile function
};
/// One draw of the D block frequencies by `sampling`, into w (structure of arrays: component j of block i at
/// w[j * D + i]; D * k values): iid = sample(s, rng, D); antithetic = (D+1)/2 draws w_j placed as (w_j, -w_j) in
/// blocks (2j, 2j+1), an odd last block keeping +w; stratified (k = 1) = Q((pi_i + U_i)/D), pi a Fisher-Yates
/// permutation drawn first, then the U_i in order. `half` and `perm` are scratch, reused across trials. The one
/// definition of the three draws: Monte Carlo trials and an rf-rope encoding's fixed draw both call it.
void draw_frequencies(const Spectrum& s, Sampling sampling, const QuantileFunction& Q, Rng& rng, std::size_t D,
                      double* w, std::vector<double>& half, std::vector<std::size_t>& perm);

/// "iid", "antithetic", "stratified". @throws InputError otherwise.
Sampling parse_sampling(std::string_view name);
std::string sampling_name(Sampling s);

/// E[S] = (q . k) Phi(Dp) (Theorem 2; also for antithetic and stratified draws, whose marginals are p).
double expected_score(const Spectrum& s, const Coefficients& c, std::span<const double> lag);

/// Var(S) by Proposition 4, as sum_i A_i^2 Var[cos u] + B_i^2 Var[sin u] (no cancellation near Dp = 0).
/// Antithetic: the pair (2j, 2j+1) sees u and -u, so it is one block with A = A_2j + A_2j+1 and
/// B = B_2j - B_2j+1. Stratified: NaN (the blocks are dependent; no closed form).
double score_variance(const Spectrum& s, const Coefficients& c, std::span<const double> lag,
                      Sampling sampling = Sampling::iid);
/// Proposition 4 for one block, literally as printed: (A^2+B^2)/2 + (A^2-B^2)/2 Phi2 - A^2 Phi^2.
double block_variance_paper(double A, double B, double phi, double phi2);

}  // namespace ropekit
