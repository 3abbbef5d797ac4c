// The pipelines' table (precision/pipelines.hpp): names and aliases, the refusal, and each row's stage dtypes seen
// in what the arithmetic holds: the tables and the rotated vector of a bf16 or fp16 model are in that dtype exactly
// where the framework's code keeps them so (read from each framework's source, written out here by hand).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ropekit/precision/score.hpp"

using namespace ropekit;

TEST_CASE("pipelines: each name and alias parses to its row; an unknown one is refused naming them all") {
  const Where where = Where::options("ropekit precision");
  for (const PipelineInfo& p : pipelines()) {
    CHECK(parse_pipeline(p.name, where) == p.kind);
    CHECK(pipeline_name(p.kind) == p.name);
    CHECK(&pipeline_info(p.kind) == &p);
    for (const auto a : p.aliases)
      if (!a.empty()) CHECK(parse_pipeline(a, where) == p.kind);
  }
  CHECK(parse_pipeline("transformers", where) == PipelineKind::huggingface);
  CHECK(parse_pipeline("llama.cpp", where) == PipelineKind::ggml);
  CHECK(parse_pipeline("flash-attention", where) == PipelineKind::flash);
  CHECK(parse_pipeline("ggml-fma", where) == PipelineKind::ggml_fma);
  CHECK_THROWS_WITH_AS(parse_pipeline("", where),
                       "ropekit precision: --pipeline = '' (must be huggingface, ggml, vllm, flash, llama4 or ggml-fma)",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_pipeline("ONNX", where),
                       "ropekit precision: --pipeline = 'ONNX' (must be huggingface, ggml, vllm, flash, llama4 or ggml-fma)",
                       InputError);
  CHECK(pipeline_list_rows().size() == pipelines().size());
  for (const auto& row : pipeline_list_rows()) CHECK(row.size() == pipeline_list_columns().size());
}

TEST_CASE("pipelines: a half-precision model's tables and rotated vector are half where the framework keeps them so") {
  // Expected per pipeline, from the frameworks' code: transformers casts cos/sin to the model dtype and rotates in
  // it; vLLM's cache and flash-attention's cos/sin are in the model dtype, the rotation in fp32 registers stored in
  // the model dtype; Llama 4's complex64 freqs_cis is never cast, the product cast back; ggml keeps an f32 cache and
  // stores in the tensor's type, f32 or f16 (its CPU rope takes no bf16 tensor: refused).
  struct Expect {
    PipelineKind kind;
    bool tables_half, stored_half, takes_bf16;
  };
  const std::vector<Expect> expected = {{PipelineKind::huggingface, true, true, true},
                                        {PipelineKind::ggml, false, true, false},
                                        {PipelineKind::vllm, true, true, true},
                                        {PipelineKind::flash, true, true, true},
                                        {PipelineKind::llama4, false, true, true},
                                        {PipelineKind::ggml_fma, false, true, false}};
  CHECK(expected.size() == pipelines().size());
  for (const Dtype d : {Dtype::bf16, Dtype::fp16}) {
    std::vector<double> x(64);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = round_to(d, std::sin(1.0 + 0.37 * static_cast<double>(i)));
    const auto all_in = [&](const std::vector<double>& v) {
      for (const double y : v)
        if (round_to(d, y) != y) return false;
      return true;
    };
    for (const Expect& e : expected) {
      CAPTURE(pipeline_name(e.kind));
      CAPTURE(dtype_name(d));
      const Encoding enc = parse_encoding("rope:dim=64,base=1e4");
      if (d == Dtype::bf16 && !e.takes_bf16) {
        CHECK_THROWS_AS(plan_precision("test", enc, Pipeline{e.kind, d}), InputError);
        continue;
      }
      const PrecisionPlan plan = plan_precision("test", enc, Pipeline{e.kind, d});
      std::vector<double> cos, sin;
      for (const HeldPair& h : held_table(plan, 12345)) cos.push_back(h.cos), sin.push_back(h.sin);
      CHECK(all_in(cos) == e.tables_half);
      CHECK(all_in(sin) == e.tables_half);
      CHECK(all_in(rotate_held(plan, x, 12345)) == e.stored_half);
      CHECK(table_dtype(Pipeline{e.kind, d}) == (e.tables_half ? d : Dtype::fp32));
    }
  }
}
