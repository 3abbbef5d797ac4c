#pragma once
// The whole inverse design (RF-RoPE Corollary 3, Bochner) behind `ropekit design` and `ropekit.design`: routing of
// the three inputs, their checks and work budget, the density or line spectrum, the D frequencies, the tuned
// encoding and the rows comparing the realised kernel with the target. The pieces are in design.hpp.
//   a 1-D spectral family: the closed-form density, PD by construction; frequencies drawn by the library's rf-rope
//                          sampler, so the tuned encoding is that rf-rope spelling;
//   kernel:ENCODING:       Phi = kernel(e, lags) on an even lag grid. Rope, rope-matched and 1-D rf-rope kernels
//                          take the lines route (their Bochner measure is the atoms, checked against the kernel to
//                          rounding); other encodings, or spectrum_route = "table", the table route;
//   data:FILE.csv:         a lag,value table on an even grid (table route).
// The table route estimates the density of Phi's piecewise-linear interpolant and certifies (or refutes) positive
// definiteness with its Fejer-tapered twin; the frequencies come from |w|'s distribution and the tuned encoding is
// rope:freqs=[...]. Messages name the command line's options (--kernel, --lags, ...) under "ropekit design".

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include <Eigen/Dense>

#include "ropekit/core/lags.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/design/design.hpp"

namespace ropekit {

/// What to design and how (the options of `ropekit design`).
struct DesignRequest {
  std::string kernel;              ///< a 1-D spectral family, kernel:ENCODING or data:FILE.csv
  int blocks = 0;                  ///< D, the number of frequencies, in [1, 2^24]
  std::string sampling = "quantile";  ///< quantile, iid or antithetic
  std::uint64_t seed = kDefaultSeed;
  bool seed_given = false;         ///< a seed was given (refused with quantile sampling)
  std::string taper = "none";      ///< table route: none or fejer
  std::string spectrum_route;      ///< kernel: only: "" (lines when possible), "lines" or "table"
  std::string lags_text;           ///< lags as text ("" = the default 0:4097), parsed unless `lags` is given
  std::optional<Lags> lags;        ///< lags given as values (the Python module), named `lags_text` in messages
  std::int64_t wpoints = 0;        ///< density grid points (0 = default)
  std::optional<double> wmax;      ///< spectral families: top of the density grid
  std::optional<double> tolerance;  ///< tables: negative-mass threshold of the certificate
  /// Told the work's size and estimated seconds before it starts (the command line prints it for long runs).
  std::function<void(const std::string& what, double seconds)> announce;
};

enum class DesignSource { family, encoding, data };

/// Everything a report shows, whatever the input.
struct DesignResult {
  DesignSource source = DesignSource::family;
  DesignSampling sampling = DesignSampling::quantile;
  DensityEstimate est;            ///< density grid, densities and certificate (families: p only, PD, no mass;
                                  ///< lines: PD, no mass, tolerance 0, w_max the largest atom, integral the mass sum)
  Eigen::VectorXd p_closed_form;  ///< families only
  std::string route;              ///< "lines" or "table" (kernel: and data:), "closed form" (families)
  std::string route_reason;       ///< kernel: on the table route: why not lines
  std::optional<LineSpectrum> lines;
  double line_residual = NAN;     ///< lines: max |sum m_i cos(w_i Dp) - kernel(e, Dp)| over the lags
  double odd_at = NAN;            ///< kernel: a lag where Phi(-Dp) != Phi(Dp) (not even: not positive definite)
  std::pair<double, double> odd_values{NAN, NAN};  ///< Phi(Dp), Phi(-Dp) there
  double step = NAN;              ///< tables only: h
  bool fejer = false;             ///< frequencies drawn from p_F instead of max(p, 0)
  Eigen::VectorXd freqs;          ///< the D frequencies
  std::string tuned;              ///< the tuned encoding's spelling
  Eigen::VectorXd lags, target, realised, variance, variance_iid;  ///< one row per lag (Prop 4's variances)
  double max_abs = 0, rms = 0;    ///< of realised - target over every lag
};

/// Runs the design. @throws InputError (one line naming the option and the constraint) on bad input, before any
/// work for what can be checked up front, and for a request over the time or memory budget (core/budget.hpp).
DesignResult inverse_design(const DesignRequest& request);

}  // namespace ropekit
