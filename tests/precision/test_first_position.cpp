// The first position past a tolerance (precision/first_position.hpp): the phase search against a scan of every
// position, its bound against the phase errors it must cover, and the score bisection's crossing.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "ropekit/core/rng.hpp"
#include "ropekit/precision/first_position.hpp"
#include "ropekit/precision/score.hpp"

using namespace ropekit;

namespace {

PrecisionPlan plan(const char* spelling, PipelineKind kind, Dtype dtype, Dtype inv = Dtype::fp32, Dtype angle = Dtype::fp32) {
  Pipeline p;
  p.kind = kind;
  p.dtype = dtype;
  p.inv_freq_dtype = inv;
  p.angle_dtype = angle;
  return plan_precision("test", parse_encoding(spelling), p);
}

std::vector<PrecisionPlan> plans() {
  return {plan("rope:dim=128,base=1e4", PipelineKind::huggingface, Dtype::fp32),
          plan("rope:dim=128,base=5e5,scaling=llama3(factor=8,low=1,high=4,orig=8192)", PipelineKind::huggingface, Dtype::bf16),
          plan("rope:dim=128,base=1e4", PipelineKind::huggingface, Dtype::tf32),
          plan("rope:dim=64,base=1e4", PipelineKind::huggingface, Dtype::fp16, Dtype::fp32, Dtype::fp16),
          plan("rope:dim=128,base=1e4", PipelineKind::huggingface, Dtype::fp32, Dtype::bf16),
          plan("rope:dim=128,base=1e4", PipelineKind::ggml, Dtype::fp32),
          plan("rope:dim=64,base=150000,scaling=yarn(factor=32,orig=4096)", PipelineKind::ggml, Dtype::fp32)};
}

}  // namespace

TEST_CASE("phase_error_bound covers the phase error everywhere and never decreases") {
  Rng rng(5, 0, 0);
  std::vector<double> positions = {0, 1, 2, 255, 256, 257, 2047, 2048, 2049, 16777215, 16777216, 16777217, 2147483647};
  for (int i = 0; i < 400; ++i) positions.push_back(std::floor(std::exp2(31 * rng.uniform())));
  std::sort(positions.begin(), positions.end());
  for (const auto& pl : plans()) {
    double last = 0;
    for (const double p : positions) {
      CAPTURE(p);
      const double bound = phase_error_bound(pl, p), e = phase_errors(pl, p).phase_error_max;
      if (!std::isnan(e)) CHECK(e <= bound);
      CHECK(bound >= last);
      last = bound;
    }
  }
}

TEST_CASE("first_phase_position equals a scan of every position, and skips most of them") {
  // Ranges a scan can afford (0 .. 300000, and a strided one); tolerances from the fp32 ulp level to 1e-2.
  const std::vector<LagStream::Segment> ranges[] = {{{0, 1, 300000}}, {{7, 3, 100000}}, {{5, 0, 1}, {100, 1, 200000}}};
  for (const auto& pl : plans()) {
    for (const auto& segments : ranges) {
      for (const double tolerance : {1e-5, 1e-4, 1e-3, 1e-2}) {
        CAPTURE(tolerance);
        std::optional<double> want;
        double want_value = 0;
        for (const auto& s : segments) {
          for (std::int64_t j = 0; j < s.count && !want; ++j) {
            const double p = s.start + static_cast<double>(j) * s.step, v = phase_errors(pl, p).phase_error_max;
            if (!(v <= tolerance)) want = p, want_value = v;
          }
          if (want) break;
        }
        const FirstPosition got = first_phase_position(pl, segments, tolerance);
        CHECK(got.position == want);
        if (want) CHECK(got.value == want_value);
        CHECK(got.search == "exact");
      }
    }
  }
  // The whole range of positions: Llama 2's fp32 head passes 1e-3 first at 17582 (the scan above agrees within
  // 0 .. 300000), evaluating a few hundred positions of 2^31.
  const FirstPosition f = first_phase_position(plans()[0], {{0, 1, 2147483648}}, 1e-3);
  REQUIRE(f.position);
  CHECK(*f.position == 17582);
  CHECK(f.evaluated < 1000);
  // A wrapped phase never exceeds pi: nothing to evaluate.
  const FirstPosition none = first_phase_position(plans()[0], {{0, 1, 2147483648}}, 3.5);
  CHECK(!none.position);
  CHECK(none.evaluated == 0);
}

TEST_CASE("first_score_position: a crossing between adjacent positions, in a few hundred evaluations") {
  const auto pl = plans()[0];
  const FirstPosition f = first_score_position(pl, {{0, 1, 2147483000}}, 1e-3, 1, 64, 7);
  REQUIRE(f.position);
  CHECK(f.search == "bisection");
  CHECK(f.evaluated < 600);
  CHECK(score_errors(pl, 1, *f.position, 64, 7).rms_rel == f.value);
  CHECK(f.value > 1e-3);
  CHECK(score_errors(pl, 1, *f.position - 1, 64, 7).rms_rel <= 1e-3);
  // The curve crosses 1e-3 between 2^20 and 2^21 (the phase error there is a few 1e-2; score RMS ~ it / sqrt(n)).
  CHECK(*f.position > 1 << 20);
  CHECK(*f.position < 1 << 21);
}
