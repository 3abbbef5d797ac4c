// The score through a pipeline (precision/score.hpp) against the scores transformers' Llama rotary module and
// apply_rotary_pos_emb produced on a CPU (tests/data/transformers/score-error.csv, with its content
// score-content.csv): the same float32 content, rounded to the dtype, rotated and summed.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ropekit/precision/score.hpp"

using namespace ropekit;

namespace {

const std::string kData = std::string(ROPEKIT_SOURCE_DIR) + "/tests/data/transformers/";

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string cell; std::getline(in, cell, sep);) out.push_back(cell);
  return out;
}

}  // namespace

TEST_CASE("scores: transformers' CPU scores of 64 trials at 17 positions, fp32 / bf16 / fp16, to fp32 summation order") {
  std::map<std::string, std::vector<std::vector<double>>> content;  // "q" / "k" -> trial -> values
  {
    std::ifstream f(kData + "score-content.csv");
    std::string line;
    std::getline(f, line);
    while (std::getline(f, line)) {
      const auto c = split(line, ',');
      std::vector<double> v;
      std::stringstream bits(c[2]);
      for (std::string h; bits >> h;) v.push_back(from_bits(Dtype::fp32, static_cast<std::uint32_t>(std::stoul(h, nullptr, 16))));
      content[c[0]].push_back(v);
    }
  }
  REQUIRE(content["q"].size() == 64);
  std::ifstream f(kData + "score-error.csv");
  std::string line;
  std::getline(f, line);  // device,dtype,position,trial,score,score_exact,norm_q_times_norm_k
  int checked = 0;
  std::map<std::string, PrecisionPlan> plans;
  while (std::getline(f, line)) {
    const auto c = split(line, ',');
    if (c[0] != "cpu") continue;
    const Dtype d = parse_dtype(c[1], Where("test"));
    if (!plans.count(c[1])) {
      Pipeline p;
      p.dtype = d;
      plans[c[1]] = plan_precision("test", parse_encoding("rope:dim=128,base=1e4"), p);
    }
    const PrecisionPlan& plan = plans[c[1]];
    const double position = std::stod(c[2]);
    const auto trial = static_cast<std::size_t>(std::stoi(c[3]));
    std::vector<double> q = content["q"][trial], k = content["k"][trial];
    for (auto& v : q) v = round_to(d, v);
    for (auto& v : k) v = round_to(d, v);
    const auto qr = rotate_held(plan, q, position + 1), kr = rotate_held(plan, k, position);
    const double mine = held_score(qr, kr);
    double bound = 0;  // fp32 summation in another order: at most n eps_32 sum |q_i k_i| apart
    for (std::size_t i = 0; i < qr.size(); ++i) bound += std::abs(qr[i] * kr[i]);
    bound *= 128 * 0x1p-24;
    CAPTURE(line);
    CHECK(std::abs(mine - std::stod(c[4])) <= bound);
    const auto qe = rotate_exact(plan, q, position + 1), ke = rotate_exact(plan, k, position);
    long double exact = 0;
    for (std::size_t i = 0; i < qe.size(); ++i) exact += qe[i] * ke[i];
    // float64 torch with its own float64 theta (1 / 1e4 ** (i / 64)): a few ulps of theta times p up to 2^24 in each
    // angle, 4 2^-52 2^24 = 1.5e-8 rad, moving each product by at most that times |q_i k_i|.
    CHECK(std::abs(static_cast<double>(exact) - std::stod(c[5])) <= 1.5e-8 * std::stod(c[6]));
    ++checked;
  }
  CHECK(checked == 3 * 17 * 64);
}

TEST_CASE("score Monte Carlo: the fp32 RMS error grows with the position as the angle's ulp; deterministic per seed") {
  const auto plan = plan_precision("test", parse_encoding("rope:dim=128,base=1e4"), Pipeline{});
  const auto at0 = score_errors(plan, 1, 0, 64, 7), far = score_errors(plan, 1, 16777215, 64, 7);
  CHECK(at0.rms_rel < 1e-7);                    // fp32 rounding of rotation and sum only
  CHECK(far.rms_rel > 3e-3);                    // transformers' CPU measurement: 7.7e-3 at 2^24 - 1 (64 trials)
  CHECK(far.rms_rel < 2e-2);
  CHECK(far.max_rel >= far.rms_rel);
  const auto again = score_errors(plan, 1, 16777215, 64, 7);
  CHECK(again.rms_rel == far.rms_rel);
}

