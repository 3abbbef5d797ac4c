// Fuzz harness: GGUF bytes (read_gguf from a stream, model_from_gguf), what `ropekit model FILE.gguf` reads: no
// read past the input, and a model's encoding parses.

#include <sstream>
#include <string>

#include "fuzz_support.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/models/gguf.hpp"

using namespace ropekit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz::run([&] {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    const GgufFile g = read_gguf(in, size, "fuzz.gguf");
    const Model m = model_from_gguf(g, "fuzz.gguf");
    for (const auto& l : m.layer_types)
      (void)fuzz::must("parse_encoding of a GGUF layer type's spelling", [&] { return parse_encoding(spelling(l.encoding)); });
  });
}
