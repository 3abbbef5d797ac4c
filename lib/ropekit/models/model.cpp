#include "ropekit/models/model.hpp"

#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "ropekit/core/input_file.hpp"
#include "ropekit/models/gguf.hpp"
#include "ropekit/models/hf_config.hpp"

namespace ropekit {

namespace {

// The first 4 bytes of a regular file. Anything else (a FIFO, a device, a directory) is refused before it is opened,
// with read_file's message: opening a FIFO blocks until a writer comes. Opened without blocking, and checked again
// on the descriptor, should the name be swapped after the stat.
std::string magic_of(const std::string& path) {
  struct stat st {};
  const bool nul = path.find('\0') != std::string::npos;  // the system would see a shorter name: read_file refuses it
  if (nul || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) (void)read_file(path, "model file", 0);  // throws
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) (void)read_file(path, "model file", 0);
  char magic[4] = {};
  ssize_t n = -1;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) n = ::read(fd, magic, sizeof magic);
  ::close(fd);
  if (!S_ISREG(st.st_mode)) (void)read_file(path, "model file", 0);
  return std::string(magic, static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
}

}  // namespace

Model read_model(const std::string& path) {
  // GGUF by its magic, read without the weights; anything else must be a config.json.
  if (magic_of(path) == "GGUF") return model_from_gguf(read_gguf(path), path);
  const std::string text = read_file(path, "model file", kMaxConfigJsonBytes);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return read_hf_config(text, path);
  throw InputError(fmt::format("{}: not a model file (a HuggingFace config.json is a JSON object; a GGUF file starts with 'GGUF')", path));
}

std::string layer_notes(const Model& m, const LayerType& l) {
  std::string out;
  for (const auto* notes : {&l.notes, &m.notes})
    for (const auto& n : *notes) out += (out.empty() ? "" : "; ") + n;
  return out;
}

std::string_view pairing_name(Pairing p) {
  switch (p) {
    case Pairing::half: return "half";
    case Pairing::adjacent: return "adjacent";
  }
  return "half";  // unreachable: every enumerator is named above
}

std::string window_text(const Window& w) {
  switch (w.kind) {
    case Window::Kind::sliding: return fmt::format("sliding {}", w.span);
    case Window::Kind::chunked: return fmt::format("chunked {}", w.span);
    case Window::Kind::full: break;
  }
  return "";
}

std::optional<std::int64_t> window_span(const Window& w) {
  if (w.kind == Window::Kind::full) return std::nullopt;
  return w.span;
}

std::optional<std::int64_t> window_span(const LayerType& l) { return window_span(l.window); }

double query_scale(const QueryTemperature& t, double position) {
  return t.attn_scale * std::log1p(std::floor((position + 1) / t.floor_scale)) + 1;
}

namespace {

std::string type_names(const Model& m) {
  std::string out;
  for (const auto& l : m.layer_types) out += (out.empty() ? "" : ", ") + l.name;
  return out;
}

}  // namespace

const LayerType& find_layer_type(const Model& m, std::string_view name, const Where& where) {
  if (name.empty()) {
    const bool one = std::all_of(m.layer_types.begin(), m.layer_types.end(),
                                 [&](const auto& l) { return spelling(l.encoding) == spelling(m.layer_types.front().encoding); });
    if (!m.layer_types.empty() && one) return m.layer_types.front();
    throw_bad_value(where, "model", fmt::format("'{}'", m.source),
                    fmt::format("a file and a layer type, {}:<layer type>, where the layer types' encodings differ "
                                "(layer types: {})",
                                m.source, type_names(m)));
  }
  for (const auto& l : m.layer_types)
    if (l.name == name) return l;
  throw_bad_value(where, "model", fmt::format("'{}:{}'", m.source, name),
                  fmt::format("a layer type of the model: one of {}", type_names(m)));
}

ModelReference split_model_reference(std::string_view text) {
  const std::string whole(text);
  std::error_code ec;
  const auto colon = whole.rfind(':');
  if (colon == std::string::npos || std::filesystem::exists(whole, ec)) return {whole, ""};
  return {whole.substr(0, colon), whole.substr(colon + 1)};
}

}  // namespace ropekit
