// Vectorised helpers (lib/ropekit/core/vecmath.hpp): every SIMD path this CPU runs, against long double
// references (glibc's sinl/cosl/logl: 64-bit mantissa, exact argument reduction) to the ulp bounds that
// vecmath.hpp documents per path, and against each other.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/vecmath.hpp"
#include "support.hpp"

using namespace ropekit;

namespace {

// Documented bounds in ulp (vecmath.hpp's table): SLEEF's names say them (u10 = 1.0, u35 = 3.5, u05 = 0.506
// per SLEEF's manual); glibc's manual lists 1 ulp for sin, cos and log on x86-64.
struct UlpBounds {
  double sincos, log, sincospi, fast;
};
UlpBounds bounds(SimdPath p) {
  if (p == SimdPath::scalar) return {1.0, 1.0, 2.0, 1.0};
  return {1.0, 1.0, 0.506, 3.5};
}

// Restores the path that was active when a test started.
struct PathGuard {
  SimdPath saved = simd_path();
  ~PathGuard() { set_simd_path(saved); }
};

// Spacing of doubles at the exact value ref (its binade's, so a result rounded up to a power of two is not favoured).
double ulp_of(long double ref) {
  const long double r = std::fabs(ref);
  if (r < std::numeric_limits<double>::min()) return std::numeric_limits<double>::denorm_min();
  return std::ldexp(1.0, std::ilogb(r) - 52);
}

double ulp_error(double v, long double ref) {
  if (std::isnan(v) || std::isnan(static_cast<double>(ref))) return std::isnan(v) == std::isnan(static_cast<double>(ref)) ? 0 : INFINITY;
  if (std::isinf(static_cast<double>(ref))) return v == static_cast<double>(ref) ? 0 : INFINITY;
  return static_cast<double>(std::fabs(static_cast<long double>(v) - ref)) / ulp_of(ref);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

// Angles that stress a sincos: random over growing ranges, next to multiples of pi/2, tiny, huge.
std::vector<double> sincos_inputs() {
  Rng rng(14, 1);
  std::vector<double> x;
  for (double R : {1e-8, M_PI / 4, 100.0, 1e6, 1e9, 1e15, 1e300})
    for (int i = 0; i < 20000; ++i) x.push_back(R * (2 * rng.uniform() - 1));
  for (int k = 1; k < 2000000; k += 997) {
    x.push_back(k * 1.5707963267948966);
    x.push_back(std::nextafter(k * 1.5707963267948966, 0.0));
  }
  // (Not 6381956970095103 2^797, the double nearest a multiple of pi/2: there cosl itself is 1000 of its ulp off.)
  for (double v : {0.0, -0.0, 1e-300, 4.9e-324, 0x1p-1022, 1e-8, 1e9, 1e15, 1e22, 355.0, 103308783.0, 0x1p30, 0x1p30 + 1})
    for (double s : {1.0, -1.0}) x.push_back(s * v);
  return x;
}

// Max ulp error of sin and cos outputs over x (finite inputs only).
double max_ulp_sincos(const std::vector<double>& x, const std::vector<double>& s, const std::vector<double>& c) {
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long double xl = x[i];
    worst = std::max({worst, ulp_error(s[i], sinl(xl)), ulp_error(c[i], cosl(xl))});
  }
  return worst;
}

// Every array kernel, for the tail and alignment checks: f(x, out1, out2, n).
struct ArrayKernel {
  const char* name;
  bool two_outputs;
  void (*run)(const double* x, double* o1, double* o2, std::size_t n);
};
const ArrayKernel kArrayKernels[] = {
    {"sincos_array", true, [](const double* x, double* s, double* c, std::size_t n) { sincos_array(x, s, c, n); }},
    {"cos_array", false, [](const double* x, double* c, double*, std::size_t n) { cos_array(x, c, n); }},
    {"log_array", false, [](const double* x, double* y, double*, std::size_t n) { log_array(x, y, n); }},
    {"sincospi_array", true, [](const double* x, double* s, double* c, std::size_t n) { sincospi_array(x, s, c, n); }},
    {"sincos_array_fast", true, [](const double* x, double* s, double* c, std::size_t n) { sincos_array_fast(x, s, c, n); }},
};

// Rigorous bound on |dot_cos_sin - exact| for phases given in double: each term's sin and cos within B ulp
// (<= B 2^-52 of |a| + |b|), 2 FMAs per term into a lane of at most ceil(n/8) terms and 3 levels of the final
// reduction, each rounding at most 2^-53 of the magnitude sum_i |a_i| + |b_i|.
double dot_bound(double B, std::size_t n, double mag) {
  return (B * 0x1p-52 + static_cast<double>(2 * ((n + 7) / 8) + 3) * 0x1p-53) * mag;
}

}  // namespace

