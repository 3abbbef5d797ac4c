// The vector path of the kernel (encodings/rotary_spectrum.hpp): which encodings take it, and its numbers against
// the block-by-block route (each block's closed-form trace at each lag, summed in long double) on even grids and
// scattered lags up to 2^31.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "ropekit/core/rng.hpp"
#include "ropekit/core/vecmath.hpp"
#include "ropekit/encodings/family.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/rotary_spectrum.hpp"

using namespace ropekit;

namespace {

// tr G(lag) and tr G(lag)^2 from the encoding's blocks at that lag (the generic route), in long double.
std::pair<long double, long double> block_traces(const Encoding& e, double lag, std::optional<double> seq_len) {
  std::vector<Block> bs;
  FrequencyCache cache;
  BlockContext ctx{bs, lag, seq_len, cache};
  append_blocks(e, ctx);
  long double tr = 0, sq = 0;
  for (const Block& b : bs) {
    tr += trace(b);
    sq += trace_of_square(b);
  }
  return {tr, sq};
}

}  // namespace

TEST_CASE("rotary_spectrum: fixed sums of rotations take the vector path, lag-dependent operators do not") {
  for (const char* yes : {"rope:dim=128,base=1e4", "rope:dim=128,base=5e5,scaling=llama3(factor=8,low=1,high=4,orig=8192)",
                          "rope:dim=64,base=1e4,scaling=yarn(factor=4,orig=4096)", "rope:dim=96,base=1e4,partial=0.5",
                          "rope-freqs:freqs=[1,0.5,0.25]", "nope", "direct-sum:[rope(dim=64,base=1e4),nope(dim=128)]"}) {
    CAPTURE(yes);
    CHECK(rotary_spectrum(parse_encoding(yes), std::nullopt).has_value());
  }
  for (const char* no : {"damped:dim=64,base=1e4,gamma=0.01", "alibi:slope=0.5,L=10", "jordan_m3",
                         "rope:dim=64,base=1e4,scaling=dynamic(factor=4,orig=2048)", "rf-rope:spectrum=gaussian(sigma=1),blocks=32,seed=1"}) {
    CAPTURE(no);
    CHECK(!rotary_spectrum(parse_encoding(no), std::nullopt).has_value());
  }
  // A dynamic scheme at a given sequence length is a fixed sum again.
  CHECK(rotary_spectrum(parse_encoding("rope:dim=64,base=1e4,scaling=dynamic(factor=4,orig=2048)"), 8192.0).has_value());
}

