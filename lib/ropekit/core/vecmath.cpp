// Run-time choice of vecmath's kernel table (vecmath_scalar.cpp, vecmath_avx2.cpp, vecmath_avx512.cpp):
// the CPU's best path or ROPEKIT_SIMD's, decided on the first kernel call; the public functions forward.
#include "ropekit/core/vecmath.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/enum_text.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/vecmath_kernels.hpp"

namespace ropekit {

static_assert(kAnchor == detail::kGridAnchor);

namespace {

constexpr EnumTable<SimdPath, 3> kPathWords = {{
    {SimdPath::scalar, "scalar"},
    {SimdPath::avx2, "avx2"},
    {SimdPath::avx512, "avx512"},
}};

const detail::VecKernels& table(SimdPath path) {
  switch (path) {
    case SimdPath::avx512: return detail::kAvx512Kernels;
    case SimdPath::avx2: return detail::kAvx2Kernels;
    default: return detail::kScalarKernels;
  }
}

SimdPath path_of(const detail::VecKernels* k) {
  return k == &detail::kAvx512Kernels ? SimdPath::avx512 : k == &detail::kAvx2Kernels ? SimdPath::avx2 : SimdPath::scalar;
}

std::string supported_words() {
  std::string out;
  const auto paths = supported_simd_paths();
  for (std::size_t i = 0; i < paths.size(); ++i)
    out += (i == 0 ? "" : i + 1 == paths.size() ? " or " : ", ") + std::string(simd_path_name(paths[i]));
  return out;
}

// The path of ROPEKIT_SIMD if set (validated), else the widest the CPU supports.
SimdPath choose() {
  const char* v = std::getenv("ROPEKIT_SIMD");
  if (v && *v) {
    const auto p = from_text(kPathWords, v);
    if (!p) throw_bad_value("environment", "ROPEKIT_SIMD", std::string("'") + v + "'", choices(kPathWords));
    if (!simd_path_supported(*p))
      throw_bad_value("environment", "ROPEKIT_SIMD", std::string("'") + v + "'",
                      "a path this CPU supports: " + supported_words());
    return *p;
  }
  return supported_simd_paths().back();
}

// Null until the first kernel call (or set_simd_path); racing first calls store the same table.
std::atomic<const detail::VecKernels*> g_active{nullptr};

const detail::VecKernels& active() {
  const detail::VecKernels* k = g_active.load(std::memory_order_acquire);
  if (!k) {
    k = &table(choose());
    g_active.store(k, std::memory_order_release);
  }
  return *k;
}

}  // namespace

std::string_view simd_path_name(SimdPath path) { return to_text(kPathWords, path); }

bool simd_path_supported(SimdPath path) {
  __builtin_cpu_init();  // may run before libgcc's constructor (static initialisers)
  switch (path) {
    case SimdPath::scalar: return true;
    case SimdPath::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SimdPath::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             simd_path_supported(SimdPath::avx2);
  }
  return false;
}

std::vector<SimdPath> supported_simd_paths() {
  std::vector<SimdPath> out;
  for (SimdPath p : {SimdPath::scalar, SimdPath::avx2, SimdPath::avx512})
    if (simd_path_supported(p)) out.push_back(p);
  return out;
}

SimdPath simd_path() { return path_of(&active()); }

void set_simd_path(SimdPath path) {
  if (!simd_path_supported(path))
    throw_bad_value("simd path", "path", std::string(simd_path_name(path)),
                    "supported by this CPU: " + supported_words());
  g_active.store(&table(path), std::memory_order_release);
}

int simd_width() { return active().width; }

void sincos_array(const double* x, double* s, double* c, std::size_t n) { active().sincos(x, s, c, n); }
void cos_array(const double* x, double* c, std::size_t n) { active().cos(x, c, n); }
void log_array(const double* x, double* y, std::size_t n) { active().log(x, y, n); }
void sincospi_array(const double* x, double* s, double* c, std::size_t n) { active().sincospi(x, s, c, n); }
void sincos_array_fast(const double* x, double* s, double* c, std::size_t n) { active().sincos_fast(x, s, c, n); }

double dot_cos_sin(double t, const double* w, const double* a, const double* b, std::size_t n) {
  return active().dot_t(t, w, a, b, n);
}

double dot_cos_sin(const double* u, const double* a, const double* b, std::size_t n) {
  return active().dot_u(u, a, b, n);
}

void dot_cos_sin_grid(const double* t, std::size_t count, const double* w, const double* a, const double* b,
                      std::size_t n, double* out, double* scratch) {
  active().grid(t, count, w, a, b, n, out, scratch);
}

void cos_sums(const double* t, std::size_t count, const double* w, const double* a, const double* b, std::size_t n,
              double* out_a, double* out_b) {
  active().cos_sums(t, count, w, a, b, n, out_a, out_b);
}

CosSumsGrid::CosSumsGrid(double h, const double* w, std::size_t n)
    : path_(&active()),
      w_(w),
      n_(n),
      tables_(n * (2 * detail::kGridTileMax + 2 * detail::kGridSuper)),
      work_(6 * n) {
  path_->cos_sums_grid_tables(h, w, n, tables_.data());
}

void sin_sums(const double* t, std::size_t count, const double* w, const double* a, std::size_t n, double* out) {
  active().sin_sums(t, count, w, a, n, out);
}

void CosSumsGrid::add_sin(const double* t, std::size_t count, const double* a, double* out) {
  path_->sin_sums_grid(t, count, w_, a, n_, tables_.data(), out, work_.data());
}

void CosSumsGrid::add(const double* t, std::size_t count, const double* a, const double* b, double* out_a,
                      double* out_b) {
  path_->cos_sums_grid(t, count, w_, a, b, n_, tables_.data(), out_a, out_b, work_.data());
}

namespace {

// Lag by lag in glibc, for phases past the vector kernels' range (|w t| > 1e14): adds as cos_sums / sin_sums do.
void add_trig_far(TrigSum f, const double* t, std::size_t count, const double* w, const double* a, const double* b,
                  std::size_t n, double* out_a, double* out_b) {
  for (std::size_t j = 0; j < count; ++j) {
    double sa = out_a[j], sb = out_b ? out_b[j] : 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double x = w[i] * t[j];
      const double c = f == TrigSum::sin ? std::sin(x) : std::cos(x);
      sa = std::fma(a[i], c, sa);
      if (out_b) sb = std::fma(b[i], c * c, sb);
    }
    out_a[j] = sa;
    if (out_b) out_b[j] = sb;
  }
}

}  // namespace

