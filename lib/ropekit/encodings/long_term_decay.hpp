#pragma once
// RoFormer's long-term decay (Su et al. 2021, arXiv 2104.09864, section 3.4.3; spec encodings.md section 5).
// For a rotary encoding with D frequencies theta_0 >= theta_1 >= ... (sorted descending), the score for block
// contents h_k = q_[2k:2k+1] k^*_[2k:2k+1] is sum_{k<D} h_k e^{i Dp theta_k}. Abel summation with S_0 = 0,
// S_j(Dp) = sum_{k<j} e^{i Dp theta_k} and h_D = 0 bounds it by (max_k |h_{k+1} - h_k|) sum_{j=1}^{D} |S_j(Dp)|;
// RoFormer plots the relative upper bound (1/D) sum_{j=1}^{D} |S_j(Dp)| (D = n/2), which decays with |Dp|.
// At Dp = 0 every S_j = j, so the bound is (1/D) sum_{j=1}^{D} j = (D + 1)/2.

#include <Eigen/Dense>

namespace ropekit {

/// (1/D) sum_{j=1}^{D} |S_j(lag)|, S_j = sum_{k<j} e^{i lag theta_k}, theta sorted descending (signed values;
/// the given order does not matter). Running complex sums in double; cos/sin of lag * theta_k as computed.
/// @throws InputError if theta is empty, or theta or lag is not finite.
double long_term_decay_bound(const Eigen::VectorXd& theta, double lag);

}  // namespace ropekit
