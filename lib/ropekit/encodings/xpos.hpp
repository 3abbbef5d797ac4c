#pragma once
// xPos (Sun et al. 2022): G = (+)_i zeta_i^{Dp/S} R(-theta_i Dp), zeta_i = (2i + 0.4 n)/(1.4 n).

#include <cstdint>
#include <optional>
#include <string>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct Xpos {
  int dim = 128;
  double base = 1e4;
  double scale_base = 512;
  static const FamilyInfo& info();
};

std::string print(const Xpos& f, bool nested);
bool is_exact(const Xpos& f);
bool is_orthogonal(const Xpos& f);
bool is_relative(const Xpos& f);
int lag_dims(const Xpos& f);
bool has_frequencies(const Xpos& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const Xpos& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const Xpos& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const Xpos& f, BlockContext& ctx);
Features features(const Xpos& f, const Lags& lags);
std::int64_t feature_count(const Xpos& f);

}  // namespace ropekit::enc
