#include "ropekit/encodings/scaling/scheme.hpp"

#include <fmt/format.h>
#include <sleef.h>

#include "ropekit/core/no_fp_contract.hpp"  // two roundings per a * b + c, as torch and ggml

namespace ropekit::scaling {

float torch_powf(float base, float exponent) { return Sleef_powf_u10(base, exponent); }

template <class T>
std::vector<T> geometric_grid(double base, int r, int count) {
  std::vector<T> out(static_cast<std::size_t>(count));
  if constexpr (std::is_same_v<T, double>) {  // float64: the library's one grid formula
    for (int i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = geometric_frequency(base, i, r);
    return out;
  }
  const T b = static_cast<T>(base), rr = static_cast<T>(r);
  for (int i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = T(1) / torch_powf(b, static_cast<T>(2 * i) / rr);
  return out;
}

template <class T>
std::vector<T> ggml_grid(double base, int r, int count) {
  std::vector<T> out(static_cast<std::size_t>(count));
  const T scale = std::pow(static_cast<T>(base), T(-2) / static_cast<T>(r));
  T theta = 1;
  for (auto& v : out) {
    v = theta;
    theta *= scale;
  }
  return out;
}

template std::vector<double> geometric_grid<double>(double, int, int);
template std::vector<float> geometric_grid<float>(double, int, int);
template std::vector<double> ggml_grid<double>(double, int, int);
template std::vector<float> ggml_grid<float>(double, int, int);

void require_r4(const Where& where, int r, int dim, std::string_view scheme) {
  if (r < 4)
    throw_bad_value(where, "dim", std::to_string(dim),
                    fmt::format("such that the rotary dims are >= 4 for scaling {} (exponent r/(r-2))", scheme));
}

void refuse_explicit(const Where& where, std::string_view scheme) {
  throw_bad_value(where, "scaling", scheme,
                  fmt::format("none, linear, llama3 or longrope for explicit frequencies ({} is defined through a base)",
                              scheme));
}

}  // namespace ropekit::scaling
