#include "targets/target.hpp"

#include <cmath>
#include <regex>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/finite.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/core/vecmath.hpp"
#include "ropekit/core/overloaded.hpp"

namespace ropekit {

namespace {

constexpr int kMaxJet = 64;

std::string known_targets() {
  return "phase, linear, mixed, phase_drift, seasonal_trend, damped_wave, rhythm_envelope, motif_spacing, "
         "high_jet_r<r>, scaled_high_jet_r<r> (r >= 1); or a readable spelling such as scaled-high-jet:r=2,c=0.1 "
         "(see `ropekit list targets`)";
}

[[noreturn]] void unknown(std::string_view name) {
  throw InputError(fmt::format("target = {} (must be one of {})", quote(name), known_targets()));
}

int checked_jet(std::string_view name, std::int64_t r) {
  if (r < 1 || r > kMaxJet)
    throw_bad_value(fmt::format("target '{}'", name), "r", std::to_string(r),
                    fmt::format("an integer in [1, {}]", kMaxJet));
  return static_cast<int>(r);
}

Target parse_reference(const std::string& name) {
  using namespace target;
  if (name == "phase") return Phase{};
  if (name == "linear") return Linear{};
  if (name == "mixed") return Mixed{};
  if (name == "phase_drift") return PhaseDrift{};
  if (name == "seasonal_trend") return SeasonalTrend{};
  if (name == "damped_wave") return DampedWave{};
  if (name == "rhythm_envelope") return RhythmEnvelope{};
  if (name == "motif_spacing") return MotifSpacing{};
  static const std::regex jet("(scaled_)?high_jet_r([0-9]+)");
  std::smatch m;
  if (std::regex_match(name, m, jet)) {
    auto r = parse_int(m[2].str());
    const int order = checked_jet(name, r.value_or(-1));
    if (m[1].matched) return ScaledHighJet{order, {}, {}};
    return HighJet{order, {}};
  }
  unknown(name);
}

std::optional<int> take_index(Spelling& s, std::string_view key) {
  auto v = s.take_int(key);
  if (!v) return std::nullopt;
  if (*v < 0 || *v > 1'000'000)
    throw_bad_value(fmt::format("target '{}'", s.text()), key, std::to_string(*v), "an integer >= 0");
  return static_cast<int>(*v);
}

Target parse_readable(std::string_view text) {
  using namespace target;
  auto s = Spelling::parse(text, "target");
  const auto& f = s.family();
  const std::string where = fmt::format("target '{}'", s.text());
  Target out;
  std::string keys = "idx";
  if (f == "phase") out = Phase{take_index(s, "idx")};
  else if (f == "linear") out = Linear{}, keys = "";
  else if (f == "mixed") out = Mixed{take_index(s, "idx")};
  else if (f == "phase-drift") {
    auto idx = take_index(s, "idx");
    out = PhaseDrift{idx, s.take_double("eps")}, keys = "idx, eps";
  } else if (f == "seasonal-trend") out = SeasonalTrend{take_index(s, "idx")};
  else if (f == "damped-wave") {
    auto idx = take_index(s, "idx");
    auto g = s.take_double("gamma");
    if (g) check_nonnegative(where, "gamma", *g);
    out = DampedWave{idx, g}, keys = "idx, gamma";
  } else if (f == "rhythm-envelope") {
    auto idx = take_index(s, "idx");
    out = RhythmEnvelope{idx, take_index(s, "idx2")}, keys = "idx, idx2";
  } else if (f == "motif-spacing") out = MotifSpacing{take_index(s, "idx2")}, keys = "idx2";
  else if (f == "high-jet" || f == "scaled-high-jet") {
    auto r = s.take_int("r");
    if (!r) throw InputError(fmt::format("{}: parameter r missing (write {}:r=<r>, r >= 1)", where, f));
    const int order = checked_jet(text, *r);
    auto idx = take_index(s, "idx");
    if (f == "high-jet") {
      out = HighJet{order, idx}, keys = "r, idx";
    } else {
      auto c = s.take_double("c");
      if (c) check_nonnegative(where, "c", *c);
      out = ScaledHighJet{order, c, idx}, keys = "r, c, idx";
    }
  } else {
    unknown(text);
  }
  s.finish(keys);
  return out;
}

}  // namespace

void TargetParams::validate(const Where& where) const {
  check_positive(where, "theta", base);  // named as users type it: position.theta
  if (head_dim <= 0 || head_dim % 2 != 0)
    throw_bad_value(where, "head_dim", std::to_string(head_dim), "a positive even integer");
  check_at_least(where, "train_context", train_context, 1);
  check_nonnegative(where, "gamma", gamma);
  if (freq_index) check_at_least(where, "freq_index", *freq_index, 0);
  if (second_freq_index) check_at_least(where, "second_freq_index", *second_freq_index, 0);
  check_nonnegative(where, "scaled_c", scaled_c);
  check_finite(where, "drift_eps", drift_eps);
}

Target parse_target(std::string_view name) {
  std::string n(name);
  if (n.empty()) throw InputError("target = '' (must be one of " + known_targets() + ")");
  if (n.find_first_of(":-=") != std::string::npos) return parse_readable(n);
  // std::regex recurses per character: a name of 1e5 characters would overflow the stack.
  if (n.size() > 128)
    throw_bad_value("target", "name", fmt::format("{} characters", n.size()),
                    "at most 128 characters (known: " + known_targets() + ")");
  return parse_reference(n);
}

namespace {

struct Needs {
  std::optional<int> idx, idx2;
  bool uses_idx = false, uses_idx2 = false;
};

Needs needs(const Target& t) {
  using namespace target;
  return std::visit(Overloaded{
                        [](const Phase& v) { return Needs{v.idx, {}, true, false}; },
                        [](const Linear&) { return Needs{}; },
                        [](const Mixed& v) { return Needs{v.idx, {}, true, false}; },
                        [](const PhaseDrift& v) { return Needs{v.idx, {}, true, false}; },
                        [](const SeasonalTrend& v) { return Needs{v.idx, {}, true, false}; },
                        [](const DampedWave& v) { return Needs{v.idx, {}, true, false}; },
                        [](const RhythmEnvelope& v) { return Needs{v.idx, v.idx2, true, true}; },
                        [](const MotifSpacing& v) { return Needs{{}, v.idx2, false, true}; },
                        [](const HighJet& v) { return Needs{v.idx, {}, true, false}; },
                        [](const ScaledHighJet& v) { return Needs{v.idx, {}, true, false}; },
                    },
                    t);
}

}  // namespace

void check_target_params(const Target& t, const TargetParams& p, std::string_view name) {
  auto n = needs(t);
  if (n.uses_idx && !n.idx && !p.freq_index)
    throw InputError(fmt::format("target '{}' needs target_freq_index (set it in the config, or write idx=)", name));
  if (n.uses_idx2 && !n.idx2 && !p.second_freq_index)
    throw InputError(fmt::format("target '{}' needs second_freq_index (set it in the config, or write idx2=)", name));
}

namespace {

// ln(DBL_MAX) = 709.78, less a margin of ln 16 for the factors multiplying x^r (at most 1.2 in size).
constexpr double kLogMax = 709.78 - 2.78;

struct Frequencies {
  double omega, omega2;
};
Frequencies target_frequencies(const Target& t, const TargetParams& p) {
  const auto n = needs(t);
  return {geometric_frequency(p.base, n.idx.value_or(p.freq_index.value_or(0)), p.head_dim),
          geometric_frequency(p.base, n.idx2.value_or(p.second_freq_index.value_or(0)), p.head_dim)};
}

}  // namespace

void check_target_range(const Target& t, const TargetParams& p, double max_lag, std::string_view name) {
  const std::string where = fmt::format("target '{}'", name);
  const double L = std::max(p.train_context, 1);
  const double x = max_lag / L;
  using namespace target;
  // Phases omega d (omega (1 + eps) d for the drift) must be finite numbers for cos and sin.
  const Frequencies w = target_frequencies(t, p);
  const double limit = 0x1p1023 / max_lag;  // largest omega with omega d finite
  if (const auto* v = std::get_if<PhaseDrift>(&t)) {
    const double eps = v->eps.value_or(p.drift_eps);
    if (!(w.omega * std::fabs(1.0 + eps) <= limit))
      throw_bad_value(where, "drift_relative_eps", format_number(eps),
                      fmt::format("such that |1 + eps| <= {}: the phase omega (1 + eps) d must stay finite for d <= {} "
                                  "(omega = {})",
                                  format_number(limit / w.omega), format_number(max_lag), format_number(w.omega)));
  } else if (!(std::max(w.omega, w.omega2) <= limit)) {
    throw_bad_value(where, "theta", format_number(p.base),
                    fmt::format("such that omega = theta^(-2 idx/h) <= {}: the phase omega d must stay finite for "
                                "d <= {} (omega = {})",
                                format_number(limit), format_number(max_lag), format_number(std::max(w.omega, w.omega2))));
  }
  // Powers x^r, times e^{-c x} for the scaled jet: ln y = r ln x - c x, increasing up to x = r / c.
  auto check_power = [&](int r, double c) {
    auto log_y = [&](double u) { return r * std::log(u) - c * u; };
    const double x_peak = c > 0 ? std::min(x, r / c) : x;
    if (log_y(x_peak) <= kLogMax) return;
    double lo = 0, hi = x_peak;  // the first x where it leaves float64
    for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; ++it) {
      const double mid = 0.5 * (lo + hi);
      (log_y(mid) <= kLogMax ? lo : hi) = mid;
    }
    throw_bad_value(where, "lag", format_number(max_lag),
                    fmt::format("at most {}: beyond it x^{}{} (x = d/L, L = {}) exceeds the float64 range{}",
                                format_number(lo * L), r, c > 0 ? fmt::format(" e^(-{} x)", format_number(c)) : "",
                                L, c > 0 ? fmt::format(" (it peaks at 10^{:.0f})", log_y(x_peak) / std::log(10.0)) : ""));
  };
  if (const auto* v = std::get_if<HighJet>(&t)) check_power(v->r, 0);
  if (const auto* v = std::get_if<ScaledHighJet>(&t)) check_power(v->r, v->c.value_or(p.scaled_c));
}