TEST_CASE("the SIMD paths: this CPU's are listed, forced by set_simd_path, scalar always there") {
  PathGuard guard;
  const auto paths = supported_simd_paths();
  REQUIRE(!paths.empty());
  CHECK(paths.front() == SimdPath::scalar);
  for (SimdPath p : paths) {
    set_simd_path(p);
    CHECK(simd_path() == p);
    CHECK(simd_width() == (p == SimdPath::avx512 ? 8 : p == SimdPath::avx2 ? 4 : 1));
  }
  CHECK(simd_path_name(SimdPath::avx512) == "avx512");
  for (SimdPath p : {SimdPath::avx2, SimdPath::avx512})
    if (!simd_path_supported(p)) CHECK_THROWS_AS(set_simd_path(p), InputError);
  // This project's machine has AVX-512 (F + DQ); a build without -march=native must still find it.
  MESSAGE("paths on this CPU: " << paths.size() << ", widest " << simd_path_name(paths.back()));
}

TEST_CASE("ROPEKIT_SIMD: a path by name, and an unknown name is one error line with exit code 2") {
  using ropekit::test::run_ropekit;
  const std::string cmd = "verify master --spectrum gaussian --blocks 8 --trials 200 --lags 0,1,2 --seed 3";
  const auto plain = run_ropekit(cmd);
  REQUIRE(plain.exit_code == 0);
  for (SimdPath p : supported_simd_paths()) {  // the child inherits the variable
    ::setenv("ROPEKIT_SIMD", std::string(simd_path_name(p)).c_str(), 1);
    const auto forced = run_ropekit(cmd);
    ::unsetenv("ROPEKIT_SIMD");
    CAPTURE(simd_path_name(p));
    CHECK(forced.exit_code == 0);
  }
  ::setenv("ROPEKIT_SIMD", "sse9", 1);
  const auto bad = run_ropekit(cmd);
  ::unsetenv("ROPEKIT_SIMD");
  CAPTURE(bad.err);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "error: ropekit verify master: environment: ROPEKIT_SIMD = 'sse9' (must be scalar, avx2 or avx512)\n");
  CHECK(bad.out.empty());
  // Checked at start-up (cli.cpp), also by a command that computes no sine.
  ::setenv("ROPEKIT_SIMD", "sse9", 1);
  const auto listing = run_ropekit("list encodings");
  ::unsetenv("ROPEKIT_SIMD");
  CHECK(listing.exit_code == 2);
  CHECK(listing.out.empty());
}

