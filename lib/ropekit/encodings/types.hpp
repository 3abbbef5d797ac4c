#pragma once
// The value types the encoding functions take and return (encoding.hpp declares the functions): what a family file,
// a cost model or a request needs to name without the Encoding variant and every family behind it.

#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

namespace ropekit {

/// The variant of family structs (encoding.hpp); a header that takes one by reference needs only this declaration.
struct Encoding;

/// Values that a spelling leaves unset take these (a fit run passes its own: head_dim, theta, F, gamma, L, tau).
struct EncodingDefaults {
  int dim = 128;
  double base = 1e4;
  std::optional<int> count;  ///< F; default dim/2
  double gamma = 1e-4;
  int L = 1024;
  bool bounded_tau = true;
};

/// The size n of G and the number of rotary frequencies, from the parameters alone (encoding_size).
struct EncodingSize {
  double n = 0, freqs = 0;
};

/// One lag's kernel Phi, the score's content mean and variance, and rf-rope's expected kernel and frequency
/// variance (kernel_rows).
struct KernelRow {
  double kernel = 1;
  double content_mean = 1;
  double content_variance = 0;
  double expected_kernel = 0;     ///< rf-rope only (NaN otherwise)
  double frequency_variance = 0;  ///< rf-rope only (NaN otherwise)
};

/// The jet basis at causal lags (features): rows = lags, one named column per feature.
struct Features {
  Eigen::MatrixXd values;
  std::vector<std::string> names;
};

/// Group-law and relativity defects over a window of lags.
struct Exactness {
  double group_law = 0;   ///< max_{s,t} ||G(s) G(t) - G(s+t)||_F / max(1, ||G(s+t)||_F)
  double relativity = 0;  ///< sinusoidal: max over position pairs of the score's change at fixed Dp, relative
  double orthogonality = 0;  ///< max ||G^T G - I||_F (NaN-free; 0 for rotary families)
  double reversibility = 0;  ///< max ||G(-Dp) G(Dp) - I||_F
};

}  // namespace ropekit
