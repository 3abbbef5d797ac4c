// Compiled with -ffp-contract=off and -fno-fast-math (CMakeLists.txt): every product rounded on its own, as the
// frameworks' kernels, the two-products below exact, and ggml's cosf / sinf the C library's whatever the build flags;
// an FMA the emulation wants is std::fma. (no_fp_contract.hpp's pragma would do the same but stops GCC's vectoriser.)
#include "ropekit/precision/pipeline.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/vecmath.hpp"

namespace ropekit {

namespace {

// fl32 of a float32 function value: the double result rounded once (cos and sin of a float are correctly rounded
// this way but for the rare double-rounding ties: the spec's "cos correctly rounded").
double f32(double x) { return round_to(Dtype::fp32, x); }

// 2 pi as C1 + C2 (C1 = fl64(2 pi), C2 = fl64(2 pi - C1); the next term, 1e-32, is below everything reported).
constexpr double kTwoPi1 = 6.283185307179586, kTwoPi2 = 2.4492935982947064e-16, kInvTwoPi = 0.15915494309189535;
constexpr double kRound = 6755399441055744.0;  // 1.5 2^52: (x + kRound) - kRound is x rounded to an integer

// x - 2 pi k for the integer k nearest x / 2 pi, |x| < 2^50, as one double (|error| < 1e-15 |k| ulp-level; enough
// for a wrapped difference of angles).
inline double wrap_once(double x) {
  const double k = (x * kInvTwoPi + kRound) - kRound;
  return std::fma(-k, kTwoPi2, std::fma(-k, kTwoPi1, x));
}

// hi + lo (|lo| <= ulp(hi) / 2, |hi| < 2^50) reduced by 2 pi k to rh + rl, |rh| <= pi + 1e-15, |rl| <= ulp(rh) / 2,
// with an error below 1e-21 for |hi| <= 2^40 (Cody-Waite with an FMA: hi - k C1 is exact, it needs at most 53 bits
// between 2^3 and C1's last bit 2^-50; the C2 product's rounding is 2^-53 |k C2| <= 1e-22 there).
inline void reduce(double hi, double lo, double& rh, double& rl) {
  const double k = (hi * kInvTwoPi + kRound) - kRound;
  const double t1 = std::fma(-k, kTwoPi1, hi);
  const double t2 = std::fma(-k, kTwoPi2, lo);
  rh = t1 + t2;  // two-sum: rl is the rounding error of rh (Knuth, branch-free)
  const double v = rh - t1;
  rl = (t1 - (rh - v)) + (t2 - v);
}

}  // namespace

Dtype table_dtype(const Pipeline& p) {
  return pipeline_info(p.kind).tables == StageDtype::fp32 || p.dtype == Dtype::tf32 ? Dtype::fp32 : p.dtype;
}

void check_position(const Where& where, double position, std::string_view name) {
  if (!(position >= 0 && position <= 2147483647.0 && std::floor(position) == position))
    throw_bad_value(where, name, format_number(position), "an integer in [0, 2^31 - 1]");
}

void check_pipeline_dtype(const Where& where, const Pipeline& p, const PlanSource& source) {
  const PipelineInfo& info = pipeline_info(p.kind);
  if (info.dtypes & dtype_bit(p.dtype)) return;
  std::string allowed;
  for (const Dtype d : {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16})
    if (info.dtypes & dtype_bit(d)) allowed += (allowed.empty() ? "" : " or ") + std::string(dtype_name(d));
  const std::string with = source.pipeline_option == "pipeline"
                               ? fmt::format("{} {}", where.name("pipeline"), info.name)
                               : fmt::format("pipeline {}, which {} implies ({} to choose another)", info.name,
                                             where.name(source.pipeline_option), where.name("pipeline"));
  throw_bad_value(where, "dtype", std::string(dtype_name(p.dtype)),
                  fmt::format("{} with {}: {}", allowed, with, info.dtypes_reason));
}

PrecisionPlan plan_precision(const std::string& command, const Encoding& e, const Pipeline& p,
                             std::optional<double> seq_len, const PlanSource& source) {
  const Where where = Where::options(command);
  const std::string given = source.given.empty() ? quote(spelling(e)) : quote(source.given);
  if (!std::holds_alternative<enc::Rope>(e.value))
    throw_bad_value(where, source.encoding_option, given,
                    source.encoding_option == "encoding"
                        ? "a rope encoding (rope:..., rope-freqs:...; the frameworks' RoPE)"
                        : fmt::format("a model whose encoding is a rope (the frameworks' RoPE), or a direct sum of one "
                                      "with nope parts; it is {}", quote(spelling(e))));
  check_pipeline_dtype(where, p, source);
  PrecisionPlan plan;
  plan.pipeline = p;
  // The exact frequencies (float64) in the pipeline's own convention: ggml's YaRN is not transformers'.
  const PipelineInfo& info = pipeline_info(p.kind);
  const Convention convention = info.convention;
  const FrequencyTable exact =
      for_encoding(command, spelling(e), [&] { return frequencies(e, seq_len, convention, false); });
  if (exact.theta.cols() != 1) throw_bad_value(where, source.encoding_option, given, "1-D frequencies");
  plan.attention_factor = exact.attention_factor;
  plan.held_attention_factor = round_to(Dtype::fp32, exact.attention_factor);  // a Python float times an fp32 tensor
  plan.theta_exact.assign(exact.theta.data(), exact.theta.data() + exact.theta.rows());
  if (ggml_angle(info.angle)) {
    const FrequencySchedule* s = schedule_of(e);
    const auto* g = s ? std::get_if<Geometric>(&s->source) : nullptr;
    // ggml's running product over the r rotary dims: its ratio powf(base, -2/r) steps the angles of every position.
    const int r = g ? truncated_rotary_dims(*g) : 0;
    const int count = static_cast<int>(plan.theta_exact.size());
    const auto rope = g ? scheme_ggml_rope(s->scaling, g->base, r, count) : std::nullopt;
    if (!rope) {
      const std::string why = "the ggml pipeline is modelled for geometric RoPE, plain, linear or yarn; llama3 and "
                              "longrope come with the GGUF's rope_freqs factors";
      if (source.pipeline_option == "pipeline")
        throw_bad_value(where, "pipeline", std::string(info.name), fmt::format("huggingface for this encoding ({})", why));
      throw_bad_value(where, source.pipeline_option, given,
                      fmt::format("a GGUF whose rope ggml's pipeline models ({}): {} huggingface to read it as "
                                  "transformers does",
                                  why, where.name("pipeline")));
    }
    // rope_yarn's mscale in float: attn_factor, with YaRN's ramp times 1 + 0.1 logf(1 / freq_scale) (as an FMA in
    // the contracted variant: std::fma on floats is exact whatever the build flags).
    const float a0 = rope->attn_factor, fs = rope->freq_scale;
    float mscale = a0;
    if (!rope->ramp.empty())
      mscale = info.angle == AngleRule::ggml_running_fma ? a0 * std::fma(0.1f, std::log(1.0f / fs), 1.0f)
                                                         : a0 * (1.0f + 0.1f * std::log(1.0f / fs));
    plan.held_attention_factor = mscale;
    plan.ggml_attn_factor = a0;
    const auto grid = scaling::ggml_grid<float>(g->base, r, count);
    plan.ggml_theta_scale = grid.size() > 1 ? grid[1] : 0;
    plan.ggml_freq_scale = rope->freq_scale;
    plan.ggml_ramp.assign(rope->ramp.begin(), rope->ramp.end());
    // The held frequency: the angle ggml's arithmetic gives at position 1 (fill_held sizes by theta_held).
    plan.theta_held.resize(grid.size());
    HeldArrays at_one;
    fill_held(plan, 1, at_one);
    plan.theta_held = at_one.angle;
    return plan;
  }
  const FrequencyTable held =
      for_encoding(command, spelling(e), [&] { return frequencies(e, seq_len, Convention::huggingface, true); });
  for (Eigen::Index i = 0; i < held.theta.rows(); ++i) plan.theta_held.push_back(round_to(p.inv_freq_dtype, held.theta(i, 0)));
  // A buffer that holds the identity pairs as zero frequencies (cos 1, sin 0; proportional): transformers' tables do.
  const FrequencySchedule* s = schedule_of(e);
  if (s && scheme_zero_identity_pairs(s->scaling)) {
    plan.theta_exact.resize(plan.theta_exact.size() + static_cast<std::size_t>(exact.identity_dims / 2), 0.0);
    plan.theta_held.resize(plan.theta_exact.size(), 0.0);
  }
  return plan;
}

namespace {

// Stage 3 for pairs [0, m): fl32(cos) (times fl32(a) when a != 1, rounded), cast to `table`; cos(hi + lo) = cos(hi)
// - lo sin(hi) to 1e-31 (|lo| <= ulp(hi) / 2). One loop per dtype: the rounding's branches leave the loop.
template <Dtype table>
void held_tables(std::size_t m, float a32, const double* __restrict lo, const double* __restrict s,
                 const double* __restrict c, double* __restrict cos_out, double* __restrict sin_out) {
  for (std::size_t i = 0; i < m; ++i) {
    auto cv = static_cast<float>(c[i] - lo[i] * s[i]);
    auto sv = static_cast<float>(s[i] + lo[i] * c[i]);
    if (a32 != 1) {
      cv *= a32;
      sv *= a32;
    }
    cos_out[i] = round_from_f32(table, cv);
    sin_out[i] = round_from_f32(table, sv);
  }
}

// Stage 2's angles and the exact ones p theta_exact (= ph + pl exactly: p < 2^31 is an integer), reduced by 2 pi.
// (__restrict on parameters: GCC ignores it on local pointers and then gives up on the loop's many alias checks.)
[[gnu::noinline]] void reduce_angles(std::size_t m, double position, const double* __restrict angle, const double* __restrict theta_exact,
                   double* __restrict held_hi, double* __restrict held_lo, double* __restrict exact_hi,
                   double* __restrict exact_lo) {
  for (std::size_t i = 0; i < m; ++i) {
    reduce(angle[i], 0, held_hi[i], held_lo[i]);
    const double ph = position * theta_exact[i];
    reduce(ph, std::fma(position, theta_exact[i], -ph), exact_hi[i], exact_lo[i]);
  }
}

// a cos(hi + lo), a sin(hi + lo) from sincos(hi).
void exact_tables(std::size_t m, double a, const double* __restrict lo, const double* __restrict s,
                  const double* __restrict c, double* __restrict cos_out, double* __restrict sin_out) {
  for (std::size_t i = 0; i < m; ++i) {
    cos_out[i] = a * (c[i] - lo[i] * s[i]);
    sin_out[i] = a * (s[i] + lo[i] * c[i]);
  }
}

// Per pair: |phase error|, its inverse-frequency and angle parts, the table error, and the tables' pseudo-angle
// against the exact phase (phase_errors below), into out[0..5m).
void phase_parts(std::size_t m, double P, const double* __restrict te, const double* __restrict th,
                 const double* __restrict angle, const double* __restrict hc, const double* __restrict hs,
                 const double* __restrict ec, const double* __restrict es, double* __restrict out) {
  for (std::size_t i = 0; i < m; ++i) {
    // angle - p theta_exact, with p theta = ph + pl exactly; angle - ph is exact (Sterbenz: within a factor 2).
    const double ph = P * te[i], pl = std::fma(P, te[i], -ph);
    out[i] = std::abs(wrap_once((angle[i] - ph) - pl));
    out[m + i] = std::abs(P * (th[i] - te[i]));
    const double qh = P * th[i], ql = std::fma(P, th[i], -qh);
    out[2 * m + i] = std::abs((angle[i] - qh) - ql);
    const double dc = std::abs(hc[i] - ec[i]), ds = std::abs(hs[i] - es[i]);
    out[3 * m + i] = dc < ds ? ds : dc;
    // The phase the tables carry against the exact one, as a pseudo-angle of the cross and dot products that grows
    // with the angle in [0, pi]: w = |cross| / (|cross| + |dot|) for dot >= 0, 2 - w otherwise (atan2 once, later).
    const double cross = std::abs(hs[i] * ec[i] - hc[i] * es[i]);
    const double dot = hc[i] * ec[i] + hs[i] * es[i];
    const double norm = cross + std::abs(dot);
    const double w = norm > 0 ? cross / norm : 0;
    out[4 * m + i] = dot >= 0 ? w : 2 - w;
  }
}

// Largest of v[0..n) (values >= 0, no NaN): their bit patterns order as unsigned integers, and an integer maximum
// vectorises where a floating one (std::max's NaN rules) does not.
double max_of(const double* __restrict v, std::size_t n) {
  std::uint64_t top = 0;
  for (std::size_t i = 0; i < n; ++i) top = std::max(top, std::bit_cast<std::uint64_t>(v[i]));
  return std::bit_cast<double>(top);
}

}  // namespace

void fill_held(const PrecisionPlan& plan, double position, HeldArrays& h) {
  const Pipeline& p = plan.pipeline;
  const std::size_t m = plan.theta_held.size();
  for (auto* v : {&h.angle, &h.cos, &h.sin, &h.exact_cos, &h.exact_sin, &h.held_hi, &h.held_lo, &h.exact_hi, &h.exact_lo,
                  &h.s, &h.c})
    v->resize(m);
  const double* theta = plan.theta_held.data();
  const double* theta_exact = plan.theta_exact.data();
  double* angle = h.angle.data();
  // Stage 2, the angle as held.
  const PipelineInfo& info = pipeline_info(p.kind);
  if (ggml_angle(info.angle)) {
    // ggml_rope_cache_init: theta = (float) p, theta *= theta_scale once per pair; rope_yarn: theta_interp =
    // freq_scale theta_extrap, and with YaRN's ramp theta_interp (1 - ramp) + theta_extrap ramp, in float (the
    // FMA variant: the first product fused with the sum, as GCC contracts it; std::fma is exact on floats).
    auto running = static_cast<float>(position);
    const auto freq_scale = static_cast<float>(plan.ggml_freq_scale), scale = static_cast<float>(plan.ggml_theta_scale);
    const bool fma = info.angle == AngleRule::ggml_running_fma;
    for (std::size_t i = 0; i < m; ++i) {
      if (i) running = running * scale;
      const float interp = freq_scale * running;
      if (plan.ggml_ramp.empty()) {
        angle[i] = interp;
      } else {
        const auto ramp = static_cast<float>(plan.ggml_ramp[i]);
        const float extrap = running * ramp;
        angle[i] = fma ? std::fma(interp, 1 - ramp, extrap) : interp * (1 - ramp) + extrap;
      }
    }
  } else if (p.dtype == Dtype::tf32 || p.angle_dtype == Dtype::tf32) {
    // TF32 matmul: both inputs rounded to tf32, the product accumulated in fp32.
    const double p32 = round_to(Dtype::tf32, position);
    for (std::size_t i = 0; i < m; ++i) angle[i] = f32(p32 * round_to(Dtype::tf32, theta[i]));
  } else if (p.angle_dtype == Dtype::fp32) {
    const auto pf = static_cast<float>(position);  // position_ids.float(): one rounding past 2^24
    for (std::size_t i = 0; i < m; ++i) angle[i] = pf * static_cast<float>(theta[i]);  // one fp32 product
  } else {
    const Dtype d = p.angle_dtype;
    const double pd = round_to(d, position);
    for (std::size_t i = 0; i < m; ++i) angle[i] = round_to(d, pd * round_to(d, theta[i]));
  }
  reduce_angles(m, position, angle, theta_exact, h.held_hi.data(), h.held_lo.data(), h.exact_hi.data(),
                h.exact_lo.data());
  // Stage 3: ggml's f32 tensors and tf32's fp32 tables stay in fp32.
  const Dtype table = table_dtype(p);
  const auto a32 = static_cast<float>(plan.held_attention_factor);
  double* s = h.s.data();
  double* c = h.c.data();
  const double* held_lo = h.held_lo.data();
  if (info.sincos == SinCos::libm_float) {
    // rope_yarn: cosf(theta) * mscale, sinf(theta) * mscale, the C library's float functions (std::cos(float)), into
    // an fp32 cache. This file is compiled with -ffp-contract=off and never with fast-math (CMakeLists.txt), so they
    // are the library's own results whatever the build flags.
    for (std::size_t i = 0; i < m; ++i) {
      const auto a = static_cast<float>(angle[i]);
      h.cos[i] = round_from_f32(table, std::cos(a) * a32);
      h.sin[i] = round_from_f32(table, std::sin(a) * a32);
    }
  } else {
    sincos_array(h.held_hi.data(), s, c, m);
    switch (table) {
      case Dtype::fp32: held_tables<Dtype::fp32>(m, a32, held_lo, s, c, h.cos.data(), h.sin.data()); break;
      case Dtype::tf32: held_tables<Dtype::tf32>(m, a32, held_lo, s, c, h.cos.data(), h.sin.data()); break;
      case Dtype::bf16: held_tables<Dtype::bf16>(m, a32, held_lo, s, c, h.cos.data(), h.sin.data()); break;
      case Dtype::fp16: held_tables<Dtype::fp16>(m, a32, held_lo, s, c, h.cos.data(), h.sin.data()); break;
    }
  }
  sincos_array(h.exact_hi.data(), s, c, m);
  exact_tables(m, plan.attention_factor, h.exact_lo.data(), s, c, h.exact_cos.data(), h.exact_sin.data());
}

std::vector<HeldPair> held_table(const PrecisionPlan& plan, double position) {
  HeldArrays h;
  fill_held(plan, position, h);
  std::vector<HeldPair> out(plan.theta_held.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = {plan.theta_held[i], h.angle[i], h.cos[i], h.sin[i]};
  return out;
}

double largest_finite_position(const PrecisionPlan& plan) {
  HeldArrays h;
  const auto finite = [&](double p) {
    fill_held(plan, p, h);
    for (const auto* v : {&h.angle, &h.cos, &h.sin})
      for (const double x : *v)
        if (!std::isfinite(x)) return false;
    return true;
  };
  double lo = 0, hi = 2147483647.0;  // finite at lo, the answer in [lo, hi]
  if (finite(hi)) return hi;
  if (!finite(lo)) return -1;
  while (hi - lo > 1) {
    const double mid = std::floor((lo + hi) / 2);
    (finite(mid) ? lo : hi) = mid;
  }
  return lo;
}

PhaseErrors phase_errors(const PrecisionPlan& plan, double position) {
  thread_local HeldArrays h;
  thread_local std::vector<double> parts;
  fill_held(plan, position, h);
  const std::size_t m = h.angle.size();
  parts.resize(5 * m);
  phase_parts(m, position, plan.theta_exact.data(), plan.theta_held.data(), h.angle.data(), h.cos.data(), h.sin.data(),
              h.exact_cos.data(), h.exact_sin.data(), parts.data());
  const double* v = parts.data();
  const double u = max_of(v + 4 * m, m);
  // Back from the pseudo-angle: tan = w / (1 - w), and pi minus that angle past pi / 2.
  const double table_phase = u <= 1 ? std::atan2(u, 1 - u) : std::numbers::pi - std::atan2(2 - u, u - 1);
  return {max_of(v, m), max_of(v + m, m), max_of(v + 2 * m, m), max_of(v + 3 * m, m), table_phase};
}

}  // namespace ropekit
