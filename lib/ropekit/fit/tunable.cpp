#include "ropekit/fit/tunable.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

#include <fmt/format.h>

#include "ropekit/core/overloaded.hpp"

namespace ropekit {

int TunableEncoding::n_features() const {
  if (kind == Kind::real_jordan) return 3;
  return 1 + 2 * m * static_cast<int>(theta.size());
}

std::vector<int> TunableEncoding::column_frequency() const {
  std::vector<int> owner(static_cast<std::size_t>(n_features()), -1);
  if (kind == Kind::real_jordan) return owner;
  const int F = static_cast<int>(theta.size());
  for (int q = 0; q < m; ++q)
    for (int k = 0; k < F; ++k) {
      owner[static_cast<std::size_t>(1 + 2 * F * q + k)] = k;
      owner[static_cast<std::size_t>(1 + 2 * F * q + F + k)] = k;
    }
  return owner;
}

namespace {

// Frequencies above pi alias on integer lags (cos and sin of theta d and 2 pi - theta d agree up to sign):
// the bound keeps each tuned frequency in its own alias-free range. The lower bound keeps theta > 0.
constexpr double kThetaLower = 1e-12;
constexpr double kThetaUpper = std::numbers::pi;

// The spectral scale key of a 1-D spectrum and whether frequencies scale as 1/s (kernel scales) or s (bandwidth),
// and a scheme's tunable factor: each family's and scheme's own (spectral/<family>.hpp, encodings/scaling/).
using SpectralScale = spectral::ScaleParameter;
std::optional<SpectralScale> spectral_scale(const Spectrum& s) { return spectrum_scale(s); }
Spectrum with_scale(Spectrum s, double v) { return spectrum_with_scale(std::move(s), v); }
double* scheme_factor(Scaling& s) { return tunable_factor(s); }

}  // namespace

TunableEncoding make_tunable(const Encoding& e, const std::vector<std::string>& free, const Where& where) {
  TunableEncoding t;
  t.untuned = e;
  t.free = free;
  const std::string family = family_name(e);
  std::optional<SpectralScale> scale;
  bool has_factor = false;
  std::string no_base;  // why base cannot be tuned (empty: it can, or the family has no base)
  std::visit(Overloaded{
                 [&](const enc::Rope& r) {
                   Scaling scheme = r.freqs.scaling;
                   has_factor = scheme_factor(scheme) != nullptr;
                   // base is free where every frequency is a power of it, theta_k = a_k B^{b_k}: a geometric grid
                   // under no scheme, linear (a_k = 1/s) or ntk (B s^{r/(r-2)}); yarn's ramp, llama3's band and
                   // dynamic's length move frequencies otherwise, and rope-freqs has no base.
                   if (!std::holds_alternative<Geometric>(r.freqs.source))
                     no_base = "rope-freqs gives its frequencies, not a base";
                   else if (!std::holds_alternative<scaling::None>(scheme) &&
                            !std::holds_alternative<scaling::Linear>(scheme) &&
                            !std::holds_alternative<scaling::Ntk>(scheme))
                     no_base = fmt::format("with scaling={} the frequencies are not a power of the base; base is "
                                           "free with scaling none, linear or ntk",
                                           scheme_name(scheme));
                 },
                 [](const enc::RopeMatched&) {},
                 [](const enc::Xpos&) {},
                 [&](const enc::RfRope& r) { scale = spectral_scale(r.freqs.spectrum); },
                 [&](const enc::Damped& d) {
                   t.kind = TunableEncoding::Kind::damped;
                   t.gamma = d.gamma;
                 },
                 [&](const enc::Jordan& j) {
                   t.kind = TunableEncoding::Kind::jordan;
                   t.gamma = j.gamma;
                   t.m = j.m;
                   t.bounded_tau = j.bounded_tau;
                   t.L = j.L;
                   t.eta = j.eta.value_or(1.0 / j.L);
                 },
                 [&](const enc::JordanScaled& j) {
                   t.kind = TunableEncoding::Kind::jordan_scaled;
                   t.c = j.c;
                   t.m = j.m;
                   t.L = j.L;
                 },
                 [&](const enc::RealJordan& j) {
                   t.kind = TunableEncoding::Kind::real_jordan;
                   t.gamma = j.gamma;
                   t.bounded_tau = j.bounded_tau;
                   t.eta = 1.0 / j.L;
                 },
                 [](const enc::Alibi&) {},
                 [](const enc::Poly&) {},
                 [](const enc::Nope&) {},
                 [](const enc::DirectSum&) {},
                 [](const enc::Nd&) {},
                 [](const enc::Sinusoidal&) {},
             },
             e.value);
  std::vector<std::string> allowed;  // the family's free names, for messages
  for (const auto name : family_info(e).tunable) {
    if (name == "factor" && !has_factor) continue;
    if (name == "base" && !no_base.empty()) continue;
    if (name == "scale") {
      if (scale) allowed.push_back(scale->name);
    } else {
      allowed.emplace_back(name);
    }
  }
  if (allowed.empty()) {
    std::vector<std::string_view> tunable;
    for (const auto* info : family_infos())
      if (!info->tunable.empty()) tunable.push_back(info->name);
    throw_bad_value(where, "--encoding", "'" + spelling(e) + "'",
                    fmt::format("one of {}: the families with tunable parameters ({} has none)",
                                fmt::join(tunable, ", "), family));
  }
  if (free.empty()) throw_bad_value(where, "--free", "''", "at least one of " + fmt::format("{}", fmt::join(allowed, ", ")));
  for (std::size_t i = 0; i < free.size(); ++i) {
    if (std::find(allowed.begin(), allowed.end(), free[i]) == allowed.end())
      throw_bad_value(where, "--free", "'" + free[i] + "'",
                      fmt::format("a parameter of {}: one of {}{}", family, fmt::join(allowed, ", "),
                                  free[i] == "base" && !no_base.empty() ? " (" + no_base + ")" : ""));
    if (std::find(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(i), free[i]) !=
        free.begin() + static_cast<std::ptrdiff_t>(i))
      throw_bad_value(where, "--free", "'" + free[i] + "'", "named once");
  }
  auto is_free = [&](std::string_view n) { return std::find(free.begin(), free.end(), n) != free.end(); };
  const bool scale_free = scale && is_free(scale->name);
  const int movers = int{is_free("theta")} + int{is_free("factor")} + int{is_free("base")} + int{scale_free};
  if (movers > 1)
    throw_bad_value(where, "--free", fmt::format("'{}'", fmt::join(free, ",")),
                    "one of theta and the parameters that move every frequency (base, factor, a spectral scale)");
  if (is_free("eta") && !t.bounded_tau)
    throw_bad_value(where, "--free", "'eta'",
                    "used with tau=bounded: with raw shear time that = eta d, and the linear weights absorb eta");

  if (t.kind != TunableEncoding::Kind::real_jordan) {
    const auto table = frequencies(e);
    if (table.theta.cols() != 1)
      throw_bad_value(where, "--encoding", "'" + spelling(e) + "'", "an encoding of 1-D lags");
    t.theta = table.theta.col(0);
  }

  std::vector<double> start, lower, upper;
  auto add = [&](std::string name, double v, double lo, double hi) {
    t.names.push_back(std::move(name));
    start.push_back(v);
    lower.push_back(lo);
    upper.push_back(hi);
    return static_cast<int>(start.size()) - 1;
  };
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (const auto& name : free) {
    if (name == "theta") {
      t.freq_map = TunableEncoding::FreqMap::each;
      for (Eigen::Index k = 0; k < t.theta.size(); ++k) {
        if (!(t.theta[k] < kThetaUpper))
          throw_bad_value(where, "--encoding", "'" + spelling(e) + "'",
                          fmt::format("frequencies below pi to tune theta on integer lags (theta_{} = {})", k,
                                      format_number(t.theta[k])));
        const int at = add(fmt::format("theta_{}", k), t.theta[k], kThetaLower, kThetaUpper);
        if (k == 0) t.theta_at = at;
      }
    } else if (name == "gamma") {
      t.gamma_at = add("gamma", t.gamma, 0.0, inf);
    } else if (name == "eta") {
      t.eta_at = add("eta", t.eta, 1e-12 * t.eta, inf);
    } else if (name == "c") {
      t.c_at = add("c", t.c, 0.0, inf);
    } else if (name == "factor") {
      // Scheme frequencies at s0 and 2 s0 give the map's coefficients exactly where it is affine in 1/s
      // (linear, yarn, llama3: their ramps and wavelength bands do not depend on s) or a power of s (ntk).
      Encoding probe = e;
      Scaling& sc = schedule_of(probe)->scaling;
      const double s0 = *scheme_factor(sc);
      *scheme_factor(sc) = 2 * s0;
      const Eigen::VectorXd theta1 = frequencies(probe).theta.col(0);
      const bool ntk = std::holds_alternative<scaling::Ntk>(sc);
      if (ntk) {
        t.freq_map = TunableEncoding::FreqMap::power;
        t.freq_b = (theta1.array() / t.theta.array()).log() / std::log(2.0);
        t.freq_a = t.theta.array() / Eigen::pow(s0, t.freq_b.array());
      } else {
        t.freq_map = TunableEncoding::FreqMap::inverse_affine;
        t.freq_b = (t.theta - theta1) / (1 / s0 - 1 / (2 * s0));
        t.freq_a = t.theta - t.freq_b / s0;
      }
      t.factor_at = add("factor", s0, std::min(1.0, s0), std::max(1e9, 2 * s0));  // the start is always feasible
    } else if (name == "base") {
      // theta_k = a_k B^{b_k}: b_k from the frequencies at B0 and 2 B0 (-2k/r for every scheme allowed above).
      Encoding probe = e;
      double& base = std::get<Geometric>(schedule_of(probe)->source).base;
      const double b0 = base;
      base = 2 * b0;
      const Eigen::VectorXd theta1 = frequencies(probe).theta.col(0);
      t.freq_map = TunableEncoding::FreqMap::power;
      t.freq_b = (theta1.array() / t.theta.array()).log() / std::log(2.0);
      t.freq_a = t.theta.array() / Eigen::pow(b0, t.freq_b.array());
      // B > 1 keeps every theta_k <= theta_0 (a scheme needs it); the start is always feasible.
      t.factor_at = add("base", b0, std::min(b0, 1 + 1e-9), std::max(1e12, 1e3 * b0));
    } else if (scale && name == scale->name) {
      t.freq_map = scale->inverse ? TunableEncoding::FreqMap::inverse_scale : TunableEncoding::FreqMap::scale;
      t.freq_a = scale->inverse ? Eigen::VectorXd(t.theta * scale->value) : Eigen::VectorXd(t.theta / scale->value);
      t.factor_at = add(scale->name, scale->value, scale->value * 1e-6, scale->value * 1e6);
    }
  }
  t.start = Eigen::Map<Eigen::VectorXd>(start.data(), static_cast<Eigen::Index>(start.size()));
  t.lower = Eigen::Map<Eigen::VectorXd>(lower.data(), static_cast<Eigen::Index>(lower.size()));
  t.upper = Eigen::Map<Eigen::VectorXd>(upper.data(), static_cast<Eigen::Index>(upper.size()));
  return t;
}

Encoding tuned_encoding(const TunableEncoding& t, const Eigen::VectorXd& p) {
  Encoding out = t.untuned;
  const auto v = tunable_values<double>(t, p.data());
  if (t.freq_map == TunableEncoding::FreqMap::each) {
    ExplicitFrequencies list;
    list.values = v.theta;
    FrequencySchedule schedule{std::move(list), scaling::None{}};
    if (std::holds_alternative<enc::RfRope>(out.value)) return Encoding{enc::Rope{std::move(schedule)}};
    *schedule_of(out) = std::move(schedule);
  }
  if (t.factor_at >= 0) {
    if (auto* r = std::get_if<enc::RfRope>(&out.value))
      r->freqs.spectrum = with_scale(r->freqs.spectrum, p[t.factor_at]);
    else if (t.names[static_cast<std::size_t>(t.factor_at)] == "base")
      std::get<Geometric>(schedule_of(out)->source).base = p[t.factor_at];
    else
      *scheme_factor(schedule_of(out)->scaling) = p[t.factor_at];
  }
  std::visit(Overloaded{
                 [&](enc::Damped& d) { d.gamma = v.gamma; },
                 [&](enc::Jordan& j) {
                   j.gamma = v.gamma;
                   if (t.eta_at >= 0) j.eta = v.eta;
                 },
                 [&](enc::JordanScaled& j) { j.c = v.c; },
                 [&](enc::RealJordan& j) { j.gamma = v.gamma; },
                 [&](enc::Rope&) {},  // theta and factor: the schedule above
                 [&](enc::RopeMatched&) {},
                 [&](enc::Xpos&) {},
                 [&](enc::RfRope&) {},
                 [&](enc::Alibi&) {},
                 [&](enc::Poly&) {},
                 [&](enc::Nope&) {},
                 [&](enc::DirectSum&) {},
                 [&](enc::Nd&) {},
                 [&](enc::Sinusoidal&) {},
             },
             out.value);
  return out;
}

}  // namespace ropekit
