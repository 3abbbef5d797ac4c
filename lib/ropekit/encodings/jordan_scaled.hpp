#pragma once
// Scaled-exact Jordan: gamma = c/L, eta = 1/L, tau = Dp: an exact one-parameter group.

#include <cstdint>
#include <optional>
#include <string>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct JordanScaled {
  FrequencySchedule freqs;
  int m = 3;
  double c = 1;
  int L = 1024;
  static const FamilyInfo& info();
};

std::string print(const JordanScaled& f, bool nested);
bool is_exact(const JordanScaled& f);
bool is_orthogonal(const JordanScaled& f);
bool is_relative(const JordanScaled& f);
int lag_dims(const JordanScaled& f);
bool has_frequencies(const JordanScaled& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const JordanScaled& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const JordanScaled& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const JordanScaled& f, BlockContext& ctx);
Features features(const JordanScaled& f, const Lags& lags);
std::int64_t feature_count(const JordanScaled& f);

}  // namespace ropekit::enc
