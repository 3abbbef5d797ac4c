// A model's layer types taken into a request (models/model_layers.hpp): their spellings, windows, temperatures and
// labels, read from the committed configs (Gemma 3 4B: sliding_window 1024; Llama 4 Scout: chunks of 8192 and NoPE
// layers with a query temperature), and the messages naming --model.
#include <doctest/doctest.h>

#include "ropekit/core/error.hpp"
#include "ropekit/models/model_layers.hpp"
#include "support.hpp"

using namespace ropekit;
using ropekit::test::source_path;

TEST_CASE("model_layers: every layer type, or the one named, with its window span and label") {
  const std::string gemma = source_path("data/models/gemma-3-4b.json");
  const Where where = Where::options("ropekit kernel");
  const auto all = model_layers(std::vector<std::string>{gemma}, true, where);
  REQUIRE(all.size() == 2);
  CHECK(all[0].label == "sliding_attention");
  CHECK(all[0].encoding == "rope:dim=256,base=10000,F=128");
  CHECK(all[0].window == "sliding 1024");
  CHECK(all[0].span == 1024);
  CHECK(all[0].brief == "gemma-3-4b.json: sliding_attention");
  CHECK(all[1].label == "full_attention");
  CHECK(all[1].layer_type == "full_attention");
  CHECK_FALSE(all[1].span);
  // Two files: labels name the file, layer_type does not.
  const auto two = model_layers(std::vector<std::string>{gemma, source_path("data/models/llama-3.1-8b.json")}, true,
                                where);
  REQUIRE(two.size() == 3);
  CHECK(two[0].label == gemma + ":sliding_attention");
  CHECK(two[0].layer_type == "sliding_attention");
  CHECK(two[2].brief == "llama-3.1-8b.json: full_attention");
  const auto one = model_layers(std::vector<ModelReference>{{gemma, "sliding_attention"}}, false, where);
  REQUIRE(one.size() == 1);
  CHECK(one[0].span == 1024);
  CHECK(one_model_layer({{gemma, "full_attention"}}, where).encoding ==
        "rope:dim=256,base=1000000,F=128,scaling=linear(factor=8)");
  CHECK(model_encodings(std::vector<std::string>{gemma}, true, where).size() == 2);
}

TEST_CASE("model_layers: Llama 4's chunked layers and its NoPE layers' query temperature") {
  const std::string scout = source_path("data/models/llama-4-scout.json");
  const auto all = model_layers(std::vector<std::string>{scout}, true, Where::options("ropekit kernel"));
  REQUIRE(all.size() == 2);
  CHECK(all[0].label == "chunked_attention");
  CHECK(all[0].span == 8192);
  CHECK_FALSE(all[0].temperature);
  CHECK(all[1].encoding == "nope:dim=128");
  REQUIRE(all[1].temperature);
  CHECK(all[1].temperature->floor_scale == 8192);
  CHECK(all[1].temperature->attn_scale == 0.1);
  // The values beside the texts: Scout's config names no layer_types, so the reader names its NoPE layers
  // full_attention (transformers' Llama4TextConfig default) and its rotary ones chunked_attention (chunk 8192).
  REQUIRE(all[0].value);
  CHECK(all[0].window_value == Window{Window::Kind::chunked, 8192});
  REQUIRE(all[1].value);
  CHECK(std::get<enc::Nope>(all[1].value->value).dim == 128);
  CHECK(all[1].window_value == Window{});
  // "Layer types keep the config's own names": FILE:full_attention names the NoPE layers, as --model takes it.
  const auto full = model_layers(std::vector<std::string>{scout + ":full_attention"}, false, Where::options("ropekit kernel"));
  REQUIRE(full.size() == 1);
  CHECK(full[0].layer_type == "full_attention");
  CHECK(full[0].encoding == "nope:dim=128");
  CHECK(full[0].temperature);
}

TEST_CASE("model_layers: an unknown layer type, a file that does not read, several encodings for one") {
  const std::string gemma = source_path("data/models/gemma-3-4b.json");
  const Where where = Where::options("ropekit kernel");
  CHECK_THROWS_WITH_AS(model_layers(std::vector<ModelReference>{{gemma, "global"}}, true, where),
                       ("ropekit kernel: --model = '" + gemma + ":global' (must be a layer type of the model: one "
                        "of sliding_attention, full_attention)").c_str(),
                       InputError);
  CHECK_THROWS_WITH_AS(model_layers(std::vector<std::string>{"/nonexistent/config.json"}, true, where),
                       doctest::Contains("ropekit kernel: --model: "), InputError);
  CHECK_THROWS_WITH_AS(one_model_layer({{gemma, "full_attention"}, {gemma, "sliding_attention"}}, where),
                       "ropekit kernel: --model = 2 encodings (must be one model layer type (give --model once))",
                       InputError);
  CHECK(model_file_name("/a/b/Llama-3.1-8B/config.json") == "Llama-3.1-8B/config.json");
  CHECK(model_file_name("/a/b/gemma.gguf") == "gemma.gguf");
}
