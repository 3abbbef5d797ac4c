#pragma once
// Complex Jordan block of order m per frequency (Jordan-RoPE eq. 3.3): e^{-gamma Dp} R(theta_i Dp) (x)
// exp(eta tau N_m), tau = Dp (exact) or the bounded shear time Dp / (1 + |Dp|/L) (stabilized); features'
// that = eta tau. eta = 1/L unless given (a tuned shear rate: L is an integer, eta a real number). G carries the
// scheme's attention factor a^2 as rope's does.

#include <cstdint>
#include <optional>
#include <string>

#include "ropekit/core/lags.hpp"
#include "ropekit/encodings/family.hpp"

namespace ropekit::enc {

struct Jordan {
  FrequencySchedule freqs;
  int m = 2;
  double gamma = 1e-4;
  bool bounded_tau = true;
  int L = 1024;
  std::optional<double> eta = std::nullopt;  ///< shear rate: finite, > 0, 1/eta finite; empty: 1/L (not spelled)
  static const FamilyInfo& info();
};

std::string print(const Jordan& f, bool nested);
bool is_exact(const Jordan& f);
bool is_orthogonal(const Jordan& f);
bool is_relative(const Jordan& f);
int lag_dims(const Jordan& f);
bool has_frequencies(const Jordan& f);
/// The frequency schedule (nullptr: the family has none of its own).
const FrequencySchedule* schedule(const Jordan& f);
/// @throws InputError where the family has no frequencies.
FrequencyTable frequencies(const Jordan& f, std::optional<double> seq_len, Convention convention, bool float32);
void append_blocks(const Jordan& f, BlockContext& ctx);
Features features(const Jordan& f, const Lags& lags);
std::int64_t feature_count(const Jordan& f);

}  // namespace ropekit::enc