TEST_CASE("spectrum_traces against the blocks: even grids and scattered lags, to 2^31") {
  // Both routes evaluate cos of the same product theta * lag (one double rounding), the grid kernel on the phase
  // fl(theta t_a) + fl(theta r T) + fl(theta j) instead (vecmath.hpp's CosSumsGrid), apart by at most ulp(theta t_max)
  // + ulp(512 theta) <= 2 u, u = ulp(theta_max t_max), for these lags. tr G = c_tr + sum a_i cos: each term's value
  // within 2^-49 |a_i| (the grid's products of 1-ulp values; the scattered cosine's 2^-52), slope 1 in the phase.
  // tr G^2 = (c_sq - sum b) + sum 2 b_i cos^2: cos^2 within 2^-48 + 2^-53, slope |sin 2x| <= 1 of cos^2 in the
  // phase. The n terms added in order to the constant add n 2^-53 of the running magnitude (test_vecmath's seq_bound).
  const char* spellings[] = {"rope:dim=128,base=5e5,scaling=llama3(factor=8,low=1,high=4,orig=8192)",
                             "direct-sum:[rope(dim=64,base=1e4,scaling=yarn(factor=40,orig=4096)),nope(dim=128)]",
                             "rope:dim=96,base=1e4,partial=0.5"};
  Rng rng(23, 0, 0);
  for (const char* text : spellings) {
    CAPTURE(text);
    const Encoding e = parse_encoding(text);
    const auto s = rotary_spectrum(e, std::nullopt);
    REQUIRE(s);
    double sum_a = 0, sum_2b = 0, sum_b = 0, theta_max = 0;
    for (std::size_t i = 0; i < s->a.size(); ++i) {
      sum_a += std::abs(s->a[i]), sum_2b += 2 * std::abs(s->b[i]), sum_b += s->b[i];
      theta_max = std::max(theta_max, s->theta[i]);
    }
    const double n = static_cast<double>(s->theta.size());
    struct Lags {
      std::vector<double> t;
      const char* what;
    };
    std::vector<Lags> cases;
    for (const double start : {0.0, 1e6, 2147483647.0 - 5000}) {
      std::vector<double> t;
      for (int j = 0; j < 5000; ++j) t.push_back(start + j);
      cases.push_back({t, "grid"});
    }
    std::vector<double> scattered;
    for (int j = 0; j < 3000; ++j) scattered.push_back((rng.uniform() - 0.5) * 4294967294.0);
    cases.push_back({scattered, "scattered"});
    for (const auto& c : cases) {
      CAPTURE(c.what);
      CAPTURE(c.t.front());
      std::vector<double> tr(c.t.size()), sq(c.t.size());
      spectrum_traces(*s, c.t.data(), c.t.size(), tr.data(), sq.data());
      double t_max = 0;
      for (double t : c.t) t_max = std::max(t_max, std::abs(t));
      const double u = std::ldexp(1.0, std::ilogb(std::max(t_max * theta_max, 1.0)) - 52);
      const double tol_tr = sum_a * (2 * u + 0x1p-49) + n * 0x1p-53 * (std::abs(s->c_tr) + sum_a);
      const double tol_sq =
          sum_2b * (2 * u + 0x1p-48 + 0x1p-53) + n * 0x1p-53 * (std::abs(s->c_sq - sum_b) + sum_2b);
      double worst_tr = 0, worst_sq = 0;
      for (std::size_t j = 0; j < c.t.size(); ++j) {
        const auto [want_tr, want_sq] = block_traces(e, c.t[j], std::nullopt);
        worst_tr = std::max(worst_tr, std::abs(tr[j] - static_cast<double>(want_tr)));
        worst_sq = std::max(worst_sq, std::abs(sq[j] - static_cast<double>(want_sq)));
      }
      CAPTURE(tol_tr);
      CAPTURE(tol_sq);
      CHECK(worst_tr <= tol_tr);
      CHECK(worst_sq <= tol_sq);
    }
  }
}

TEST_CASE("kernel_rows takes the vector path with the same numbers as the blocks: kernel, content variance, rho") {
  const Encoding e = parse_encoding("rope:dim=128,base=5e5,scaling=llama3(factor=8,low=1,high=4,orig=8192)");
  Lags lags(6, 1);
  lags << 0, 1, -7, 4096.5, 1e5, 123456789;
  // Both routes take cos of the same product theta Dp; the vector path's cosine is within 2^-52 absolute
  // (vecmath.hpp), the 64 terms are added in order (64 roundings of 2^-53 of the weight) after the weight's own
  // rounding (a / tr G(0): 2^-53): the kernel (weights summing to 1) within (2^-52 + 65 2^-53), the mean rho tr0
  // kernel within 128 times that (plus a rounding), the variance fro + rho^2 (sum 2 b cos^2 - sum b), weights 2 rho^2 b
  // summing to 256 rho^2 with c^2 within 3 2^-52, within 256 rho^2 (3 2^-52 + 65 2^-53) and two roundings of 256.
  const double k_tol = 0x1p-52 + 65 * 0x1p-53;
  for (const double rho : {1.0, 0.0, -0.5}) {
    const auto rows = kernel_rows(e, lags, rho);
    const auto [tr0, sq0] = block_traces(e, 0, std::nullopt);
    for (Eigen::Index i = 0; i < lags.rows(); ++i) {
      const auto [tr, sq] = block_traces(e, lags(i, 0), std::nullopt);
      CAPTURE(lags(i, 0));
      // ||G||_F^2 = 2 a^4 per pair + the identity dims: here a = 1 and all 128 dims rotate.
      const KernelRow& r = rows[static_cast<std::size_t>(i)];
      CHECK(std::abs(r.kernel - static_cast<double>(tr / tr0)) <= k_tol);
      CHECK(std::abs(r.content_mean - static_cast<double>(rho * tr)) <= 128 * k_tol + 0x1p-46);
      CHECK(std::abs(r.content_variance - static_cast<double>(128 + rho * rho * sq)) <=
            256 * rho * rho * (3 * 0x1p-52 + 65 * 0x1p-53) + 0x1p-44);
    }
  }
}

