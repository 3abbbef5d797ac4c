#pragma once
// GGUF (llama.cpp's model file, versions 2 and 3; ggml's docs/gguf.md): the metadata key-value section and the
// rope tensors (`rope_freqs`, `rope_factors_long`, `rope_factors_short`), read without the weights. A real file is
// gigabytes: the reader seeks past every value it does not need, checks each length and count against the
// file's size before reading, and reads at most kMaxGgufMetadataBytes of metadata. Not a general GGUF library.

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ropekit/models/model.hpp"

namespace ropekit {

/// Most metadata bytes read (a Llama 3 file's vocabulary is about 3 MB of it).
inline constexpr std::uint64_t kMaxGgufMetadataBytes = std::uint64_t{256} << 20;

/// The values of the keys a model needs: numbers (any integer or float type, as double), strings, bools, and
/// arrays of numbers (`rope.dimension_sections`); other arrays are skipped (their element count is kept).
using GgufValue = std::variant<double, std::string, bool, std::vector<double>>;

/// What the reader took from a GGUF file.
struct GgufFile {
  std::uint32_t version = 0;
  std::map<std::string, GgufValue> metadata;         ///< every key, arrays of strings as their count only
  std::map<std::string, std::uint32_t> types;        ///< each key's GGUF value type (0 uint8 ... 12 float64)
  std::map<std::string, std::uint32_t> element_types;  ///< an array key's element type
  std::map<std::string, std::vector<double>> tensors;  ///< the rope tensors present (float32 values)
};

/// Reads the metadata and rope tensors of a GGUF file.
/// @throws InputError "<path>: ..." naming the offset and the field for a malformed or truncated file, a key or a
/// tensor name given twice, or a tensor offset that is not a multiple of the alignment (ggml refuses all three).
GgufFile read_gguf(const std::string& path);
/// The same from a stream of `size` bytes (`source` names it in messages).
GgufFile read_gguf(std::istream& in, std::uint64_t size, const std::string& source);

/// The name ggml gives a GGUF value type ("uint32", "float32", "string", "array", ...).
std::string gguf_type_name(std::uint32_t type);

/// The model a GGUF file describes (llama.cpp's reading of its keys). A key of another type than llama.cpp reads
/// it as is refused naming the key, its type and the expected one (llama.cpp's loader refuses it too); an absent
/// rope.freq_base or rope.dimension_count takes llama.cpp's default (10000; the head size), said in a note.
Model model_from_gguf(const GgufFile& g, const std::string& source);

}  // namespace ropekit