TEST_CASE("vllm / flash: the rotation in fp32, stored in the dtype; fewer roundings than transformers' in bf16") {
  Pipeline v;
  v.kind = PipelineKind::vllm;
  v.dtype = Dtype::bf16;
  const auto plan = plan_precision("test", parse_encoding("rope:dim=8,base=1e4"), v);
  const std::vector<double> x = {round_to(Dtype::bf16, 0.3), round_to(Dtype::bf16, -1.7), round_to(Dtype::bf16, 2.2),
                                 round_to(Dtype::bf16, 0.05), round_to(Dtype::bf16, 1.1), round_to(Dtype::bf16, 0.9),
                                 round_to(Dtype::bf16, -0.4), round_to(Dtype::bf16, 3.3)};
  const auto held = held_table(plan, 777);
  const auto mine = rotate_held(plan, x, 777);
  for (std::size_t i = 0; i < 4; ++i) {
    // In float: (x1 c - x2 s) and (x2 c + x1 s) with each product and the sum rounded to float, then to bf16.
    const float c = static_cast<float>(held[i].cos), s = static_cast<float>(held[i].sin);
    const float x1 = static_cast<float>(x[i]), x2 = static_cast<float>(x[i + 4]);
    const float p1 = x1 * c, p2 = -x2 * s, p3 = x2 * c, p4 = x1 * s;
    CHECK(mine[i] == round_to(Dtype::bf16, static_cast<float>(p1 + p2)));
    CHECK(mine[i + 4] == round_to(Dtype::bf16, static_cast<float>(p3 + p4)));
  }
  Pipeline hf;
  hf.dtype = Dtype::bf16;
  const auto hf_plan = plan_precision("test", parse_encoding("rope:dim=128,base=1e4"), hf);
  const auto v_plan = plan_precision("test", parse_encoding("rope:dim=128,base=1e4"), Pipeline{PipelineKind::vllm, Dtype::bf16});
  CHECK(score_errors(v_plan, 1, 0, 256, 1).rms_rel < score_errors(hf_plan, 1, 0, 256, 1).rms_rel);
}

TEST_CASE("score Monte Carlo against the first-order estimate from the per-pair angle errors (fp32)") {
  // In fp32 at large positions the angle errors dominate (tables and rotation round at 6e-8). With w_i = d_i(p + lag)
  // - d_i(p), d_i the held angle minus p theta_exact wrapped, the held score is, to first order in w,
  //   e = -sum_i w_i Im(qc_i conj(kc_i) e^{j phi_i}),   qc_i = q_i + j q_{i+m}, kc_i alike,
  // and for q, k ~ N(0, I_n) (n = 2m) E[e^2 / (|q|^2 |k|^2)] = sum_i w_i^2 E[r_i^2 / |q|^2] E[s_i^2 / |k|^2] / 2
  // = sum_i w_i^2 / (2 m^2) (r_i^2 / |q|^2 is Beta(1, m - 1) with mean 1 / m): RMS = sqrt(2 sum_i w_i^2) / n.
  // 8192 draws estimate an RMS to about 2% (its relative standard error is sqrt((kurtosis - 1) / N) / 2 with the
  // kurtosis of such sums below 9); the second-order terms are w^2 / 2 <= 1e-3 of it here. Tolerance 6%.
  const auto plan = plan_precision("test", parse_encoding("rope:dim=128,base=1e4"), Pipeline{});
  const auto wrapped_error = [&](double p) {
    std::vector<long double> d;
    const auto held = held_table(plan, p);
    for (std::size_t i = 0; i < held.size(); ++i) {
      const long double x = held[i].angle - static_cast<long double>(p) * plan.theta_exact[i];
      const long double two_pi = 2 * 3.14159265358979323846264338327950288L;
      d.push_back(x - two_pi * std::nearbyint(x / two_pi));
    }
    return d;
  };
  for (const auto& [position, lag] : {std::pair{262143.0, 1.0}, std::pair{1048575.0, 1.0}, std::pair{3000000.0, 1000.0}}) {
    const auto dq = wrapped_error(position + lag), dk = wrapped_error(position);
    long double sum = 0;
    for (std::size_t i = 0; i < dq.size(); ++i) sum += (dq[i] - dk[i]) * (dq[i] - dk[i]);
    const double predicted = static_cast<double>(std::sqrt(2 * sum)) / 128;
    const double measured = score_errors(plan, lag, position, 8192, 3).rms_rel;
    CAPTURE(position);
    CAPTURE(predicted);
    CHECK(std::abs(measured / predicted - 1) < 0.06);
  }
}

