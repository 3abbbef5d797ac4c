#pragma once
// N-D RoPE: G = exp(sum_a Dp_a B_a) from a generator family (nd-rope.md); vector lags.

#include <cstdint>
#include <optional>
#include <string>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"
#include "ropekit/lie/lie.hpp"

namespace ropekit::enc {

struct Nd {
  GeneratorFamily generators;
  std::string spelling;
  static const FamilyInfo& info();
};

std::string print(const Nd& f, bool nested);
bool is_exact(const Nd& f);
bool is_orthogonal(const Nd& f);
bool is_relative(const Nd& f);
int lag_dims(const Nd& f);
bool has_frequencies(const Nd& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const Nd& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const Nd& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const Nd& f, BlockContext& ctx);
Features features(const Nd& f, const Lags& lags);
std::int64_t feature_count(const Nd& f);

}  // namespace ropekit::enc