TEST_CASE("sin, cos, log and sin/cos(pi x) of every path agree with long double to the documented ulp bound") {
  PathGuard guard;
  const std::vector<double> x = sincos_inputs();
  std::vector<double> s(x.size()), c(x.size()), c_only(x.size());
  Rng rng(15, 1);
  std::vector<double> lx;  // log: positives over the whole range, subnormals, 1 and its neighbours
  for (int i = 0; i < 40000; ++i) lx.push_back(std::exp(1400 * (rng.uniform() - 0.5)));
  for (double v : {1.0, std::nextafter(1.0, 0.0), std::nextafter(1.0, 2.0), 4.9e-324, 1e-310, 0x1p-1022, 1.7e308})
    lx.push_back(v);
  std::vector<double> ly(lx.size());
  std::vector<double> px;  // sin/cos(pi x): random, large (exact integers), quarter and half integers
  for (int i = 0; i < 40000; ++i) px.push_back(8 * (rng.uniform() - 0.5));
  for (int i = 0; i < 2000; ++i) px.push_back(std::ldexp(rng.uniform(), 20 + i % 40));
  for (int k = -40; k <= 40; ++k) px.push_back(0.25 * k);
  for (double v : {1e-300, 4.9e-324, 1e-8, 0x1p52 + 1, 0x1p53, 1e300}) {
    px.push_back(v);
    px.push_back(-v);
  }
  std::vector<double> ps(px.size()), pc(px.size());
  const long double pi_l = 3.141592653589793238462643383279502884L;

  for (SimdPath p : supported_simd_paths()) {
    set_simd_path(p);
    const UlpBounds B = bounds(p);
    CAPTURE(simd_path_name(p));

    sincos_array(x.data(), s.data(), c.data(), x.size());
    const double e_sincos = max_ulp_sincos(x, s, c);
    CHECK(e_sincos <= B.sincos);
    cos_array(x.data(), c_only.data(), x.size());
    double e_cos = 0;
    for (std::size_t i = 0; i < x.size(); ++i) e_cos = std::max(e_cos, ulp_error(c_only[i], cosl(static_cast<long double>(x[i]))));
    CHECK(e_cos <= B.sincos);

    sincos_array_fast(x.data(), s.data(), c.data(), x.size());
    const double e_fast = max_ulp_sincos(x, s, c);
    CHECK(e_fast <= B.fast);

    log_array(lx.data(), ly.data(), lx.size());
    double e_log = 0;
    for (std::size_t i = 0; i < lx.size(); ++i) e_log = std::max(e_log, ulp_error(ly[i], logl(static_cast<long double>(lx[i]))));
    CHECK(e_log <= B.log);

    sincospi_array(px.data(), ps.data(), pc.data(), px.size());
    double e_pi = 0;
    for (std::size_t i = 0; i < px.size(); ++i) {
      // x reduced exactly to r in [-1/4, 1/4] and a quadrant q (x = r + q/2 + an even integer), then pi r in
      // long double (64-bit pi times a 53-bit r: relative error 2^-64, far below the bounds).
      const long double xl = px[i], q = std::nearbyint(2 * xl), r = xl - q / 2;
      const long double sr = sinl(pi_l * r), cr = cosl(pi_l * r);
      const long long quadrant = static_cast<long long>(std::fmod(q, 4.0L) + 4) % 4;
      const long double ref_s = quadrant == 0 ? sr : quadrant == 1 ? cr : quadrant == 2 ? -sr : -cr;
      const long double ref_c = quadrant == 0 ? cr : quadrant == 1 ? -sr : quadrant == 2 ? -cr : sr;
      e_pi = std::max({e_pi, ulp_error(ps[i], ref_s), ulp_error(pc[i], ref_c)});
      if (px[i] == std::nearbyint(px[i])) CHECK(ps[i] == 0.0);  // exact zeros at integers
    }
    CHECK(e_pi <= B.sincospi);
    MESSAGE(simd_path_name(p) << ": max ulp sincos " << e_sincos << ", cos " << e_cos << ", fast " << e_fast << ", log "
                              << e_log << ", sincospi " << e_pi);
  }
}

TEST_CASE("special values: inf and NaN give NaN, log(0) = -inf, log of a negative is NaN") {
  PathGuard guard;
  const double x[5] = {INFINITY, -INFINITY, NAN, 0.0, -0.0};
  for (SimdPath p : supported_simd_paths()) {
    set_simd_path(p);
    CAPTURE(simd_path_name(p));
    double s[5], c[5];
    for (auto f : {sincos_array, sincos_array_fast, sincospi_array}) {
      f(x, s, c, 5);
      for (int i = 0; i < 3; ++i) {
        CHECK(std::isnan(s[i]));
        CHECK(std::isnan(c[i]));
      }
      CHECK(s[3] == 0.0);
      CHECK(c[3] == 1.0);
      CHECK(s[4] == 0.0);
      CHECK(c[4] == 1.0);
    }
    const double lx[5] = {0.0, -1.0, INFINITY, NAN, 1.0};
    double ly[5];
    log_array(lx, ly, 5);
    CHECK(ly[0] == -INFINITY);
    CHECK(std::isnan(ly[1]));
    CHECK(ly[2] == INFINITY);
    CHECK(std::isnan(ly[3]));
    CHECK(ly[4] == 0.0);
  }
}

