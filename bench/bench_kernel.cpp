// The kernel of a sum of rotations (issue 23): vecmath's kernel sums over 2^20 lags of Llama 3.1 8B's 64 frequencies,
// per SIMD path, beside the cosine limit of the direct route (cos_array of the same 2^26 phases, precomputed: the
// time a lag-by-lag kernel would spend on its cosines alone).
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "bench/bench.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/vecmath.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/rotary_spectrum.hpp"

namespace ropekit::bench {

void kernel_suite() {
  const auto s = rotary_spectrum(
      parse_encoding("rope:dim=128,base=500000,scaling=llama3(factor=8,low=1,high=4,orig=8192)"), std::nullopt);
  const std::size_t n = s->theta.size(), lags = std::size_t{1} << 20, block = 8192;
  std::vector<double> grid(lags), scattered(lags), out(lags), sq(lags), phases(block * n), cosines(block * n);
  Rng rng(23, 0, 0);
  for (std::size_t j = 0; j < lags; ++j) {
    grid[j] = static_cast<double>(j);
    scattered[j] = rng.uniform() * static_cast<double>(lags);
  }
  fmt::print("Llama 3.1 8B's kernel (64 frequencies) over 2^20 lags, one core, median of 5 (ms); the cosine limit is\n"
              "cos_array over the 2^26 phases t w_i (in blocks of 8192 lags, phases made outside the clock).\n\n");
  fmt::print("| path | cosine limit | scattered kernel | scattered, + content variance | grid kernel | grid, + content "
             "variance |\n|---|---|---|---|---|---|\n");
  const SimdPath saved = simd_path();
  for (SimdPath p : supported_simd_paths()) {
    set_simd_path(p);
    for (std::size_t j = 0; j < block; ++j)
      for (std::size_t i = 0; i < n; ++i) phases[j * n + i] = scattered[j] * s->theta[i];
    const double limit = median_ms(
        [&] {
          for (std::size_t j0 = 0; j0 < lags; j0 += block) cos_array(phases.data(), cosines.data(), block * n);
        },
        5);
    // The sums over all lags from zeroed outputs, with or without the squares (the content variance).
    auto sums_ms = [&](bool on_grid, bool squares) {
      const double* b = squares ? s->b.data() : nullptr;
      double* ob = squares ? sq.data() : nullptr;
      return median_ms(
          [&] {
            std::fill(out.begin(), out.end(), 0.0);
            std::fill(sq.begin(), sq.end(), 0.0);
            if (on_grid) {
              CosSumsGrid(1.0, s->theta.data(), n).add(grid.data(), lags, s->a.data(), b, out.data(), ob);
            } else {
              cos_sums(scattered.data(), lags, s->theta.data(), s->a.data(), b, n, out.data(), ob);
            }
          },
          5);
    };
    fmt::print("| {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} |\n", simd_path_name(p), limit, sums_ms(false, false),
               sums_ms(false, true), sums_ms(true, false), sums_ms(true, true));
  }
  set_simd_path(saved);
}

}  // namespace ropekit::bench
