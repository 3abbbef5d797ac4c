// Exact rounding into fp32, tf32, bf16 and fp16 (precision/dtype.hpp) against independent routes: the host's float
// conversion (round to nearest even) for fp32, bf16 as float's top half rounded by integer arithmetic on its bits,
// and _Float16 where the compiler has it; the integer ranges of spec precision.md section 3.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ropekit/core/rng.hpp"
#include "ropekit/precision/dtype.hpp"

using namespace ropekit;

namespace {

// bf16 by bits: round float's 32 bits to their top 16, nearest even (the usual integer route).
double bf16_by_bits(float f) {
  std::uint32_t b = std::bit_cast<std::uint32_t>(f);
  b += 0x7fffu + (b >> 16 & 1u);
  return std::bit_cast<float>(b & 0xffff0000u);
}

// fp32 by bits, in float's normal range: round the double's 52 fraction bits to 23, nearest even (a carry into the
// exponent is the next binade, as it should be). round_to(fp32) is the hardware conversion: this is another route.
double fp32_by_bits(double x) {
  std::uint64_t b = std::bit_cast<std::uint64_t>(x);
  b += 0x0fffffffULL + (b >> 29 & 1u);
  return std::bit_cast<double>(b & ~0x1fffffffULL);
}

}  // namespace

TEST_CASE("integers: exact up to 256 (bf16), 2048 (fp16, tf32), 2^24 (fp32), and the first that is not") {
  for (const auto& [d, limit] : {std::pair{Dtype::bf16, 256.0}, std::pair{Dtype::fp16, 2048.0},
                                 std::pair{Dtype::tf32, 2048.0}, std::pair{Dtype::fp32, 16777216.0}}) {
    CAPTURE(dtype_name(d));
    for (double n : {0.0, 1.0, 3.0, limit - 1, limit}) CHECK(round_to(d, n) == n);
    CHECK(round_to(d, limit + 1) == limit);      // a tie between limit and limit + 2: the even one
    CHECK(round_to(d, limit + 3) == limit + 4);  // a tie between limit + 2 and limit + 4: limit + 4 is even
  }
  // transformers issue #48428: a TF32 matmul rounds position 2049 to 2048.
  CHECK(round_to(Dtype::tf32, 2049) == 2048);
  // gpt-neox issue #1003: emb[1857, 1] = 1857 theta_1 (theta_1 = 1e4^(-2/32)) is 1044.27 in fp32, 1045 in fp16.
  const double theta1 = std::pow(1e4, -2.0 / 32);
  CHECK(std::abs(round_to(Dtype::fp32, 1857 * round_to(Dtype::fp32, theta1)) - 1044.27) < 5e-3);
  CHECK(round_to(Dtype::fp16, round_to(Dtype::fp16, 1857) * round_to(Dtype::fp16, theta1)) == 1045);
}

TEST_CASE("fp32 and bf16 agree with rounding by bits on random doubles") {
  Rng rng(7, 0, 0);
  for (int i = 0; i < 100000; ++i) {
    const double x = std::ldexp(rng.normal(), static_cast<int>(rng.uniform() * 80) - 40);
    CHECK(round_to(Dtype::fp32, x) == fp32_by_bits(x));
    const float f = static_cast<float>(x);
    CHECK(round_to(Dtype::bf16, f) == bf16_by_bits(f));
    CHECK(from_bits(Dtype::bf16, bits_of(Dtype::bf16, f)) == round_to(Dtype::bf16, f));
    CHECK(from_bits(Dtype::fp16, bits_of(Dtype::fp16, x)) == round_to(Dtype::fp16, x));
  }
}

#if defined(__FLT16_MANT_DIG__)
TEST_CASE("fp16 agrees with the compiler's _Float16 conversion, subnormals and overflow included") {
  Rng rng(11, 0, 0);
  for (int i = 0; i < 100000; ++i) {
    const double x = std::ldexp(rng.normal(), static_cast<int>(rng.uniform() * 50) - 30);  // 2^-30 .. 2^20
    CHECK(round_to(Dtype::fp16, x) == static_cast<double>(static_cast<_Float16>(x)));
  }
}
#endif

