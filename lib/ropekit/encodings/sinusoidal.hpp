#pragma once
// Absolute sinusoidal, added to the input (RoFormer slides, spec section 4): not relative. Its relativity
// defect (exactness) is the only quantity of the contract it has.

#include <cstdint>
#include <optional>
#include <string>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct Sinusoidal {
  int dim = 128;
  double base = 1e4;
  std::uint64_t seed = 1;
  static const FamilyInfo& info();
};

std::string print(const Sinusoidal& f, bool nested);
bool is_exact(const Sinusoidal& f);
bool is_orthogonal(const Sinusoidal& f);
bool is_relative(const Sinusoidal& f);
int lag_dims(const Sinusoidal& f);
bool has_frequencies(const Sinusoidal& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const Sinusoidal& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const Sinusoidal& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const Sinusoidal& f, BlockContext& ctx);
Features features(const Sinusoidal& f, const Lags& lags);
std::int64_t feature_count(const Sinusoidal& f);

}  // namespace ropekit::enc

namespace ropekit::enc {
/// Relativity defect of the position-position term p_m^T W p_n over the window (the other defects NaN).
Exactness exactness(const Sinusoidal& s, const std::vector<double>& window);
}  // namespace ropekit::enc
