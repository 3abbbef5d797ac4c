#pragma once
// Unipotent shear of order k: exp((tau/L) N_k); features 1, that^1..that^(k-1).

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct Poly {
  int k = 4;
  bool bounded_tau = true;
  int L = 1024;
  static const FamilyInfo& info();
};

std::string print(const Poly& f, bool nested);
bool is_exact(const Poly& f);
bool is_orthogonal(const Poly& f);
bool is_relative(const Poly& f);
int lag_dims(const Poly& f);
bool has_frequencies(const Poly& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const Poly& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const Poly& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const Poly& f, BlockContext& ctx);
Features features(const Poly& f, const Lags& lags);
std::int64_t feature_count(const Poly& f);

}  // namespace ropekit::enc

namespace ropekit::enc {
/// k, tau, L (the fixed-basis direct-sum-poly takes them too).
const std::array<Key<Poly>, 3>& poly_keys();
}  // namespace ropekit::enc
