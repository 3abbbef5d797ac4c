#pragma once
// The free parameters of an encoding for nonlinear fits (issue 8, `ropekit fit-params`): an encoding's feature
// basis (encoding.hpp `features`, the jet basis of spec encodings.md section 1) written as a templated function
// of a parameter vector p, so that a solver gets exact derivatives by running it on dual numbers (ceres::Jet in
// fit/param_fit.cpp, the only file that knows Ceres). Every family is a product of a coefficient column
// (1, E = e^{-gamma d}, that^p/p! E, x^p/p! e^{-c x}) and a trigonometric column (cos, sin of theta_k d).
//
// Free names are the spelling's own keys: `theta` (every frequency, one parameter each), `gamma`, `eta`, `c`,
// `factor` (the scaling scheme's), and an rf-rope spectrum's scale (`sigma`, `b`, `l`, `W`).

#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/encoding.hpp"

namespace ropekit {

/// An encoding with named free parameters: the map p -> features, and p -> the tuned encoding's spelling.
struct TunableEncoding {
  enum class Kind { trig, damped, jordan, jordan_scaled, real_jordan };
  /// How the frequencies depend on p: each its own parameter, an affine function of 1/factor
  /// (linear, yarn, llama3: theta_k = a_k + b_k / s), a power of the factor (ntk: theta_k = a_k s^{b_k}),
  /// a spectral scale (theta_k = a_k / s for sigma, b, l; a_k s for sinc's W), or fixed.
  enum class FreqMap { fixed, each, inverse_affine, power, inverse_scale, scale };

  Encoding untuned;
  Kind kind = Kind::trig;
  std::vector<std::string> free;  ///< the names as given, in order
  std::vector<std::string> names; ///< one per parameter: "theta_0", ..., "gamma", ...
  Eigen::VectorXd start;          ///< p of the untuned encoding
  Eigen::VectorXd lower;          ///< bounds that keep the encoding valid
  Eigen::VectorXd upper;

  // The quantities the features read (untuned values), and where p enters.
  Eigen::VectorXd theta;        ///< F frequencies (empty for real-jordan)
  double gamma = 0, eta = 0, c = 0;
  int m = 1;                    ///< Jordan order (1 for trig and damped)
  bool bounded_tau = true;
  int L = 1024;
  FreqMap freq_map = FreqMap::fixed;
  Eigen::VectorXd freq_a, freq_b;  ///< coefficients of the frequency map
  int theta_at = -1, gamma_at = -1, eta_at = -1, c_at = -1, factor_at = -1;  ///< index in p, -1 when fixed

