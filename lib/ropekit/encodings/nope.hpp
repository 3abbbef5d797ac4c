#pragma once
// No position: G = I_dim (a NoPE layer; with dim, the unrotated part of a decoupled head such as DeepSeek's MLA,
// direct-sum:[rope(...),nope(dim=128)]). The kernel is 1; in a direct sum the dim weighs the part's trace.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct Nope {
  int dim = 1;  ///< identity dims, 1..kMaxNopeDim
  static const FamilyInfo& info();
};
constexpr int kMaxNopeDim = 1 << 20;
const std::array<Key<Nope>, 1>& nope_keys();

std::string print(const Nope& f, bool nested);
bool is_exact(const Nope& f);
bool is_orthogonal(const Nope& f);
bool is_relative(const Nope& f);
int lag_dims(const Nope& f);
bool has_frequencies(const Nope& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const Nope& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const Nope& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const Nope& f, BlockContext& ctx);
Features features(const Nope& f, const Lags& lags);
std::int64_t feature_count(const Nope& f);

}  // namespace ropekit::enc