namespace {
// x^r for an integer r >= 1 by repeated squaring: at most 2 floor(log2 r) roundings (r = 3: 2, r = 64: 6 and one
// more for the product), far below the 1e-14 the targets are checked to. Eigen's array pow took 20 ns a value,
// half of a structured suite's target time.
Eigen::ArrayXd int_power(const Eigen::ArrayXd& x, int r) {
  Eigen::ArrayXd result, base = x;  // result: the product of the powers x^(2^i) for the set bits i of r seen so far
  for (unsigned e = static_cast<unsigned>(r);;) {
    if (e & 1) result = result.size() == 0 ? base : Eigen::ArrayXd(result * base);
    if ((e >>= 1) == 0) return result;
    base = base.square();
  }
}
}  // namespace

Eigen::VectorXd target_values(const Target& t, const TargetParams& p, const Eigen::VectorXd& lags) {
  p.validate();
  check_target_params(t, p, "target");
  for (Eigen::Index i = 0; i < lags.size(); ++i)
    if (!std::isfinite(lags[i]))
      throw_bad_value("target evaluation", fmt::format("lag[{}]", i), format_number(lags[i]), "finite");
  if (lags.size() > 0) check_target_range(t, p, lags.cwiseAbs().maxCoeff(), "target");
  const Frequencies w = target_frequencies(t, p);
  const double omega = w.omega, omega2 = w.omega2;  // plain variables: lambdas below capture them (clang 14)
  const Eigen::ArrayXd d = lags.array();
  const Eigen::ArrayXd x = d / static_cast<double>(std::max(p.train_context, 1));
  // Vectorised sincos (SLEEF, 1 ulp): Eigen's double-precision .cos() is scalar.
  auto trig = [&](double w, bool want_sin) -> Eigen::ArrayXd {
    const Eigen::ArrayXd a = w * d;
    Eigen::ArrayXd s(a.size()), c(a.size());
    sincos_array(a.data(), s.data(), c.data(), static_cast<std::size_t>(a.size()));
    return want_sin ? s : c;
  };
  auto cos_w = [&](double w) { return trig(w, false); };
  auto sin_w = [&](double w) { return trig(w, true); };
  using namespace target;
  Eigen::ArrayXd y = std::visit(
      Overloaded{
          [&](const Phase&) -> Eigen::ArrayXd { return cos_w(omega); },
          [&](const Linear&) -> Eigen::ArrayXd { return -x; },
          [&](const Mixed&) -> Eigen::ArrayXd { return x * cos_w(omega); },
          [&](const PhaseDrift& v) -> Eigen::ArrayXd { return cos_w(omega * (1.0 + v.eps.value_or(p.drift_eps))); },
          [&](const SeasonalTrend&) -> Eigen::ArrayXd {
            return (0.35 + 0.9 * x) * cos_w(omega) + 0.25 * sin_w(omega);
          },
          [&](const DampedWave& v) -> Eigen::ArrayXd {
            return (-v.gamma.value_or(p.gamma) * d).exp() * (cos_w(omega) + 0.75 * x * sin_w(omega));
          },
          [&](const RhythmEnvelope&) -> Eigen::ArrayXd {
            return (0.25 + 0.85 * x) * (0.65 * cos_w(omega) + 0.35 * sin_w(omega2));
          },
          [&](const MotifSpacing&) -> Eigen::ArrayXd {
            return (x / (1.0 + 0.25 * x)) * (0.7 * cos_w(omega2) - 0.3 * sin_w(omega2));
          },
          [&](const HighJet& v) -> Eigen::ArrayXd { return int_power(x, v.r) * cos_w(omega); },
          [&](const ScaledHighJet& v) -> Eigen::ArrayXd {
            const double c = v.c.value_or(p.scaled_c);
            Eigen::ArrayXd envelope = int_power(x, v.r) * (-c * x).exp();
            // Where e^{-c x} underflows or x^r overflows, x^r e^{-c x} may still be a normal number:
            // form it in logarithms there (relative error about (r |ln x| + c x) eps). r ln x > 650 is
            // x > e^{650/r}: one exp for the threshold instead of a log per lag.
            const double x_big = std::exp(650.0 / v.r);
            for (Eigen::Index i = 0; i < x.size(); ++i)
              if (c * x[i] > 650.0 || x[i] > x_big) envelope[i] = std::exp(v.r * std::log(x[i]) - c * x[i]);
            return envelope * cos_w(omega);
          },
      },
      t);
  if (!all_finite(y)) throw InputError("target evaluation: a value is not finite (see check_target_range)");
  return y.matrix();
}