TEST_CASE("grouped kernel: lag-dependent chains on fixed frequencies (jordan, damped, direct sums) against the blocks") {
  // rotary_kernel's grouped route (S = sum cos, Q = sum cos^2 per frequency table, then the chains' closed forms)
  // against the block-by-block route in long double. Each cosine within 2^-49 (the grid's products of three 1-ulp
  // values; 2^-52 scattered), its phase within 2 ulp(t_max theta_max) <= 2 u, u = ulp(t_max) (theta <= 1), of the
  // blocks' one product, the F <= 64 terms of S added in order (F 2^-53), then the product by 2 m c_0 (two
  // roundings) and the sum over at most 4 groups and blocks: tr within rel_tr = 2^-49 + 2 u + 70 2^-53 of its
  // weight, the sum of its terms' magnitudes. The kernel tr / tr0 read back times tr0 adds two roundings and the
  // route's own tr0 (at most 4 of its roundings); the mean one. The variance: cos^2 twice the cosine's error and
  // slope 2 in the doubled phase (`ulp` of 2 t_max), within (2^-48 + 2 ulp + 64 2^-53) of ||G||_F^2 + rho^2
  // sum |tr(G_b(0)^2)|.
  const char* spellings[] = {"jordan:m=3,dim=64", "damped:dim=64,gamma=0.01", "jordan_m3",
                             "direct-sum:[jordan(m=2,dim=32),alibi,rope(dim=16)]",
                             "jordan:m=2,dim=64,base=5e5,gamma=0.001,tau=raw,L=4096,scaling=yarn(factor=8,orig=4096)"};
  for (const char* text : spellings) {
    CAPTURE(text);
    const Encoding e = parse_encoding(text);
    REQUIRE(!rotary_spectrum(e, std::nullopt).has_value());
    for (const bool grid : {true, false}) {
      std::vector<double> t;
      Rng rng(29, grid, 0);
      // damped's e^{-gamma Dp} with gamma 0.01: e^{+200} at -2e4 (squared, still finite), e^{-490} at 49000
      for (int j = 0; j < 3000; ++j) t.push_back(grid ? 40000.0 + 3 * j : -2e4 + rng.uniform() * 1.2e5);
      std::vector<double> k(t.size()), mean(t.size()), var(t.size());
      const double rho = 0.75;
      REQUIRE(rotary_kernel(e, t.data(), t.size(), rho, std::nullopt, k.data(), mean.data(), var.data(), grid));
      const auto [tr0, sq0] = block_traces(e, 0, std::nullopt);
      double t_max = 0;
      for (double x : t) t_max = std::max(t_max, std::abs(x));
      const double u = std::ldexp(1.0, std::ilogb(t_max) - 52);  // theta_max <= 1 here
      const double rel_tr = 0x1p-49 + 2 * u + 70 * 0x1p-53;
      const double rel_var = 0x1p-48 + 2 * (2 * u) + 64 * 0x1p-53;  // 2 u: the ulp of 2 t_max, cos 2x's phase
      for (std::size_t j = 0; j < t.size(); ++j) {
        const auto [tr, sq] = block_traces(e, t[j], std::nullopt);
        std::vector<Block> bs;
        FrequencyCache cache;
        BlockContext ctx{bs, t[j], std::nullopt, cache};
        append_blocks(e, ctx);
        long double fro = 0, weight_tr = 0, weight_sq = 0;
        for (const Block& b : bs) {
          fro += frobenius_squared(b);
          Block unit = b;
          unit.phase = 0;
          weight_tr += std::abs(trace(unit));
          weight_sq += std::abs(trace_of_square(unit));
        }
        CAPTURE(t[j]);
        // (1e-300: where e^{-gamma Dp} underflows, both are 0 up to a subnormal)
        CHECK(std::abs(k[j] * static_cast<double>(tr0) - static_cast<double>(tr)) <=
              (rel_tr + 6 * 0x1p-53) * static_cast<double>(weight_tr) + 1e-300);
        CHECK(std::abs(mean[j] - static_cast<double>(rho * tr)) <=
              (rel_tr + 0x1p-53) * rho * static_cast<double>(weight_tr) + 1e-300);
        CHECK(std::abs(var[j] - static_cast<double>(fro + rho * rho * sq)) <=
              rel_var * static_cast<double>(fro + rho * rho * weight_sq) + 1e-300);
      }
    }
  }
  // Not grouped: xpos's blocks each carry their own decay, rf-rope and k-D encodings take their own routes.
  std::vector<double> one{1.0}, out(1);
  CHECK(!rotary_kernel(parse_encoding("xpos:dim=64"), one.data(), 1, 1, std::nullopt, out.data(), nullptr, nullptr));
}
