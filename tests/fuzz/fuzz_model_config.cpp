// Fuzz harness: HuggingFace config.json text (read_hf_config, what `ropekit model FILE` reads), then every layer
// type's encoding through the encoding parser: its spelling must parse and round-trip, its attention factor and
// softmax scale be finite and > 0.

#include <string>

#include <fmt/format.h>

#include "fuzz_support.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/models/hf_config.hpp"

using namespace ropekit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz::run([&] {
    const Model m = read_hf_config(fuzz::as_text(data, size), "fuzz.json");
    for (const auto& l : m.layer_types) {
      // The reader's value prints a spelling that parses back to the same spelling (canonical).
      const std::string spelled = spelling(l.encoding);
      const Encoding e = fuzz::must("parse_encoding of a layer type's spelling", [&] { return parse_encoding(spelled); });
      fuzz::require(spelling(e) == spelled, fmt::format("layer type {}: '{}' is not canonical", l.name, spelled));
      fuzz::require(l.attention_factor > 0 && std::isfinite(l.attention_factor) && l.softmax_scale > 0 &&
                        std::isfinite(l.softmax_scale),
                    fmt::format("layer type {}: attention factor {}, softmax scale {}", l.name, l.attention_factor,
                                l.softmax_scale));
    }
  });
}
