// The ggml pipelines' fp32 tables against ggml's own arithmetic, rewritten here in float from llama.cpp's source
// (ggml/src/ggml-cpu/ops.cpp: ggml_rope_cache_init, rope_yarn, rope_yarn_ramp; ggml/src/ggml.c:
// ggml_rope_yarn_corr_dim(s)): the running product theta *= powf(base, -2/n_dims), theta_interp = freq_scale
// theta_extrap, the ramp between the correction dims, cosf / sinf times mscale. The FMA variant is written with
// fmaf where GCC contracts rope_yarn at -march=native. Every entry must agree bit for bit: both sides are the same
// float operations (this file is compiled with -ffp-contract=off, CMakeLists.txt, so nothing here is fused either).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "ropekit/precision/pipeline.hpp"
#include "support.hpp"

using namespace ropekit;

namespace {

// ggml_rope_ext's arguments for one encoding (llama.cpp's meaning: n_dims the rotated dims, freq_scale = 1/s,
// ext_factor 1 for YaRN and 0 otherwise, attn_factor 1).
struct GgmlArgs {
  int n_dims = 128;
  float base = 1e4f, freq_scale = 1, ext_factor = 0, attn_factor = 1, beta_fast = 32, beta_slow = 1;
  int n_ctx_orig = 4096;
  bool fma = false;  // rope_yarn as GCC contracts it
};

float corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
  return n_dims * logf(n_ctx_orig / (n_rot * 2 * std::numbers::pi_v<float>)) / (2 * logf(base));
}

void corr_dims(const GgmlArgs& g, float dims[2]) {
  const float start = floorf(corr_dim(g.n_dims, g.n_ctx_orig, g.beta_fast, g.base));
  const float end = ceilf(corr_dim(g.n_dims, g.n_ctx_orig, g.beta_slow, g.base));
  dims[0] = std::max(0.0f, start);
  dims[1] = std::min(static_cast<float>(g.n_dims - 1), end);
}

float ramp(float low, float high, int i0) {
  const float y = static_cast<float>(i0 / 2 - low) / std::max(0.001f, high - low);
  return 1 - std::min(1.0f, std::max(0.0f, y));
}

struct Entry {
  float angle, cos, sin;
};

// One position's cache, pair by pair.
std::vector<Entry> ggml_cache(const GgmlArgs& g, std::int64_t p) {
  float dims[2];
  corr_dims(g, dims);
  const float theta_scale = powf(g.base, -2.0f / static_cast<float>(g.n_dims));
  std::vector<Entry> out;
  float theta_extrap = static_cast<float>(p);
  for (int i0 = 0; i0 < g.n_dims; i0 += 2) {
    const float theta_interp = g.freq_scale * theta_extrap;
    float theta = theta_interp, mscale = g.attn_factor;
    if (g.ext_factor != 0.0f) {
      const float ramp_mix = ramp(dims[0], dims[1], i0) * g.ext_factor;
      if (g.fma) {
        theta = fmaf(theta_interp, 1 - ramp_mix, theta_extrap * ramp_mix);
        mscale = mscale * fmaf(0.1f, logf(1.0f / g.freq_scale), 1.0f);
      } else {
        theta = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
        mscale *= 1.0f + 0.1f * logf(1.0f / g.freq_scale);
      }
    }
    out.push_back({theta, cosf(theta) * mscale, sinf(theta) * mscale});
    theta_extrap *= theta_scale;
  }
  return out;
}

}  // namespace

TEST_CASE("ggml pipelines: angle, cos and sin equal ggml's float code in every entry at 2000 random positions") {
  struct Case {
    const char* spelling;
    PipelineKind kind;
    GgmlArgs args;
  };
  GgmlArgs plain, partial, linear, yarn, yarn_fma;
  partial.n_dims = 32;  // rope:dim=128,partial=0.25: llama.cpp's n_rot
  linear.freq_scale = 1.0f / 4;
  yarn.n_dims = yarn_fma.n_dims = 64;
  yarn.base = yarn_fma.base = 150000;
  yarn.freq_scale = yarn_fma.freq_scale = 1.0f / 32;
  yarn.ext_factor = yarn_fma.ext_factor = 1;
  yarn_fma.fma = true;
  const std::vector<Case> cases = {
      {"rope:dim=128,base=1e4", PipelineKind::ggml, plain},
      {"rope:dim=128,base=1e4,partial=0.25", PipelineKind::ggml, partial},
      {"rope:dim=128,base=1e4,scaling=linear(factor=4)", PipelineKind::ggml, linear},
      {"rope:dim=128,base=1e4,scaling=linear(factor=4)", PipelineKind::ggml_fma, linear},  // nothing to contract
      {"rope:dim=64,base=150000,scaling=yarn(factor=32,orig=4096,beta_fast=32,beta_slow=1)", PipelineKind::ggml, yarn},
      {"rope:dim=64,base=150000,scaling=yarn(factor=32,orig=4096,beta_fast=32,beta_slow=1)", PipelineKind::ggml_fma,
       yarn_fma},
  };
  const std::uint64_t seed = test::test_seed();
  CAPTURE(seed);
  for (const Case& c : cases) {
    CAPTURE(c.spelling);
    CAPTURE(pipeline_name(c.kind));
    const PrecisionPlan plan = plan_precision("test", parse_encoding(c.spelling), Pipeline{c.kind, Dtype::fp32});
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> position(0, std::int64_t{1} << 24);
    std::int64_t entries = 0, equal = 0;
    for (int k = 0; k < 2000; ++k) {
      const std::int64_t p = position(rng);
      const auto mine = held_table(plan, static_cast<double>(p));
      const auto ggml = ggml_cache(c.args, p);
      REQUIRE(mine.size() == ggml.size());
      for (std::size_t i = 0; i < ggml.size(); ++i) {
        ++entries;
        const bool same = mine[i].angle == ggml[i].angle && mine[i].cos == ggml[i].cos && mine[i].sin == ggml[i].sin;
        equal += same;
        if (!same && entries - equal <= 3) {  // the first few differences, for a failure's report
          CAPTURE(p);
          CAPTURE(i);
          CHECK(mine[i].angle == ggml[i].angle);
          CHECK(mine[i].cos == ggml[i].cos);
          CHECK(mine[i].sin == ggml[i].sin);
        }
      }
    }
    CHECK(equal == entries);  // 100% of the entries: the same float operations on both sides
  }
}

TEST_CASE("ggml-fma: the contraction changes some YaRN angles (the variant is not ggml under another name)") {
  // Power check of the test above: with the ramp strictly between 0 and 1 the fused sum rounds once where ggml's
  // rounds three times, so over 2000 positions some angles must differ; plain RoPE has no sum to fuse.
  const std::string yarn = "rope:dim=64,base=150000,scaling=yarn(factor=32,orig=4096,beta_fast=32,beta_slow=1)";
  const Encoding e = parse_encoding(yarn);
  const PrecisionPlan a = plan_precision("test", e, Pipeline{PipelineKind::ggml, Dtype::fp32});
  const PrecisionPlan b = plan_precision("test", e, Pipeline{PipelineKind::ggml_fma, Dtype::fp32});
  int differ = 0;
  for (int p = 1; p <= 2000; ++p) {
    const auto x = held_table(a, p * 4099.0), y = held_table(b, p * 4099.0);
    for (std::size_t i = 0; i < x.size(); ++i) differ += x[i].angle != y[i].angle;
  }
  CHECK(differ > 0);
}
