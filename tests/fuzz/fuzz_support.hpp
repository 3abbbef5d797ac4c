#pragma once
// Shared by the fuzz harnesses (tests/fuzz/fuzz_*.cpp). A harness feeds its input to one parser and
// evaluates what it parsed a little. InputError is the promised clean error, a normal outcome; any other
// exception, a failed invariant, a crash, a sanitizer report or a hang is a bug.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>

#include "ropekit/core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace ropekit::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Reports a bug and aborts (libFuzzer saves the input as crash-*; the replay test fails).
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz: BUG: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Asserts an invariant of the parsed value (independent of how it was computed).
inline void require(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

/// Runs body; InputError is accepted, anything else escaping is a bug.
template <class Body>
int run(Body&& body) {
  try {
    body();
  } catch (const InputError&) {
    // The clean one-line error the command line promises.
  } catch (const std::exception& e) {
    fail(std::string("exception escaped (the command line would print 'internal error'): ") + typeid(e).name() +
         ": " + e.what());
  }
  return 0;
}

/// For a step that must succeed once parsing did (a round trip): InputError there is a bug too.
template <class Body>
auto must(std::string_view step, Body&& body) {
  try {
    return body();
  } catch (const InputError& e) {
    fail(std::string(step) + " threw InputError on a value that had parsed: " + e.what());
  }
}

}  // namespace ropekit::fuzz
