#pragma once
// Real order-2 Jordan block: e^{-gamma Dp} [[1, tau/L], [0, 1]].

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct RealJordan {
  double gamma = 1e-4;
  bool bounded_tau = true;
  int L = 1024;
  static const FamilyInfo& info();
};

std::string print(const RealJordan& f, bool nested);
bool is_exact(const RealJordan& f);
bool is_orthogonal(const RealJordan& f);
bool is_relative(const RealJordan& f);
int lag_dims(const RealJordan& f);
bool has_frequencies(const RealJordan& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const RealJordan& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const RealJordan& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const RealJordan& f, BlockContext& ctx);
Features features(const RealJordan& f, const Lags& lags);
std::int64_t feature_count(const RealJordan& f);

}  // namespace ropekit::enc

namespace ropekit::enc {
/// gamma, tau, L (the keyed fixed-basis direct-sum takes them too).
const std::array<Key<RealJordan>, 3>& real_jordan_keys();
}  // namespace ropekit::enc
