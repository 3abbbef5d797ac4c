// The kernel request of a model's layer types (commands/kernel_request.hpp): the window's mask, the query
// temperature and their notes, and --columns checked as Python's columns= (the command line and the module bind these).
#include <cmath>

#include <doctest/doctest.h>

#include "ropekit/core/error.hpp"
#include "ropekit/commands/kernel_request.hpp"
#include "support.hpp"

using namespace ropekit;
using ropekit::test::source_path;

TEST_CASE("kernel request: a sliding layer's mask, Llama 4's s(p), their notes") {
  KernelRequest r;
  r.layers = model_layers(std::vector<std::string>{source_path("data/models/gemma-3-4b.json"),
                                                   source_path("data/models/llama-4-scout.json")},
                          true, Where::options(r.command));
  for (const auto& l : r.layers) r.encodings.push_back(l.encoding);
  REQUIRE(r.encodings.size() == 4);  // gemma sliding, full; scout chunked, full (NoPE)
  const KernelPlan p = plan_kernel(r);
  // Gemma's sliding window 1024 (sliding_window in the file): lags 0..1023 seen, |lag| >= 1024 masked.
  CHECK_FALSE(kernel_masked(r, 0, 1023));
  CHECK(kernel_masked(r, 0, 1024));
  CHECK(kernel_masked(r, 0, -1024));
  CHECK_FALSE(kernel_masked(r, 1, 1e9));
  CHECK(kernel_masked(r, 2, 8192));  // chunks of 8192
  // s(p) = 0.1 ln(1 + floor((p + 1) / 8192)) + 1, by hand: 1 below p = 8191, 1 + 0.1 ln 2 at 8191, 1 + 0.1 ln 9 at
  // 65535.
  CHECK(kernel_query_scale(r, 3, 8190) == 1);
  CHECK(kernel_query_scale(r, 3, 8191) == doctest::Approx(1 + 0.1 * std::log(2.0)).epsilon(1e-15));
  CHECK(kernel_query_scale(r, 3, -65535) == doctest::Approx(1 + 0.1 * std::log(9.0)).epsilon(1e-15));
  CHECK(kernel_query_scale(r, 0, 65535) == 1);
  r.position = 65535;
  CHECK(kernel_query_scale(r, 3, 1) == doctest::Approx(1 + 0.1 * std::log(9.0)).epsilon(1e-15));
  const auto notes = kernel_layer_notes(r, std::pair(0.0, 2000.0));
  REQUIRE(notes.size() == 2);  // gemma's sliding window; scout's temperature (its chunks do not reach 2000)
  // Labels name the file when a request names several.
  CHECK(notes[0] == source_path("data/models/gemma-3-4b.json") +
                        ":sliding_attention: sliding 1024 hides |lag| >= 1024: masked there (empty cells, null in "
                        "JSON), not kernel values");
  CHECK(notes[1].find(":full_attention: the query is scaled by s(p) = 0.1 ln(1 + floor((p + 1)/8192)) + 1 at p = "
                      "65535") != std::string::npos);
  CHECK(kernel_layer_notes(r, std::nullopt).size() == 1);
  (void)p;
  r.position = -1;
  CHECK_THROWS_WITH_AS(plan_kernel(r), "ropekit kernel: --position = -1 (must be a query position >= 0)", InputError);
}

TEST_CASE("kernel request: a window needs 1-D lags") {
  KernelRequest r;
  r.layers = model_layers(std::vector<ModelReference>{{source_path("data/models/gemma-3-4b.json"), "sliding_attention"}},
                          true, Where::options(r.command));
  r.encodings = {"nd:family=axial,dim=8,axes=2"};
  r.lags_text = "1,0;0,1";
  CHECK_THROWS_WITH_AS(plan_kernel(r),
                       "ropekit kernel: --lags = '1,0;0,1' (must be 1-D lags for a model layer type with a window (it "
                       "counts tokens))",
                       InputError);
}

TEST_CASE("kernel request: --columns as Python's columns=: names, order, duplicates, messages") {
  KernelRequest r;
  r.encodings = {"rope:dim=8"};
  const KernelPlan one = plan_kernel(r);
  CHECK(checked_kernel_columns(r, one, {"kernel", "lag", "kernel"}) == std::vector<std::string>{"kernel", "lag"});
  CHECK_THROWS_WITH_AS(checked_kernel_columns(r, one, {"expected_kernel"}),
                       "ropekit kernel: --columns = 'expected_kernel' (must be columns of this encoding's kernel: "
                       "encoding, lag, kernel, content_variance, sine_residual, continuum, continuum_sine)",
                       InputError);
  r.encodings = {"rope:dim=8", "xpos:dim=8"};
  const KernelPlan two = plan_kernel(r);
  CHECK(checked_kernel_columns(r, two, {"continuum", "expected_kernel", "encoding"}) ==
        std::vector<std::string>{"continuum", "encoding"});  // no rf-rope here: left out
  CHECK_THROWS_WITH_AS(checked_kernel_columns(r, two, {"kernal"}),
                       "ropekit kernel: --columns = 'kernal' (must be columns of kernel: encoding, lag, kernel, "
                       "content_variance, expected_kernel, frequency_variance, sine_residual, continuum, "
                       "continuum_sine)",
                       InputError);
}
