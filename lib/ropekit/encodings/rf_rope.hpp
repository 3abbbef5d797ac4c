#pragma once
// RF-RoPE: rotary blocks at frequencies drawn from a spectral density (rf-rope.md section 2); the realised
// kernel of the drawn frequencies beside the closed-form expected kernel Phi and Prop 4's variance (kernel_rows).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct RfRope {
  SampledFrequencies freqs;
  static const FamilyInfo& info();
};

std::string print(const RfRope& f, bool nested);
bool is_exact(const RfRope& f);
bool is_orthogonal(const RfRope& f);
bool is_relative(const RfRope& f);
int lag_dims(const RfRope& f);
bool has_frequencies(const RfRope& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const RfRope& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const RfRope& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const RfRope& f, BlockContext& ctx);
Features features(const RfRope& f, const Lags& lags);
std::int64_t feature_count(const RfRope& f);

}  // namespace ropekit::enc

namespace ropekit::enc {
/// k-D rf-rope: rotary blocks at phases -w_i . Dp (lag.size() == lag_dims).
std::vector<Block> rf_blocks(const RfRope& f, std::span<const double> lag, FrequencyCache& cache);
}  // namespace ropekit::enc
