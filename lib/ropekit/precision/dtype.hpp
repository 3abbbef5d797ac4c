#pragma once
// The floating-point formats frameworks run RoPE in, and exact software rounding into them (spec precision.md
// section 1: fl_D(x), round to nearest, ties to even), independent of the host's float16 / bfloat16 support.

#include <bit>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "ropekit/core/error.hpp"

namespace ropekit {

/// fp32 (IEEE binary32, 24 significant bits), tf32 (NVIDIA TensorFloat-32: 11 significant bits, fp32's exponent
/// range), bf16 (bfloat16: fp32's top 16 bits, 8 significant bits), fp16 (IEEE binary16: 11 significant bits,
/// exponents -14..15, subnormals down to 2^-24).
enum class Dtype { fp32, tf32, bf16, fp16 };

struct DtypeInfo {
  int precision;    ///< significant bits, the leading one included
  int min_exponent;  ///< of the smallest normal number, 2^min_exponent
  int max_exponent;  ///< of the largest finite number's leading bit
};
DtypeInfo dtype_info(Dtype d);

/// "fp32", "tf32", "bf16", "fp16".
std::string_view dtype_name(Dtype d);
/// Reads "fp32" (or "float32"), "tf32", "bf16" ("bfloat16"), "fp16" ("float16", "half").
/// @throws InputError "<where>: <what> = <text> (must be one of fp32, tf32, bf16, fp16)".
Dtype parse_dtype(std::string_view text, const Where& where, std::string_view what = "dtype");

/// fl_D(x): x rounded to nearest, ties to even, into D's precision and exponent range (gradual underflow to its
/// subnormals; past the largest finite value, +-inf). Exact: x is a double, so this is the one rounding of x.
/// NaN stays NaN.
double round_to(Dtype d, double x);

/// fl_D(x) for a float32 value x, as a framework casting an fp32 tensor to D: bit operations only, so that loops of
/// it vectorise. Equals round_to(d, x) for finite x, |x| <= 65504 for fp16 (its overflow to inf is not handled here).
inline float round_from_f32(Dtype d, float x) {
  // Dropping the low k bits of binary32 to nearest, ties to even: add 2^(k-1) - 1 plus the kept last bit; a carry
  // into the exponent is the correct rounding up to the next binade.
  const auto drop = [](float v, unsigned k) {
    auto b = std::bit_cast<std::uint32_t>(v);
    b += ((1u << (k - 1)) - 1) + ((b >> k) & 1u);
    return std::bit_cast<float>(b & ~((1u << k) - 1));
  };
  switch (d) {
    case Dtype::fp32: return x;
    case Dtype::bf16: return drop(x, 16);
    case Dtype::tf32: return drop(x, 13);
    case Dtype::fp16:
      // below 2^-14, fp16's subnormals: multiples of 2^-24, the spacing of binary32 in [0.5, 1): add and take 0.75.
      if (std::abs(x) < 0x1p-14f) return std::copysign((std::abs(x) + 0.75f) - 0.75f, x);
      return drop(x, 13);
  }
  return x;
}

/// fl_D(x)'s bit pattern in D's storage: binary32 bits for fp32 and tf32 (tf32's low 13 bits are 0), the 16 bits of
/// bf16 (binary32's top half) or of binary16 for fp16.
std::uint32_t bits_of(Dtype d, double x);
/// The value of a bit pattern of D's storage (as bits_of writes it).
double from_bits(Dtype d, std::uint32_t bits);

}  // namespace ropekit
