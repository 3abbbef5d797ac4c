#include "ropekit/spectral/spectrum.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/spelling.hpp"

// Every visit below forwards to the family's own overload (spectral/<family>.hpp), qualified so that no conversion
// back to Spectrum can be picked: each alternative must model SpectralFamily (checked in spectrum.hpp), so a family
// without the overload does not compile; there is no default branch.

namespace ropekit {

namespace {

void check_lag(const Spectrum& s, std::span<const double> lag) {
  if (static_cast<int>(lag.size()) != dims(s))
    throw_bad_value("spectral kernel", "lag dimension", std::to_string(lag.size()),
                    fmt::format("k = {}, the spectrum's dims", dims(s)));
  for (double v : lag) check_finite("spectral kernel", "lag", v);
}

spectral::PhiPsiVar values_at(const Spectrum& s, std::span<const double> lag, bool with_var) {
  return std::visit([&]<spectral::SpectralFamily F>(const F& f) { return spectral::values_at(f, lag, with_var); }, s);
}

// The family whose info.name is `name` among the alternatives I.. (keyed families only), default-constructed.
template <std::size_t I = 0>
std::optional<Spectrum> keyed_family(std::string_view name) {
  if constexpr (I == std::variant_size_v<Spectrum>) {
    return std::nullopt;
  } else {
    using F = std::variant_alternative_t<I, Spectrum>;
    if (F::info.keyed && F::info.name == name) return Spectrum(F{});
    return keyed_family<I + 1>(name);
  }
}

template <std::size_t... I>
std::vector<spectral::FamilyInfo> infos(std::index_sequence<I...>) {
  return {std::variant_alternative_t<I, Spectrum>::info...};
}
const std::vector<spectral::FamilyInfo>& all_infos() {
  static const auto v = infos(std::make_index_sequence<std::variant_size_v<Spectrum>>());
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Identity, spelling, validation

int dims(const Spectrum& s) {
  return std::visit([]<spectral::SpectralFamily F>(const F& f) { return spectral::dims(f); }, s);
}

std::string family_name(const Spectrum& s) {
  return std::visit([]<spectral::SpectralFamily F>(const F&) { return std::string(F::info.name); }, s);
}

std::string spelling(const Spectrum& s) {
  return std::visit([]<spectral::SpectralFamily F>(const F& f) { return spectral::spelling(f); }, s);
}

void validate(const Spectrum& s, std::string_view where) {
  std::visit([&]<spectral::SpectralFamily F>(const F& f) { spectral::validate(f, where); }, s);
}

void check_samplable(const Spectrum& s, std::string_view where) {
  validate(s, where);
  std::visit([&]<spectral::SpectralFamily F>(const F& f) { spectral::check_sampling(f, where); }, s);
}

void check_rf_lag_range(const Where& where, std::span<const double> lags, std::string_view for_what) {
  for (double v : lags)
    if (!(std::fabs(v) <= kMaxRfLag))
      throw_bad_value(where, "lags", format_number(v),
                      fmt::format("at most {} in magnitude{}: Phi2 is evaluated at 2 Dp", format_number(kMaxRfLag),
                                  for_what));
}

Spectrum parse_spectrum(std::string_view text) {
  const std::string_view trimmed = text.substr(std::min(text.find_first_not_of(" \t"), text.size()));
  if (trimmed.rfind("file:", 0) == 0) {
    std::string path(trimmed.substr(5));
    if (path.rfind("path=", 0) == 0) path = path.substr(5);
    if (path.empty()) throw InputError(fmt::format("spectrum {}: no file name (spelling: file:PATH)", quote(text)));
    return read_frequency_file(path);
  }
  Spelling sp = Spelling::parse(text, "spectrum");
  const std::string where = fmt::format("spectrum {}", quote(sp.text()));
  std::optional<Spectrum> s = keyed_family(sp.family());
  if (!s) {
    std::vector<std::string_view> known;
    for (const auto& info : all_infos()) known.push_back(info.known);
    throw InputError(fmt::format("spectrum = {} (must be one of {})", quote(sp.family()), fmt::join(known, ", ")));
  }
  std::visit([&]<spectral::SpectralFamily F>(F& f) { f = spectral::parse_family(sp, where, static_cast<const F*>(nullptr)); },
             *s);
  validate(*s, where);
  return *s;
}

// ---------------------------------------------------------------------------------------------
// Kernels

double kernel_values_work(const Spectrum& s) {
  return std::visit([]<spectral::SpectralFamily F>(const F& f) { return spectral::kernel_work(f); }, s);
}

double one_minus_phi(const Spectrum& s, std::span<const double> lag) {
  check_lag(s, lag);
  return values_at(s, lag, false).psi;
}

double phi(const Spectrum& s, std::span<const double> lag) {
  check_lag(s, lag);
  return values_at(s, lag, false).phi;
}

KernelValues kernel_values(const Spectrum& s, std::span<const double> lag) {
  check_lag(s, lag);
  std::vector<double> lag2(lag.begin(), lag.end());
  for (double& v : lag2) {
    if (std::isinf(2 * v))
      throw_bad_value(fmt::format("spectrum '{}'", spelling(s)), "lag", format_number(v),
                      "at most 8.98e307 in magnitude: Phi2 is evaluated at 2 Dp");
    v *= 2;
  }
  const spectral::PhiPsiVar at1 = values_at(s, lag, true), at2 = values_at(s, lag2, false);
  KernelValues k;
  k.phi = at1.phi;
  k.psi = at1.psi;
  k.phi2 = at2.phi;
  k.psi2 = at2.psi;
  // Prop 4: Var[cos u] = (1 + Phi2)/2 - Phi^2 (per family without cancellation); Var[sin u] = (1 - Phi2)/2 = psi2/2.
  k.var_cos = at1.var_cos;
  k.var_sin = 0.5 * k.psi2;
  return k;
}

// ---------------------------------------------------------------------------------------------
// Sampling, quantiles, densities

void sample(const Spectrum& s, Rng& rng, std::size_t n, double* w) {
  std::visit([&]<spectral::SpectralFamily F>(const F& f) { spectral::sample(f, rng, n, w); }, s);
}

bool has_quantile(const Spectrum& s) { return dims(s) == 1; }

QuantileFunction make_quantile(const Spectrum& s) {
  if (dims(s) != 1)
    throw_bad_value("spectral quantile", "dims", std::to_string(dims(s)), "1 (quantiles, and stratified sampling, are for 1-D densities)");
  return std::visit([]<spectral::SpectralFamily F>(const F& f) { return spectral::quantile_function(f); }, s);
}

double quantile(const Spectrum& s, double u) { return make_quantile(s)(u); }

double density(const Spectrum& s, std::span<const double> w) {
  if (static_cast<int>(w.size()) != dims(s))
    throw_bad_value("spectral density", "w dimension", std::to_string(w.size()), fmt::format("k = {}", dims(s)));
  return std::visit([&]<spectral::SpectralFamily F>(const F& f) { return spectral::pdf(f, w); }, s);
}

const std::vector<SpectrumFamilyInfo>& spectrum_families() {
  static const std::vector<SpectrumFamilyInfo> families = [] {
    std::vector<SpectrumFamilyInfo> out;
    for (const auto& info : all_infos())
      out.push_back({std::string(info.spelling), std::string(info.frequencies), std::string(info.kernel)});
    return out;
  }();
  return families;
}

// ---------------------------------------------------------------------------------------------
// Scales and fitting

std::optional<spectral::ScaleParameter> spectrum_scale(const Spectrum& s) {
  return std::visit([]<spectral::SpectralFamily F>(const F& f) { return spectral::scale_parameter(f); }, s);
}

Spectrum spectrum_with_scale(Spectrum s, double v) {
  std::visit([&]<spectral::SpectralFamily F>(F& f) { spectral::set_scale(f, v); }, s);
  return s;
}

std::optional<double> spectrum_scale_derivative(const Spectrum& s, double x) {
  return std::visit([&]<spectral::SpectralFamily F>(const F& f) { return spectral::scale_derivative(f, x); }, s);
}

std::span<const spectral::FitKey> fit_keys(const Spectrum& s) {
  return std::visit([]<spectral::SpectralFamily F>(const F&) { return std::span<const spectral::FitKey>(F::fit_keys); }, s);
}

std::optional<Spectrum> default_spectrum(std::string_view name) { return keyed_family(name); }

std::string fitted_family_names() {
  std::vector<std::string_view> names;
  for (const auto& info : all_infos())
    if (const auto s = keyed_family(info.name); s && !fit_keys(*s).empty()) names.push_back(info.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace ropekit
