#pragma once
// Damped RoPE: e^{-gamma Dp} R(-theta_i Dp).

#include <cstdint>
#include <optional>
#include <string>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct Damped {
  FrequencySchedule freqs;
  double gamma = 1e-4;
  static const FamilyInfo& info();
};

std::string print(const Damped& f, bool nested);
bool is_exact(const Damped& f);
bool is_orthogonal(const Damped& f);
bool is_relative(const Damped& f);
int lag_dims(const Damped& f);
bool has_frequencies(const Damped& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const Damped& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const Damped& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const Damped& f, BlockContext& ctx);
Features features(const Damped& f, const Lags& lags);
std::int64_t feature_count(const Damped& f);

}  // namespace ropekit::enc
