// ropekit_bench: timings behind `make bench` (wall clock, median of repeats, this machine).
// Speed is measured here and reported, never asserted in tests.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/vecmath.hpp"

namespace ropekit::bench {

double median_ms(const std::function<void()>& f, int repeats) {
  std::vector<double> t;
  f();  // warm-up
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace ropekit::bench

namespace {

// The CPU's vector extensions that matter to vecmath's paths, as the CPU reports them.
std::string cpu_isa() {
  __builtin_cpu_init();
  std::string out;
  auto add = [&](const char* name, bool has) {
    if (has) out += (out.empty() ? "" : " ") + std::string(name);
  };
  add("sse4.2", __builtin_cpu_supports("sse4.2"));
  add("avx", __builtin_cpu_supports("avx"));
  add("avx2", __builtin_cpu_supports("avx2"));
  add("fma", __builtin_cpu_supports("fma"));
  add("avx512f", __builtin_cpu_supports("avx512f"));
  add("avx512dq", __builtin_cpu_supports("avx512dq"));
  add("avx512vl", __builtin_cpu_supports("avx512vl"));
  return out.empty() ? "x86-64 baseline" : out;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string only = argc > 1 ? argv[1] : "";
  std::string paths;
  for (ropekit::SimdPath p : ropekit::supported_simd_paths())
    paths += (paths.empty() ? "" : ", ") + std::string(ropekit::simd_path_name(p));
  fmt::print("CPU ISA: {}. vecmath paths on this CPU: {}; running {} (run-time dispatch; ROPEKIT_SIMD forces a path).\n\n",
             cpu_isa(), paths, ropekit::simd_path_name(ropekit::simd_path()));
  for (const auto& s : ropekit::bench::suites())
    if (only.empty() || only == s.name) {
      fmt::print("## {}\n\n", s.name);
      s.run();
      fmt::print("\n");
    }
  return 0;
} catch (const ropekit::InputError& e) {  // a bad ROPEKIT_SIMD: one line, exit 2, as the command line does
  std::fprintf(stderr, "error: %s\n", e.what());
  return 2;
}
