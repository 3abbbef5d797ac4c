#include "ropekit/precision/dtype.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/no_fp_contract.hpp"

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

namespace {

// 2^k for k in the normal range of double, built from its bits (exact, no libm call).
double pow2(int k) { return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52); }

}  // namespace

double round_to(Dtype d, double x) {
  // binary32: the hardware conversion is IEEE's (round to nearest even, subnormals, overflow to inf).
  if (d == Dtype::fp32) return static_cast<double>(static_cast<float>(x));
  if (!std::isfinite(x) || x == 0) return x;
  const DtypeInfo info = dtype_info(d);
  const auto biased = static_cast<int>(std::bit_cast<std::uint64_t>(x) >> 52 & 0x7ff);
  if (biased == 0) return std::copysign(0.0, x);  // a subnormal double: far below half of every dtype's quantum
  const int lead = biased - 1023;  // |x| in [2^lead, 2^(lead+1))
  // The quantum: 2^lead / 2^(precision-1) for a normal result, never below the subnormal quantum.
  const int q = std::max(lead + 1 - info.precision, info.min_exponent - (info.precision - 1));
  if (lead - q > 52) return x;  // cannot happen for these dtypes (precision <= 24); kept for safety
  // x / 2^q has at most `precision` integer bits: adding and subtracting 1.5 2^52 rounds it to an integer, ties to
  // even (the default rounding mode; no_fp_contract keeps the two operations separate).
  constexpr double kMagic = 6755399441055744.0;  // 1.5 2^52
  const double scaled = x * pow2(-q);
  const double integer = scaled >= 0 ? (scaled + kMagic) - kMagic : -((-scaled + kMagic) - kMagic);
  const double r = integer * pow2(q);
  const double max_finite = (2 - pow2(1 - info.precision)) * pow2(info.max_exponent);
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
