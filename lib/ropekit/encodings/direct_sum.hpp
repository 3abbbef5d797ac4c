#pragma once
// G = (+)_j G_j(Dp); features the union of the parts' features (one constant column). Also parses the
// fixed-basis sums rope-alibi (RoPE (+) ALiBi), direct-sum-poly (RoPE (+) poly) and the keyed direct-sum
// (RoPE (+) ALiBi (+) real Jordan).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct DirectSum {
  std::vector<Encoding> parts;
  static const FamilyInfo& info();
};

std::string print(const DirectSum& f, bool nested);
bool is_exact(const DirectSum& f);
bool is_orthogonal(const DirectSum& f);
bool is_relative(const DirectSum& f);
int lag_dims(const DirectSum& f);
bool has_frequencies(const DirectSum& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const DirectSum& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const DirectSum& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const DirectSum& f, BlockContext& ctx);
Features features(const DirectSum& f, const Lags& lags);
std::int64_t feature_count(const DirectSum& f);

}  // namespace ropekit::enc