TEST_CASE("edges: fp16's largest finite, its overflow tie, subnormals; NaN and inf pass through") {
  CHECK(round_to(Dtype::fp16, 65504) == 65504);
  CHECK(round_to(Dtype::fp16, 65519.99) == 65504);
  CHECK(std::isinf(round_to(Dtype::fp16, 65520)));  // the tie goes to the even 65536: past the range
  CHECK(round_to(Dtype::fp16, std::ldexp(1.0, -24)) == std::ldexp(1.0, -24));
  CHECK(round_to(Dtype::fp16, std::ldexp(1.0, -25)) == 0);  // a tie between 0 and 2^-24: 0 is even
  CHECK(round_to(Dtype::fp16, std::ldexp(1.5, -25)) == std::ldexp(1.0, -24));
  CHECK(bits_of(Dtype::fp16, 1.0) == 0x3c00u);
  CHECK(bits_of(Dtype::fp16, -2.0) == 0xc000u);
  CHECK(bits_of(Dtype::bf16, 1.0) == 0x3f80u);
  CHECK(std::isnan(round_to(Dtype::bf16, std::nan(""))));
  CHECK(std::isinf(round_to(Dtype::bf16, std::numeric_limits<double>::infinity())));
  CHECK(std::isinf(round_to(Dtype::bf16, 3.5e38)));  // past bf16's largest finite, 3.3895e38
  CHECK_THROWS_WITH_AS(parse_dtype("fp8", Where("ropekit precision")), doctest::Contains("(must be one of fp32, tf32, bf16, fp16)"),
                       InputError);
}

TEST_CASE("round_from_f32 (bit operations) equals round_to (scaled integer rounding) on float32 values") {
  // Two routes: drop bits of binary32 with a carry, against round_to's add-and-subtract 1.5 2^52 at the dtype's
  // quantum. Random floats over every binade up to 65504 (fp16's largest finite), both signs, plus the ties and edges.
  Rng rng(7, 0, 0);
  int checked = 0;
  auto check = [&](float x) {
    for (const Dtype d : {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16}) {
      const double want = round_to(d, x), got = round_from_f32(d, x);
      if (want != got || std::signbit(want) != std::signbit(got)) {
        CAPTURE(static_cast<double>(x));
        CAPTURE(dtype_name(d));
        CHECK(got == want);
      }
    }
    ++checked;
  };
  for (int i = 0; i < 400000; ++i) {
    const double e = -40 + 56 * rng.uniform();  // 2^-40 .. 2^16
    const auto x = static_cast<float>(std::exp2(e) * (rng.uniform() < 0.5 ? -1 : 1));
    if (std::abs(x) <= 65504) check(x);
  }
  // Ties at every kept-bit position: bf16 keeps 8 bits, tf32 and fp16 11: 1 + 2^-8 + 2^-9 style halves.
  for (const int k : {8, 9, 11, 12}) {
    for (const double base : {1.0, 1.0 + std::ldexp(1.0, 1 - k), 0.75, 3.0, std::ldexp(1.0, -14), std::ldexp(1.0, -20)}) {
      check(static_cast<float>(base + std::ldexp(base, -k)));
      check(static_cast<float>(-(base + std::ldexp(base, -k))));
    }
  }
  // fp16's subnormal range and its edge: multiples of 2^-24 and the halves between them, 2^-14 and just below.
  for (int j = -40; j <= 40; ++j) check(static_cast<float>(std::ldexp(2 * 5000 + j, -25)));
  for (const float x : {0.0f, -0.0f, 0x1p-14f, std::nextafter(0x1p-14f, 0.0f), 0x1p-25f, 0x1.8p-25f, 0x1p-26f,
                        -0x1p-26f, 65504.0f, 65519.0f - 16, 1.0f, -1.0f, 0.99999994f})
    check(x);
  CHECK(checked > 300000);
}