TEST_CASE("array kernels: lengths 0 to 17 at any alignment give the full array's values and write nothing past n") {
  PathGuard guard;
  Rng rng(16, 1);
  const std::size_t N = 17;
  std::vector<double> x(N);
  for (double& v : x) v = 0.5 + 20 * rng.uniform();  // positive, so log is defined too
  constexpr double kSentinel = -12345.678;
  for (SimdPath p : supported_simd_paths()) {
    set_simd_path(p);
    CAPTURE(simd_path_name(p));
    for (const auto& k : kArrayKernels) {
      CAPTURE(k.name);
      std::vector<double> full1(N), full2(N);
      k.run(x.data(), full1.data(), full2.data(), N);
      for (std::size_t n = 0; n <= N; ++n)
        for (std::size_t off = 0; off < 8; ++off) {
          CAPTURE(n);
          CAPTURE(off);
          std::vector<double> in(N + 16, 1.0), o1(N + 16, kSentinel), o2(N + 16, kSentinel);
          std::copy(x.begin(), x.begin() + static_cast<long>(n), in.begin() + static_cast<long>(off));
          k.run(in.data() + off, o1.data() + off, o2.data() + off, n);
          bool values = true, untouched = true;
          for (std::size_t i = 0; i < n; ++i)
            values = values && same_bits(o1[off + i], full1[i]) && (!k.two_outputs || same_bits(o2[off + i], full2[i]));
          for (std::size_t i = 0; i < o1.size(); ++i)
            if (i < off || i >= off + n) untouched = untouched && o1[i] == kSentinel && o2[i] == kSentinel;
          CHECK(values);
          CHECK(untouched);
        }
    }
    // In place (c may equal x, y may equal x).
    std::vector<double> y = x, ref(N);
    cos_array(x.data(), ref.data(), N);
    cos_array(y.data(), y.data(), N);
    CHECK(y == ref);
    y = x;
    log_array(x.data(), ref.data(), N);
    log_array(y.data(), y.data(), N);
    CHECK(y == ref);
  }
}

TEST_CASE("dot_cos_sin of every path matches a long double sum to the documented bound, any length and alignment") {
  PathGuard guard;
  Rng rng(12, 1);
  const auto paths = supported_simd_paths();
  for (std::size_t n : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 12u, 15u, 16u, 17u, 31u, 64u, 257u}) {
    std::vector<double> w(n + 8), a(n + 8), b(n + 8), u(n + 8);
    for (std::size_t i = 0; i < n + 8; ++i) {
      w[i] = rng.normal();
      a[i] = rng.normal();
      b[i] = rng.normal();
    }
    for (double t : {7.3, 1e6, 1e-9}) {
      std::vector<double> results;
      for (SimdPath p : paths) {
        set_simd_path(p);
        CAPTURE(n);
        CAPTURE(t);
        CAPTURE(simd_path_name(p));
        for (std::size_t off : {0u, 1u, 3u}) {  // unaligned starts (other inputs, each against its reference)
          const double* wo = w.data() + off;
          const double *ao = a.data() + off, *bo = b.data() + off;
          long double ref = 0, mag = 0;
          for (std::size_t i = 0; i < n; ++i) {
            u[i] = t * wo[i];  // the kernel's phase, rounded as it rounds it
            ref += ao[i] * cosl(static_cast<long double>(u[i])) + bo[i] * sinl(static_cast<long double>(u[i]));
            mag += std::abs(ao[i]) + std::abs(bo[i]);
          }
          const double bound = dot_bound(bounds(p).fast, n, static_cast<double>(mag));
          const double by_t = dot_cos_sin(t, wo, ao, bo, n), by_u = dot_cos_sin(u.data(), ao, bo, n);
          CHECK(std::abs(by_t - static_cast<double>(ref)) <= bound);
          CHECK(same_bits(by_t, by_u));  // same phases, same kernel
          if (off == 0) results.push_back(by_t);
        }
      }
      // Paths against each other: each within its bound of the exact sum, so within the sum of both bounds.
      double mag = 0;
      for (std::size_t i = 0; i < n; ++i) mag += std::abs(a[i]) + std::abs(b[i]);
      for (std::size_t i = 0; i < results.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          CHECK(std::abs(results[i] - results[j]) <=
                dot_bound(bounds(paths[i]).fast, n, mag) + dot_bound(bounds(paths[j]).fast, n, mag));
    }
  }
  // One input copied to different alignments gives the same bits on every path (the lanes follow i, not addresses).
  std::vector<double> buf(64 + 8);
  for (double& v : buf) v = rng.normal();
  for (SimdPath p : paths) {
    set_simd_path(p);
    double first = 0;
    for (std::size_t off = 0; off < 8; ++off) {
      std::vector<double> w(64 + 8), a(64 + 8), b(64 + 8);
      for (std::size_t i = 0; i < 21; ++i) {
        w[off + i] = buf[i];
        a[off + i] = buf[21 + i];
        b[off + i] = buf[42 + i];
      }
      const double v = dot_cos_sin(2.5, w.data() + off, a.data() + off, b.data() + off, 21);
      if (off == 0) first = v;
      CAPTURE(off);
      CHECK(same_bits(v, first));
    }
  }
}

