// The precision request (commands/precision_request.hpp) given a model: the pipeline the file implies (a GGUF:
// ggml; model_type llama4: llama4; any other config.json: huggingface) unless one is named, with a note; a direct
// sum of a rope with nope parts (DeepSeek's decoupled head) analysed on its rope part; refusals that name the option
// the user gave; and ggml's dtypes (f32 and f16 tensors only; f16 stored after an fp32 rotation).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gguf_writer.hpp"
#include "ropekit/commands/precision_request.hpp"
#include "ropekit/precision/score.hpp"
#include "support.hpp"

using namespace ropekit;

namespace {

ModelLayer layer_of(const std::string& reference) {
  return one_model_layer({split_model_reference(reference)}, Where::options("ropekit precision"));
}

PrecisionRequest with_model(const std::string& reference, const std::string& pipeline = "") {
  PrecisionRequest r;
  r.model = layer_of(reference);
  r.pipeline = pipeline;
  r.positions = std::vector<LagStream::Segment>{{1, 0, 1}};
  return r;
}

std::string joined(const std::vector<std::string>& notes) {
  std::string out;
  for (const auto& n : notes) out += n + "\n";
  return out;
}

// A Llama GGUF (llama.cpp's keys: head_count, embedding_length -> head_dim 128, freq_base), no tensors.
std::string llama_gguf(const test::ScratchDir& dir) {
  return dir.write("llama.gguf", test::minimal_gguf({{"llama.rope.freq_base", 10000.0f}},
                                                    {{"llama.attention.head_count", 32},
                                                     {"llama.embedding_length", 4096},
                                                     {"llama.block_count", 32}},
                                                    {{"general.architecture", "llama"}}));
}

}  // namespace

TEST_CASE("precision --model: the pipeline follows the file (GGUF ggml, llama4, other config.json huggingface)") {
  test::ScratchDir dir("precision-model");
  const std::string gguf = llama_gguf(dir);
  struct Case {
    std::string reference;
    PipelineKind expected;
    std::string note;
  };
  const std::vector<Case> cases = {
      {gguf, PipelineKind::ggml, "pipeline ggml (the model file is a GGUF, run by llama.cpp's ggml rope; --pipeline "
                                 "to choose another)"},
      {test::source_path("data/models/llama-4-scout.json") + ":chunked_attention", PipelineKind::llama4,
       "pipeline llama4 (the config's model_type is llama4"},
      {test::source_path("data/models/llama-3.1-8b.json"), PipelineKind::huggingface,
       "pipeline huggingface (the model file is a config.json"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.reference);
    const PrecisionRun run = plan_precision_request(with_model(c.reference));
    CHECK(run.plan.pipeline.kind == c.expected);
    CHECK(joined(run.notes).find(c.note) != std::string::npos);
    // --pipeline overrides, and then no note is printed about it.
    for (const PipelineInfo& p : pipelines()) {
      if (ggml_angle(p.angle) && c.expected != PipelineKind::ggml) continue;  // llama3 scaling: not a ggml rope
      const PrecisionRun named = plan_precision_request(with_model(c.reference, std::string(p.name)));
      CHECK(named.plan.pipeline.kind == p.kind);
      CHECK(joined(named.notes).find("pipeline ") == std::string::npos);
    }
  }
  // Without a model the default is huggingface, with no note.
  PrecisionRequest plain;
  plain.encoding = "rope:dim=64,base=1e4";
  plain.positions = std::vector<LagStream::Segment>{{1, 0, 1}};
  const PrecisionRun run = plan_precision_request(plain);
  CHECK(run.plan.pipeline.kind == PipelineKind::huggingface);
  CHECK(run.notes.empty());
}

TEST_CASE("precision --model deepseek-v3: the rope part of rope (+) nope is analysed, the nope dims held exactly") {
  const PrecisionRun run = plan_precision_request(with_model(test::source_path("data/models/deepseek-v3.json")));
  // qk_rope_head_dim = 64: 32 rotated pairs; the 128 nope dims are in no row.
  CHECK(run.plan.theta_exact.size() == 32);
  const std::string notes = joined(run.notes);
  CHECK(notes.find("its rope part (64 dims) is analysed; its 128 nope dims carry no rotation") != std::string::npos);
  // The same rope alone, spelled as an encoding, holds the same tables (the sum changes nothing in its rope part).
  const ModelLayer layer = layer_of(test::source_path("data/models/deepseek-v3.json"));  // held: the sum's parts live in it
  const auto& sum = std::get<enc::DirectSum>(layer.value->value);
  PrecisionRequest alone;
  alone.encoding = spelling(sum.parts.at(0));
  alone.pipeline = "huggingface";
  alone.positions = std::vector<LagStream::Segment>{{1, 0, 1}};
  const PrecisionRun rope = plan_precision_request(alone);
  CHECK(rope.plan.theta_held == run.plan.theta_held);
  CHECK(rope.notes.empty());
  // Partial rotary written as a sum: the rope part's pairs.
  PrecisionRequest partial;
  partial.encoding = "direct-sum:[rope(dim=32,base=1e4),nope(dim=96)]";
  partial.positions = std::vector<LagStream::Segment>{{1, 0, 1}};
  const PrecisionRun p = plan_precision_request(partial);
  CHECK(p.plan.theta_exact.size() == 16);
  CHECK(joined(p.notes).find("its 96 nope dims") != std::string::npos);
}