TEST_CASE("relativity defect: zero at the origin, the score error itself once the origin is exact") {
  const auto plan = plan_precision("test", parse_encoding("rope:dim=128,base=1e4"), Pipeline{});
  CHECK(score_errors(plan, 1, 0, 64, 7).defect_rms == 0);  // the same tables: the same held score
  // Far out the held score at the origin is exact to 6e-8 and the defect is the score error to that (both RMS over
  // the same draws): |defect - error| <= RMS of the origin's error, about 1e-7 (and 1e-9 relative for the sum).
  const auto far = score_errors(plan, 1, 16777215, 64, 7), origin = score_errors(plan, 1, 0, 64, 7);
  CHECK(std::abs(far.defect_rms - far.rms_rel) <= origin.rms_rel * (1 + 1e-9) + 1e-12);
  CHECK(far.defect_rms > 3e-3);
}

TEST_CASE("llama4: fp32 tables never cast, complex products in fp32, the result cast to the dtype") {
  // transformers' Llama 4: freqs_cis = polar(1, angle) in complex64; xq.float() viewed as complex times freqs_cis,
  // .type_as(xq). Written here in float: (x1 + i x2)(c + i s) with each product and sum rounded to float.
  Pipeline l4;
  l4.kind = PipelineKind::llama4;
  l4.dtype = Dtype::bf16;
  const auto plan = plan_precision("test", parse_encoding("rope:dim=8,base=5e5"), l4);
  const auto held = held_table(plan, 123457);
  Pipeline fp32_tables;
  const auto hf32 = held_table(plan_precision("test", parse_encoding("rope:dim=8,base=5e5"), fp32_tables), 123457);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(held[i].cos == hf32[i].cos);  // the fp32 tables, not bf16
    CHECK(held[i].sin == hf32[i].sin);
  }
  const std::vector<double> x = {round_to(Dtype::bf16, 0.7), round_to(Dtype::bf16, -1.3), round_to(Dtype::bf16, 2.9),
                                 round_to(Dtype::bf16, 0.01), round_to(Dtype::bf16, -0.6), round_to(Dtype::bf16, 1.9),
                                 round_to(Dtype::bf16, 0.4), round_to(Dtype::bf16, -2.2)};
  const auto mine = rotate_held(plan, x, 123457);
  for (std::size_t i = 0; i < 4; ++i) {
    const float c = static_cast<float>(held[i].cos), s = static_cast<float>(held[i].sin);
    const float x1 = static_cast<float>(x[i]), x2 = static_cast<float>(x[i + 4]);
    // volatile: each product rounded on its own (no FMA contraction in this file's -march=native build).
    const volatile float p1 = x1 * c, p2 = x2 * s, p3 = x1 * s, p4 = x2 * c;
    const float re = p1 - p2, im = p3 + p4;
    CHECK(mine[i] == round_to(Dtype::bf16, re));
    CHECK(mine[i + 4] == round_to(Dtype::bf16, im));
  }
  // fp32 tables: at the origin the bf16 score error is the content's and the rotation's, below transformers' bf16.
  Pipeline hf;
  hf.dtype = Dtype::bf16;
  const auto hf_plan = plan_precision("test", parse_encoding("rope:dim=128,base=5e5"), hf);
  const auto l4_plan = plan_precision("test", parse_encoding("rope:dim=128,base=5e5"), l4);
  CHECK(score_errors(l4_plan, 1, 0, 256, 1).rms_rel < score_errors(hf_plan, 1, 0, 256, 1).rms_rel);
}
