#pragma once
// A minimal GGUF v3 file written byte by byte from ggml's GGUF specification (magic, version, tensor and key-value
// counts, typed key-value pairs; no tensors): what a test needs to hand a GGUF to `--model`. The full writer, with
// tensors and arrays, is in tests/models/test_gguf.cpp.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ropekit::test {

inline std::string minimal_gguf(const std::vector<std::pair<std::string, float>>& f32,
                                const std::vector<std::pair<std::string, std::uint32_t>>& u32,
                                const std::vector<std::pair<std::string, std::string>>& strings) {
  std::string b = "GGUF";
  const auto raw = [&](auto v) { b.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  const auto str = [&](const std::string& s) {
    raw(static_cast<std::uint64_t>(s.size()));
    b += s;
  };
  raw(std::uint32_t{3});                                                   // version
  raw(std::uint64_t{0});                                                   // tensors
  raw(static_cast<std::uint64_t>(f32.size() + u32.size() + strings.size()));  // key-value pairs
  for (const auto& [k, v] : strings) str(k), raw(std::uint32_t{8}), str(v);   // STRING
  for (const auto& [k, v] : u32) str(k), raw(std::uint32_t{4}), raw(v);       // UINT32
  for (const auto& [k, v] : f32) str(k), raw(std::uint32_t{6}), raw(v);       // FLOAT32
  while (b.size() % 32) b += '\0';
  return b;
}

}  // namespace ropekit::test