TEST_CASE("precision: a refusal names the option the encoding or the pipeline came from") {
  // An encoding that is no rope: --model when the model gave it, --encoding when it was typed.
  CHECK_THROWS_WITH_AS(plan_precision_request(with_model(test::source_path("data/models/bloom-560m.json") + ":full_attention/head_0")),
                       doctest::Contains("ropekit precision: --model = 'bloom-560m.json: full_attention/head_0' (must "
                                         "be a model whose encoding is a rope"),
                       InputError);
  PrecisionRequest typed;
  typed.encoding = "direct-sum:[rope(dim=32,base=1e4),alibi(slope=0.5,L=10)]";
  typed.positions = std::vector<LagStream::Segment>{{1, 0, 1}};
  CHECK_THROWS_WITH_AS(plan_precision_request(typed), doctest::Contains("ropekit precision: --encoding = 'direct-sum:"),
                       InputError);
  // A GGUF whose scheme ggml's pipeline does not model: the pipeline came from --model, the refusal says so.
  test::ScratchDir dir("precision-refusal");
  const std::string yarn_gguf = dir.write(
      "q.gguf", test::minimal_gguf({{"llama.rope.freq_base", 10000.0f}, {"llama.rope.scaling.factor", 8.0f}},
                                   {{"llama.attention.head_count", 32}, {"llama.embedding_length", 4096},
                                    {"llama.block_count", 32}, {"llama.rope.scaling.original_context_length", 8192}},
                                   {{"general.architecture", "llama"}, {"llama.rope.scaling.type", "yarn"}}));
  CHECK(plan_precision_request(with_model(yarn_gguf)).plan.pipeline.kind == PipelineKind::ggml);  // yarn: modelled
}

TEST_CASE("precision ggml: bf16 and tf32 refused naming --dtype and --pipeline; fp16 stored in fp16 after fp32") {
  for (const char* pipeline : {"ggml", "ggml-fma"}) {
    for (const char* dtype : {"bf16", "tf32"}) {
      PrecisionRequest r;
      r.encoding = "rope:dim=64,base=1e4";
      r.pipeline = pipeline;
      r.dtype = dtype;
      CAPTURE(pipeline);
      CHECK_THROWS_WITH_AS(plan_precision_request(r),
                           (std::string("ropekit precision: --dtype = ") + dtype +
                            " (must be fp32 or fp16 with --pipeline " + pipeline +
                            ": ggml's CPU rope takes f32 and f16 tensors, no bf16 (and no tf32 matmul))")
                               .c_str(),
                           InputError);
    }
  }
  // The pipeline a GGUF implies: the refusal names --model beside --dtype.
  test::ScratchDir dir("precision-dtype");
  PrecisionRequest r = with_model(llama_gguf(dir));
  r.dtype = "bf16";
  CHECK_THROWS_WITH_AS(plan_precision_request(r),
                       doctest::Contains("--dtype = bf16 (must be fp32 or fp16 with pipeline ggml, which --model "
                                         "implies (--pipeline to choose another)"),
                       InputError);
  r.pipeline = "huggingface";
  CHECK_NOTHROW(plan_precision_request(r));

  // fp16: ggml_compute_forward_rope_flt<ggml_fp16_t> widens x to fp32, rotates with the fp32 cache and rounds the
  // result once to fp16; so the fp16 row is the fp32 row's rotation of the same fp16 content, rounded to fp16.
  const Encoding e = parse_encoding("rope:dim=64,base=1e4");
  const PrecisionPlan h = plan_precision("test", e, Pipeline{PipelineKind::ggml, Dtype::fp16});
  const PrecisionPlan f = plan_precision("test", e, Pipeline{PipelineKind::ggml, Dtype::fp32});
  std::vector<double> x(64);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = round_to(Dtype::fp16, std::sin(1.0 + 0.37 * static_cast<double>(i)));
  for (const double p : {1.0, 12345.0, 1048575.0}) {
    CAPTURE(p);
    const auto half = rotate_held(h, x, p), single = rotate_held(f, x, p);
    REQUIRE(half.size() == single.size());
    bool fp32_is_fp32 = false;  // the fp32 row is not secretly rounded to fp16 (else the test would prove nothing)
    for (std::size_t i = 0; i < half.size(); ++i) {
      CHECK(half[i] == round_to(Dtype::fp16, single[i]));
      fp32_is_fp32 |= round_to(Dtype::fp16, single[i]) != single[i];
    }
    CHECK(fp32_is_fp32);
    // The cache is fp32 whatever the tensor type.
    const auto th = held_table(h, p), tf = held_table(f, p);
    for (std::size_t i = 0; i < th.size(); ++i) CHECK((th[i].cos == tf[i].cos && th[i].sin == tf[i].sin));
  }
}
