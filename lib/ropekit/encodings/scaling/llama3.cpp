#include "ropekit/encodings/scaling/llama3.hpp"

#include <numbers>

#include "ropekit/core/no_fp_contract.hpp"  // two roundings per a * b + c, as torch and ggml

namespace ropekit::scaling {

std::vector<std::string> notes(const Llama3& l) {
  if (l.high > l.low) return {};
  return {fmt::format("llama3.high = {} is not above low = {}: accepted as transformers does (it only warns); no "
                      "frequency is blended (wavelengths above orig/low are divided by factor, the rest kept)",
                      format_number(l.high), format_number(l.low))};
}

template <class T>
std::vector<T> llama3_scaled(const std::vector<T>& inv, const Llama3& l, const Where& where) {
  const double low_wavelen = l.orig / l.low, high_wavelen = l.orig / l.high;  // Python floats
  const T two_pi = static_cast<T>(2 * std::numbers::pi);
  std::vector<T> out(inv.size());
  for (std::size_t i = 0; i < inv.size(); ++i) {
    const T wavelen = two_pi / inv[i];
    if (wavelen > static_cast<T>(low_wavelen)) {
      out[i] = inv[i] / static_cast<T>(l.factor);
    } else if (wavelen < static_cast<T>(high_wavelen)) {
      out[i] = inv[i];
    } else {
      if (l.high == l.low)  // the band is the one wavelength orig/low: HF's smooth factor is 0/0 there
        throw_bad_value(where, "llama3.high", format_number(l.high),
                        fmt::format("!= low = {} for a frequency whose wavelength is orig/low = {} (transformers' "
                                    "blend divides 0 by 0 there)",
                                    format_number(l.low), format_number(low_wavelen)));
      const T smooth = (static_cast<T>(l.orig) / wavelen - static_cast<T>(l.low)) / static_cast<T>(l.high - l.low);
      out[i] = (T(1) - smooth) * inv[i] / static_cast<T>(l.factor) + smooth * inv[i];
    }
  }
  return out;
}

template std::vector<double> llama3_scaled(const std::vector<double>&, const Llama3&, const Where&);
template std::vector<float> llama3_scaled(const std::vector<float>&, const Llama3&, const Where&);

}  // namespace ropekit::scaling
