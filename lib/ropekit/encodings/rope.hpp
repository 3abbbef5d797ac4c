#pragma once
// Rotary position embedding (RoFormer eq. 15): G = a^2 (+)_i R(-theta_i Dp) (+) I_{n-r}; theta_i from the
// schedule (geometric B^{-2i/r} with an optional scaling scheme, or explicit), a its attention factor, r = 2 F.

#include <cstdint>
#include <optional>
#include <string>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct Rope {
  FrequencySchedule freqs;
  static const FamilyInfo& info();
};

std::string print(const Rope& f, bool nested);
bool is_exact(const Rope& f);
bool is_orthogonal(const Rope& f);
bool is_relative(const Rope& f);
int lag_dims(const Rope& f);
bool has_frequencies(const Rope& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const Rope& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const Rope& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const Rope& f, BlockContext& ctx);
Features features(const Rope& f, const Lags& lags);
std::int64_t feature_count(const Rope& f);

}  // namespace ropekit::enc
