#pragma once
// The message read_hf_config refuses a config.json text with, or "" when it reads it (the model tests' shared probe).

#include <string>

#include "ropekit/core/error.hpp"
#include "ropekit/models/hf_config.hpp"

inline std::string refusal(const std::string& text) {
  try {
    (void)ropekit::read_hf_config(text, "c.json");
  } catch (const ropekit::InputError& e) {
    return e.what();
  }
  return "";
}