const std::vector<std::string>& toy_targets() {
  static const std::vector<std::string> v = {"phase", "linear", "mixed"};
  return v;
}

const std::vector<std::string>& structured_targets() {
  static const std::vector<std::string> v = {"phase_drift",        "seasonal_trend",    "damped_wave",
                                             "rhythm_envelope",    "motif_spacing",     "high_jet_r1",
                                             "high_jet_r2",        "high_jet_r3",       "scaled_high_jet_r2",
                                             "scaled_high_jet_r3"};
  return v;
}

const std::vector<std::pair<std::string, std::string>>& target_families() {
  static const std::vector<std::pair<std::string, std::string>> v = {
      {"phase | phase:idx=<i>", "cos(omega d)"},
      {"linear", "-d/L"},
      {"mixed | mixed:idx=<i>", "(d/L) cos(omega d)"},
      {"phase_drift | phase-drift:idx=<i>,eps=<e>", "cos(omega (1+eps) d)"},
      {"seasonal_trend | seasonal-trend:idx=<i>", "(0.35 + 0.9x) cos(omega d) + 0.25 sin(omega d)"},
      {"damped_wave | damped-wave:idx=<i>,gamma=<g>", "e^{-gamma d} (cos(omega d) + 0.75 x sin(omega d))"},
      {"rhythm_envelope | rhythm-envelope:idx=<i>,idx2=<j>",
       "(0.25 + 0.85x)(0.65 cos(omega d) + 0.35 sin(omega2 d))"},
      {"motif_spacing | motif-spacing:idx2=<j>", "(x/(1 + 0.25x))(0.7 cos(omega2 d) - 0.3 sin(omega2 d))"},
      {"high_jet_r<r> | high-jet:r=<r>,idx=<i>", "x^r cos(omega d), r >= 1"},
      {"scaled_high_jet_r<r> | scaled-high-jet:r=<r>,c=<c>,idx=<i>", "x^r e^{-c x} cos(omega d), r >= 1"},
  };
  return v;
}

}  // namespace ropekit