  int n_params() const { return static_cast<int>(start.size()); }
  int n_features() const;
  /// Which frequency each feature column reads (-1 for columns without one): the columns that theta_k moves.
  std::vector<int> column_frequency() const;
};

/// Reads the free names against the encoding. Families: rope (theta, factor), rf-rope (theta, its spectrum's scale),
/// damped (theta, gamma), jordan (theta, gamma, eta), jordan-scaled (theta, c), real-jordan (gamma, eta).
/// @throws InputError naming `where`, the name and what the encoding has (a name it lacks, a repeated name, theta
/// and factor together, eta with tau=raw where the weights absorb it, a family without free parameters).
TunableEncoding make_tunable(const Encoding& e, const std::vector<std::string>& free, const Where& where);

/// The encoding at parameters p, as a value every command accepts (theta free: `freqs=[...]`, scaling removed).
Encoding tuned_encoding(const TunableEncoding& t, const Eigen::VectorXd& p);

/// The quantities at p, for any scalar type T (double or a dual number).
template <class T>
struct TunableValues {
  std::vector<T> theta;
  T gamma, eta, c;
};

template <class T>
TunableValues<T> tunable_values(const TunableEncoding& t, const T* p) {
  TunableValues<T> v;
  v.gamma = t.gamma_at >= 0 ? p[t.gamma_at] : T(t.gamma);
  v.eta = t.eta_at >= 0 ? p[t.eta_at] : T(t.eta);
  v.c = t.c_at >= 0 ? p[t.c_at] : T(t.c);
  const Eigen::Index F = t.theta.size();
  v.theta.reserve(static_cast<std::size_t>(F));
  for (Eigen::Index k = 0; k < F; ++k) {
    using std::pow;
    switch (t.freq_map) {
      case TunableEncoding::FreqMap::each: v.theta.push_back(p[t.theta_at + k]); break;
      case TunableEncoding::FreqMap::inverse_affine:
        v.theta.push_back(t.freq_a[k] + t.freq_b[k] / p[t.factor_at]);
        break;
      case TunableEncoding::FreqMap::power: v.theta.push_back(t.freq_a[k] * pow(p[t.factor_at], t.freq_b[k])); break;
      case TunableEncoding::FreqMap::inverse_scale: v.theta.push_back(t.freq_a[k] / p[t.factor_at]); break;
      case TunableEncoding::FreqMap::scale: v.theta.push_back(t.freq_a[k] * p[t.factor_at]); break;
      case TunableEncoding::FreqMap::fixed: v.theta.push_back(T(t.theta[k])); break;
    }
  }
  return v;
}

/// The feature row at lag d (>= 0) into row[0..n_features): the same columns, in the same order, as
/// features(t.untuned, lags) of encoding.hpp (fixed-basis.md section 2), computed here from closed forms:
///   trig:          1, cos(theta_k d), sin(theta_k d)
///   damped:        1, E cos, E sin                                     E = e^{-gamma d}
///   jordan:        1, then for q < m: (that^q/q!) E cos, (that^q/q!) E sin   that = eta d/(1 + d/L) or eta d
///   jordan-scaled: 1, then for q < m: (x^q/q!) e^{-c x} cos, sin        x = d/L
///   real-jordan:   1, E, that E
template <class T>
void tunable_row(const TunableEncoding& t, const TunableValues<T>& v, double d, T* row) {
  using std::cos;
  using std::exp;
  using std::sin;
  const Eigen::Index F = t.theta.size();
  row[0] = T(1.0);
  auto trig_chain = [&](const T& envelope, const T& shear) {
    T coefficient = envelope;  // shear^q/q! * envelope
    for (int q = 0; q < t.m; ++q) {
      if (q > 0) coefficient = coefficient * shear / double(q);
      T* out = row + 1 + 2 * F * q;
      for (Eigen::Index k = 0; k < F; ++k) {
        const T phase = v.theta[static_cast<std::size_t>(k)] * d;
        out[k] = coefficient * cos(phase);
        out[F + k] = coefficient * sin(phase);
      }
    }
  };
  auto that = [&]() -> T {
    const T s = v.eta * d;
    return t.bounded_tau ? T(s / (1.0 + s)) : s;
  };
  switch (t.kind) {
    case TunableEncoding::Kind::trig: trig_chain(T(1.0), T(0.0)); break;
    case TunableEncoding::Kind::damped: trig_chain(exp(-v.gamma * d), T(0.0)); break;
    case TunableEncoding::Kind::jordan: {
      // Jordan-RoPE's stabilized shear eta tau(d), tau(d) = d/(1 + d/L) (d * (1/L): bit-equal to s/(1+s) at eta = 1/L).
      const T s = v.eta * d;
      trig_chain(exp(-v.gamma * d), t.bounded_tau ? T(s / (1.0 + d * (1.0 / t.L))) : s);
      break;
    }
    case TunableEncoding::Kind::jordan_scaled: {
      const double x = d / t.L;
      trig_chain(exp(-v.c * x), T(x));
      break;
    }
    case TunableEncoding::Kind::real_jordan: {
      const T E = exp(-v.gamma * d);
      row[1] = E;
      row[2] = that() * E;
      break;
    }
  }
}

}  // namespace ropekit