void add_trig_sums(TrigSum f, const double* t, std::size_t count, const double* w, const double* a, const double* b,
                   std::size_t n, double* out_a, double* out_b, bool grid) {
  constexpr std::size_t kLags = 8192, kPairs = 1024;
  if (f == TrigSum::sin) b = nullptr, out_b = nullptr;
  // The largest |t| of each lag chunk, once (the pair chunks revisit the lag chunks).
  std::vector<double> t_max((count + kLags - 1) / kLags, 0.0);
  for (std::size_t j = 0; j < count; ++j) t_max[j / kLags] = std::max(t_max[j / kLags], std::abs(t[j]));
  for (std::size_t i0 = 0; i0 < n; i0 += kPairs) {
    check_cancelled();
    const std::size_t k = std::min(kPairs, n - i0);
    const double *wi = w + i0, *ai = a + i0, *bi = b ? b + i0 : nullptr;
    double w_max = 0;
    for (std::size_t i = 0; i < k; ++i) w_max = std::max(w_max, std::abs(wi[i]));
    std::optional<CosSumsGrid> tables;
    if (grid) tables.emplace(t[1] - t[0], wi, k);
    for (std::size_t j0 = 0; j0 < count; j0 += kLags) {
      check_cancelled();
      const std::size_t c = std::min(kLags, count - j0);
      double* oa = out_a + j0;
      double* ob = out_b ? out_b + j0 : nullptr;
      if (!(w_max * t_max[j0 / kLags] <= 1e14)) {
        add_trig_far(f, t + j0, c, wi, ai, bi, k, oa, ob);
      } else if (f == TrigSum::sin) {
        if (tables) tables->add_sin(t + j0, c, ai, oa);
        else sin_sums(t + j0, c, wi, ai, k, oa);
      } else {
        if (tables) tables->add(t + j0, c, ai, bi, oa, ob);
        else cos_sums(t + j0, c, wi, ai, bi, k, oa, ob);
      }
    }
  }
}

bool is_even_grid(const double* t, std::size_t count) {
  if (count < 2) return false;
  const double h = t[1] - t[0];
  if (!(h != 0) || !std::isfinite(h)) return false;
  for (std::size_t m = 2; m < count; ++m)
    if (t[m] != t[0] + static_cast<double>(m) * h) return false;
  return true;
}

}  // namespace ropekit
