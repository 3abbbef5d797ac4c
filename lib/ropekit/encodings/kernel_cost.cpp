#include "ropekit/encodings/kernel_cost.hpp"

#include <fmt/format.h>

#include "ropekit/encoding.hpp"
#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/encodings/rotary_spectrum.hpp"
#include "ropekit/spectral/spectrum.hpp"

namespace ropekit {

// Per lag: the blocks' closed forms (the frequencies recomputed per lag: measured 1.3e-5 s per lag for n = 128,
// here 20 n elements = 5e-5 s), nd's dense G (torus: ~4 n^3 flops, else a Pade 13 exponential ~30 n^3) and G^2,
// rf-rope's expected kernel and Prop 4 variance (spectrum evaluations), and the printed cells.
// Bytes of G's closed-form blocks held at one lag (kernel_rows builds every part's blocks of a lag at once): per
// frequency a Block and its coefficient vector (~80 bytes), plus 8 bytes per coefficient (~n/2 of them); a dense
// n x n operator and its exponential's workspace for nd. jordan:m=32,dim=2^24 holds 2.8 GB.
double kernel_block_bytes(const Encoding& e, const EncodingSize& z) {
  if (std::holds_alternative<enc::Nd>(e.value)) return 8.0 * 8 * z.n * z.n;
  return 80 * z.freqs + 4 * z.n;
}

// Seconds of one lag of `e` (closed-form blocks, nd's dense G, rf-rope's spectrum evaluations), `columns` cells.
double kernel_lag_seconds(const Encoding& e, const EncodingSize& z, double columns) {
  const double n = z.n;
  double s = columns / 1e6;
  if (std::holds_alternative<enc::Nd>(e.value))
    s += ((has_frequencies(e) ? 4 : 30) * n * n * n + 2 * n * n * n) / kFlopsPerSecond;
  else if (rotary_spectrum(e, std::nullopt))
    s += 2 * z.freqs / kElementsPerSecond;  // the vector path: one cosine and three FMAs per frequency (measured 1.6 ns)
  else
    s += 20 * n / kElementsPerSecond;
  if (const auto* rf = std::get_if<enc::RfRope>(&e.value))
    s += 3 * kernel_values_work(rf->freqs.spectrum) / kElementsPerSecond;
  return s;
}

EncodingKernelCost encoding_kernel_cost(const Encoding& e) {
  const EncodingSize z = encoding_size(e);
  // kernel() holds a row of 6 numbers per lag and returns one.
  return EncodingKernelCost{kernel_block_bytes(e, z), 7 * 8, kernel_lag_seconds(e, z, 1)};
}

void check_encoding_blocks(const Where& where, std::string_view name, const std::string& text, const Encoding& e) {
  const EncodingSize z = encoding_size(e);
  const Cost one{kernel_block_bytes(e, z), 0};
  if (!one.fits())
    throw_bad_value(where, name, fmt::format("'{}' (n = {})", text, format_number(z.n)),
                    fmt::format("an encoding whose blocks at one lag fit in memory: one lag {}", one.excess()));
}

}  // namespace ropekit