TEST_CASE("the angle-addition grid kernel agrees with direct sincos at every grid point, on every path") {
  PathGuard guard;
  Rng rng(13, 1);
  const std::size_t count = 200;
  for (std::size_t n : {1u, 5u, 8u, 13u, 37u}) {
    std::vector<double> w(n), a(n), b(n), out(count), scratch(8 * count), t(count);
    for (std::size_t i = 0; i < n; ++i) {
      w[i] = 2 * rng.normal();
      a[i] = rng.normal();
      b[i] = rng.normal();
    }
    double mag = 0;
    for (std::size_t i = 0; i < n; ++i) mag += std::abs(a[i]) + std::abs(b[i]);
    for (SimdPath p : supported_simd_paths()) {
      set_simd_path(p);
      const double B = bounds(p).fast;
      for (double start : {0.0, -3.0}) {
        for (std::size_t m = 0; m < count; ++m) t[m] = start + static_cast<double>(m) * 0.5;
        REQUIRE(is_even_grid(t.data(), count));
        dot_cos_sin_grid(t.data(), count, w.data(), a.data(), b.data(), n, out.data(), scratch.data());
        // Up to kAnchor - 1 rotations since the last direct anchor, each adding ~2 eps per term and the step
        // angle's own sincos error (B ulp); both results also carry the direct kernel's error.
        const double drift = static_cast<double>(kAnchor - 1) * (2 + B) * 0x1p-52 * mag;
        for (std::size_t m = 0; m < count; ++m) {
          CAPTURE(simd_path_name(p));
          CAPTURE(n);
          CAPTURE(m);
          const double direct = dot_cos_sin(t[m], w.data(), a.data(), b.data(), n);
          CHECK(std::abs(out[m] - direct) <= drift + 2 * dot_bound(B, n, mag));
          if (m % kAnchor == 0) CHECK(out[m] == direct);  // anchors are the direct kernel's sums, same order
        }
      }
    }
  }
  const double uneven[3] = {0, 1, 2.5};
  CHECK_FALSE(is_even_grid(uneven, 3));
  const double flat[3] = {1, 1, 1};
  CHECK_FALSE(is_even_grid(flat, 3));
}

// Rigorous bound on |sum_i a_i f_i - exact| for a sum added in order into a start value 0 (cos_sums, CosSumsGrid):
// each term's value within `term` absolute of |a_i| (the cosine's error, or the grid's products), each of the n FMAs
// rounding at most 2^-53 of the running magnitude sum_i |a_i|.
double seq_bound(double term, std::size_t n, double mag) { return (term + static_cast<double>(n) * 0x1p-53) * mag; }

