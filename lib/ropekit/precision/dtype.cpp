#include "ropekit/precision/dtype.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"

namespace ropekit {

DtypeInfo dtype_info(Dtype d) {
  switch (d) {
    case Dtype::fp32: return {24, -126, 127};
    case Dtype::tf32: return {11, -126, 127};
    case Dtype::bf16: return {8, -126, 127};
    case Dtype::fp16: return {11, -14, 15};
  }
  throw std::logic_error("dtype_info: unknown dtype");
}

std::string_view dtype_name(Dtype d) {
  switch (d) {
    case Dtype::fp32: return "fp32";
    case Dtype::tf32: return "tf32";
    case Dtype::bf16: return "bf16";
    case Dtype::fp16: return "fp16";
  }
  throw std::logic_error("dtype_name: unknown dtype");
}

Dtype parse_dtype(std::string_view text, const Where& where, std::string_view what) {
  if (text == "fp32" || text == "float32") return Dtype::fp32;
  if (text == "tf32") return Dtype::tf32;
  if (text == "bf16" || text == "bfloat16") return Dtype::bf16;
  if (text == "fp16" || text == "float16" || text == "half") return Dtype::fp16;
  throw_bad_value(where, what, quote(std::string(text)), "one of fp32, tf32, bf16, fp16");
}

double round_to(Dtype d, double x) {
  if (!std::isfinite(x) || x == 0) return x;
  const DtypeInfo info = dtype_info(d);
  int e = 0;
  (void)std::frexp(x, &e);  // |x| = m 2^e, m in [0.5, 1): the leading bit is 2^(e-1)
  // The quantum: 2^(e-1) / 2^(precision-1) for a normal result, never below the subnormal quantum.
  const int q = std::max(e - info.precision, info.min_exponent - (info.precision - 1));
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, -q)), q);  // nearbyint: ties to even (default mode)
  const double max_finite = std::ldexp(2 - std::ldexp(1.0, 1 - info.precision), info.max_exponent);
  if (std::abs(r) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return r;
}

std::uint32_t bits_of(Dtype d, double x) {
  const double r = round_to(d, x);
  if (d != Dtype::fp16) {
    const auto b = std::bit_cast<std::uint32_t>(static_cast<float>(r));  // exact: r is a float
    return d == Dtype::bf16 ? b >> 16 : b;
  }
  // binary16: sign, 5 exponent bits (bias 15), 10 fraction bits.
  const std::uint32_t sign = std::signbit(r) ? 0x8000u : 0u;
  if (std::isnan(r)) return 0x7e00u;
  if (std::isinf(r)) return sign | 0x7c00u;
  const double a = std::abs(r);
  if (a == 0) return sign;
  int e = 0;
  (void)std::frexp(a, &e);
  if (e - 1 < -14) return sign | static_cast<std::uint32_t>(std::ldexp(a, 24));  // subnormal: a / 2^-24
  const auto fraction = static_cast<std::uint32_t>(std::ldexp(a, 11 - e) - 1024);
  return sign | static_cast<std::uint32_t>(e - 1 + 15) << 10 | fraction;
}

double from_bits(Dtype d, std::uint32_t bits) {
  if (d == Dtype::fp32 || d == Dtype::tf32) return std::bit_cast<float>(bits);
  if (d == Dtype::bf16) return std::bit_cast<float>(bits << 16);
  const double sign = bits & 0x8000u ? -1.0 : 1.0;
  const int exponent = static_cast<int>(bits >> 10 & 0x1fu);
  const double fraction = bits & 0x3ffu;
  if (exponent == 0x1f) return fraction != 0 ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(fraction, -24);
  return sign * std::ldexp(1024 + fraction, exponent - 25);
}

}  // namespace ropekit
