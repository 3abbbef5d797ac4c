// The pipelines' table (precision/pipelines.hpp): names and aliases, the refusal, and each row's stage dtypes seen
// in what the arithmetic holds: the tables and the rotated vector of a bf16 model are bf16 values exactly where the
// framework's code keeps them in the model dtype (read from each framework's source, written out here by hand).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "ropekit/precision/score.hpp"

using namespace ropekit;

namespace {

bool all_bf16(const std::vector<double>& v) {
  for (const double x : v)
    if (round_to(Dtype::bf16, x) != x) return false;
  return true;
}

}  // namespace

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
  CHECK_THROWS_WITH_AS(parse_pipeline("", where),
                       "ropekit precision: --pipeline = '' (must be huggingface, ggml, vllm, flash or llama4)",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_pipeline("ONNX", where),
                       "ropekit precision: --pipeline = 'ONNX' (must be huggingface, ggml, vllm, flash or llama4)",
                       InputError);
  CHECK(pipeline_list_rows().size() == pipelines().size());
  for (const auto& row : pipeline_list_rows()) CHECK(row.size() == pipeline_list_columns().size());
}

TEST_CASE("pipelines: a bf16 model's tables and rotated vector are bf16 where the framework keeps them so") {
  // Expected per pipeline, from the frameworks' code: transformers casts cos/sin to the model dtype and rotates in
  // it; vLLM's cache and flash-attention's cos/sin are in the model dtype, the rotation in fp32 registers stored in
  // the model dtype; Llama 4's complex64 freqs_cis is never cast, the product cast back; ggml is f32 throughout.
  struct Expect {
    PipelineKind kind;
    bool tables_bf16, stored_bf16;
  };
  const std::vector<Expect> expected = {{PipelineKind::huggingface, true, true},
                                        {PipelineKind::ggml, false, false},
                                        {PipelineKind::vllm, true, true},
                                        {PipelineKind::flash, true, true},
                                        {PipelineKind::llama4, false, true}};
  CHECK(expected.size() == pipelines().size());
  std::vector<double> x(64);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = round_to(Dtype::bf16, std::sin(1.0 + 0.37 * static_cast<double>(i)));
  for (const Expect& e : expected) {
    CAPTURE(pipeline_name(e.kind));
    const PrecisionPlan plan =
        plan_precision("test", parse_encoding("rope:dim=64,base=1e4"), Pipeline{e.kind, Dtype::bf16});
    std::vector<double> cos, sin;
    for (const HeldPair& h : held_table(plan, 12345)) cos.push_back(h.cos), sin.push_back(h.sin);
    CHECK(all_bf16(cos) == e.tables_bf16);
    CHECK(all_bf16(sin) == e.tables_bf16);
    CHECK(all_bf16(rotate_held(plan, x, 12345)) == e.stored_bf16);
    CHECK(table_dtype(Pipeline{e.kind, Dtype::fp16}) == (e.tables_bf16 ? Dtype::fp16 : Dtype::fp32));
  }
}