TEST_CASE("cos_sums, sin_sums and CosSumsGrid: the kernel sums against long double, every path") {
  // sum_i a_i cos(u_i) and sum_i b_i cos^2(u_i), u_i = t w_i rounded once. The scattered kernel's cosine is within
  // 2^-52 absolute on the vector paths (vecmath.hpp: measured 2.22e-16 at most) and 1 ulp (<= 2^-53) with glibc, so
  // a c within 2^-52 |a| and b c^2 within 3 2^-52 |b|. The grid's term c_a C_j - s_a S_j: the anchor (c_a, s_a) is a
  // rotation of a 1-ulp sincos by a 1-ulp table pair (each value within u = 2^-53 absolute, |values| <= 1), so within
  // 4 u plus two roundings, 6 u; the term then 2 (6 u) + 2 u + two roundings, 16 u = 2^-49 (times 2, plus one
  // rounding, for c^2: 2^-48 + 2^-53); with the weight folded into the anchor (the kernel alone, the sine) one more
  // rounding of a c_a, 2^-53 of |a|. Its phase fl(w t_a) + fl(w r T h) + fl(w j h) (r T h and j h rounded too) is apart from
  // fl(w t_m) by at most ulp(w t_max) + ulp(512 h w) (half an ulp of each of the five), slope <= 1 (2 for c^2).
  PathGuard guard;
  Rng rng(14, 1);
  for (std::size_t n : {1u, 7u, 8u, 9u, 33u, 64u, 100u}) {
    std::vector<double> w(n), a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) {
      w[i] = 2 * rng.normal();
      a[i] = rng.normal();
      b[i] = rng.normal();
    }
    double mag_a = 0, mag_b = 0;
    for (std::size_t i = 0; i < n; ++i) mag_a += std::abs(a[i]), mag_b += std::abs(b[i]);
    for (const double h : {0.25, 1.0, 3.0}) {
      for (const std::size_t count : {1u, 5u, 31u, 100u, 1100u}) {  // partial tiles, several passes, a new anchor
        std::vector<double> t(count), sa(count), sb(count), ga(count), gb(count), ka(count), ss(count), gs(count);
        for (std::size_t m = 0; m < count; ++m) t[m] = 12345.0 + h * static_cast<double>(m);
        auto ulp = [](double x) { return std::ldexp(1.0, std::ilogb(x) - 52); };
        double phase_a = 0, phase_b = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const double e = ulp(t[count - 1] * std::abs(w[i])) + ulp(512 * h * std::abs(w[i]));
          phase_a += std::abs(a[i]) * e;
          phase_b += 2 * std::abs(b[i]) * e;
        }
        for (SimdPath p : supported_simd_paths()) {
          set_simd_path(p);
          std::fill(sa.begin(), sa.end(), 0.0), std::fill(sb.begin(), sb.end(), 0.0);
          std::fill(ga.begin(), ga.end(), 0.0), std::fill(gb.begin(), gb.end(), 0.0), std::fill(ka.begin(), ka.end(), 0.0);
          std::fill(ss.begin(), ss.end(), 0.0), std::fill(gs.begin(), gs.end(), 0.0);
          sin_sums(t.data(), count, w.data(), a.data(), n, ss.data());  // the sine: the same bounds as the cosine
          cos_sums(t.data(), count, w.data(), a.data(), b.data(), n, sa.data(), sb.data());
          CosSumsGrid grid(h, w.data(), n);
          grid.add(t.data(), count, a.data(), b.data(), ga.data(), gb.data());
          grid.add(t.data(), count, a.data(), nullptr, ka.data(), nullptr);  // the kernel alone (weights in the anchors)
          grid.add_sin(t.data(), count, a.data(), gs.data());
          for (std::size_t m = 0; m < count; ++m) {
            long double ref_a = 0, ref_b = 0, ref_s = 0;
            for (std::size_t i = 0; i < n; ++i) {
              const long double c = cosl(static_cast<long double>(t[m] * w[i]));
              ref_a += a[i] * c;
              ref_b += b[i] * c * c;
              ref_s += a[i] * sinl(static_cast<long double>(t[m] * w[i]));
            }
            CAPTURE(simd_path_name(p));
            CAPTURE(n);
            CAPTURE(h);
            CAPTURE(m);
            CHECK(std::abs(sa[m] - static_cast<double>(ref_a)) <= seq_bound(0x1p-52, n, mag_a));
            CHECK(std::abs(sb[m] - static_cast<double>(ref_b)) <= seq_bound(3 * 0x1p-52, n, mag_b));
            CHECK(std::abs(ga[m] - static_cast<double>(ref_a)) <= seq_bound(0x1p-49, n, mag_a) + phase_a);
            CHECK(std::abs(ka[m] - static_cast<double>(ref_a)) <= seq_bound(0x1p-49 + 0x1p-53, n, mag_a) + phase_a);
            CHECK(std::abs(gb[m] - static_cast<double>(ref_b)) <= seq_bound(0x1p-48 + 0x1p-53, n, mag_b) + phase_b);
            CHECK(std::abs(ss[m] - static_cast<double>(ref_s)) <= seq_bound(0x1p-52, n, mag_a));
            CHECK(std::abs(gs[m] - static_cast<double>(ref_s)) <= seq_bound(0x1p-49 + 0x1p-53, n, mag_a) + phase_a);
          }
        }
      }
    }
  }
}

TEST_CASE("cos_sums and CosSumsGrid add into what the outputs hold, and leave every other entry alone") {
  PathGuard guard;
  const double w[3] = {0.3, 1.7, -2.2}, a[3] = {1, -2, 0.5}, b[3] = {0.25, 1, 3};
  for (SimdPath p : supported_simd_paths()) {
    set_simd_path(p);
    for (const std::size_t count : {1u, 3u, 9u, 37u}) {
      std::vector<double> t(count + 2), out_a(count + 2, 7.0), out_b(count + 2, -1.0), zero_a(count + 2, 0.0),
          zero_b(count + 2, 0.0);
      for (std::size_t m = 0; m < t.size(); ++m) t[m] = static_cast<double>(m);
      // Entries 1 .. count: the sum plus the start value; entries 0 and count + 1 untouched (no lane past the tail).
      cos_sums(t.data() + 1, count, w, a, b, 3, out_a.data() + 1, out_b.data() + 1);
      cos_sums(t.data() + 1, count, w, a, b, 3, zero_a.data() + 1, zero_b.data() + 1);
      CosSumsGrid grid(1.0, w, 3);
      std::vector<double> g_a(count + 2, 7.0), g_b(count + 2, -1.0), gz_a(count + 2, 0.0), gz_b(count + 2, 0.0);
      grid.add(t.data() + 1, count, a, b, g_a.data() + 1, g_b.data() + 1);
      grid.add(t.data() + 1, count, a, b, gz_a.data() + 1, gz_b.data() + 1);
      CAPTURE(simd_path_name(p));
      CAPTURE(count);
      for (const auto* v : {&out_a, &g_a}) {
        CHECK((*v)[0] == 7.0);
        CHECK((*v)[count + 1] == 7.0);
      }
      for (const auto* v : {&out_b, &g_b}) {
        CHECK((*v)[0] == -1.0);
        CHECK((*v)[count + 1] == -1.0);
      }
      for (std::size_t m = 1; m <= count; ++m) {
        // 7 + s within one rounding of 7 plus the sum's own bound (|s| <= 3.5 here: 2^-50 of 10.5 and 8 2^-52)
        CHECK(std::abs(out_a[m] - (7.0 + zero_a[m])) <= 0x1p-49);
        CHECK(std::abs(out_b[m] - (-1.0 + zero_b[m])) <= 0x1p-48);
        CHECK(std::abs(g_a[m] - (7.0 + gz_a[m])) <= 0x1p-49);  // the grid alike
        CHECK(std::abs(g_b[m] - (-1.0 + gz_b[m])) <= 0x1p-48);
      }
    }
  }
}
