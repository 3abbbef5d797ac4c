#pragma once
// What every encoding family file (encodings/<family>.hpp) is built from: the family's static info record (name,
// the names the parser accepts, its `ropekit list encodings` lines, example spelling), the key descriptors that
// drive parse, print and the "known keys" list together, and the context that blocks are appended in.
// encoding.cpp folds the parser table, the listing and the messages from the records in the variant's order.

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encodings/block.hpp"
#include "ropekit/encodings/frequencies.hpp"
#include "ropekit/encodings/types.hpp"

namespace ropekit {

/// One line of `ropekit list encodings`.
struct EncodingFamilyInfo {
  std::string spelling;   ///< e.g. "rope:dim=<n>,base=<B>[,F=<F>,partial=<p>,scaling=<scheme>(...)]"
  std::string aliases;    ///< reference names
  std::string operator_;  ///< G per block
  std::string features;   ///< columns
  /// `list encodings --verbose`: each key with its constraint and default (empty in a record: the family's, made
  /// by family_keys_text), and a spelling that parses (empty in a record: the family's example).
  std::string keys{}, example{};
};

class ParseContext;
/// A name the parser accepts and the family value it builds. listed: named in "unknown encoding family" messages.
struct FamilyParser {
  std::string_view name;
  Encoding (*parse)(Spelling& s, const ParseContext& ctx);
  bool listed = true;
};

/// Whether a family has rotary frequencies (has_frequencies), as the "with rotary frequencies" message names it.
enum class Rotary { never, always, sometimes, of_parts };

/// How a key's value is read, validated and printed.
enum class KeyKind {
  integer,      ///< an integer in [min, max] (even: and even, "a positive even integer")
  positive,     ///< finite and > 0
  nonnegative,  ///< finite and >= 0
  tau,          ///< bounded | raw (the bool is "bounded")
  rate,         ///< optional: finite, > 0 with 1/value finite; printed only when set
  seed,         ///< an unsigned 64-bit integer
  fraction,     ///< in (0, 1]
};

/// What a key accepts, as the contract test derives bad values from it (tests/encodings/test_family_keys.cpp):
/// the kind, and for integers the range and evenness.
struct KeyRule {
  std::string_view name;
  KeyKind kind;
  std::int64_t min = 0, max = std::numeric_limits<int>::max();
  bool even = false;
  std::string default_text{};  ///< the value an absent key takes, as `list encodings --verbose` shows it
};

/// A family's static record (each family struct has `static const FamilyInfo& info()`).
struct FamilyInfo {
  std::string_view name;                 ///< family_name(): the canonical spelling's family
  std::vector<FamilyParser> parsers;     ///< the names it is parsed from, in listing order
  std::vector<EncodingFamilyInfo> list;  ///< its `ropekit list encodings` lines
  std::string_view example;              ///< a small spelling every contract test runs
  Rotary rotary = Rotary::never;
  std::string_view rotary_when{};        ///< Rotary::sometimes / of_parts: "nd with torus generators"
  /// The names `fit-params --free` may name (fit/tunable.hpp): "factor" where the scheme has one, "scale" for the
  /// spectrum's scale key (sigma, b, l, W) where it has one; empty: the family has no tunable parameters.
  std::vector<std::string_view> tunable{};
  /// Its own keys' rules (from its key table, key_rules(kKeys)); nested spellings (spectrum, scaling, parts) are
  /// checked by their own parsers.
  std::vector<KeyRule> keys{};
  /// Whether it takes the frequency schedule's keys (schedule_key_rules(): dim, base, F, partial).
  bool schedule = false;
  /// `list encodings --verbose`: the keys its rules leave out (nested spellings, words, lists).
  std::string_view more_keys{};
};

/// Where an absent key's value comes from: the struct's default member value or the run's EncodingDefaults.
enum class Fallback { member, dim, base, gamma, L, tau };

/// One key of a family's spelling: the member it sets, its kind and its fallback (a key table is an array of
/// these in print order; parsing reads them in the same order after the frequency keys).
template <class F>
struct Key {
  using Member = std::variant<int F::*, double F::*, bool F::*, std::optional<double> F::*, std::uint64_t F::*>;
  std::string_view name;
  Member member;
  KeyKind kind = KeyKind::positive;
  Fallback fallback = Fallback::member;
  std::int64_t min = 0, max = std::numeric_limits<int>::max();
  bool even = false;
};

using KeyValues = std::vector<std::pair<std::string, std::string>>;

/// The parser of one spelling (top level or nested): Where, the run's defaults, the checks with their messages.
class ParseContext {
 public:
  ParseContext(const Where& where, const EncodingDefaults& defaults) : where_(where), defaults_(defaults) {}
  const Where& where() const { return where_; }
  const EncodingDefaults& defaults() const { return defaults_; }

  /// "<where>: <spelling>: <key> = <value> (must be <constraint>)".
  [[noreturn]] void bad(const Spelling& s, std::string_view key, std::string_view value,
                        std::string_view constraint) const;
  /// An InputError from a check below the parser, prefixed "<where>: <spelling>: " (frequencies' own prefix dropped).
  [[noreturn]] void rethrow(const Spelling& s, const InputError& e) const;
  int take_int_in(Spelling& s, std::string_view key, int fallback, int min, int max) const;
  double take_positive(Spelling& s, std::string_view key, double fallback) const;
  double take_nonnegative(Spelling& s, std::string_view key, double fallback) const;
  bool take_tau(Spelling& s) const;
  std::optional<double> take_rate(Spelling& s, std::string_view key) const;
  std::uint64_t take_seed(Spelling& s, std::string_view key, std::uint64_t fallback) const;
  double take_fraction(Spelling& s, std::string_view key, double fallback) const;
  /// dim, base, F, partial, scaling | freqs=[...] | file=PATH, validated by evaluating them once.
  FrequencySchedule take_schedule(Spelling& s) const;
  /// A nested part of a direct sum, through the whole parser table.
  Encoding parse_part(Spelling& s) const;

  /// Reads every key of the table into f, in order.
  template <class F, std::size_t N>
  void take_keys(Spelling& s, const std::array<Key<F>, N>& keys, F& f) const {
    for (const auto& k : keys) take_key(s, k, f);
  }

 private:
  template <class F>
  void take_key(Spelling& s, const Key<F>& k, F& f) const;
  double fallback_double(Fallback from, double member) const;
  int fallback_int(Fallback from, int member) const;

  const Where& where_;
  const EncodingDefaults& defaults_;
};

/// The schedule's keys as printed: dim, base, [partial,] F | freqs=[...] | file, then scaling.
KeyValues schedule_keys(const FrequencySchedule& f);
/// The schedule's key names for finish(): "dim, base, F, partial, scaling, freqs, file".
inline constexpr std::string_view kFreqKeys = "dim, base, F, partial, scaling, freqs, file";

/// The table's values as printed (integers in decimal, reals shortest round trip, tau as bounded|raw, a rate
/// only when set).
template <class F, std::size_t N>
KeyValues print_keys(const std::array<Key<F>, N>& keys, const F& f);
/// The table's names joined by ", " (then `more`, if not empty), for Spelling::finish.
template <class F, std::size_t N>
std::string key_names(const std::array<Key<F>, N>& keys, std::string_view more = {});

/// "family:k=v,..." or, nested inside a direct sum, "family(k=v,...)".
std::string spell(std::string_view family, const KeyValues& keys, bool nested);
/// "encoding '<spelling>' has no frequencies".
[[noreturn]] void throw_no_frequencies(const Encoding& e);
/// The nested spelling of a part of a direct sum.
std::string nested_spelling(const Encoding& e);

// ---------------------------------------------------------------------------------------------
// Blocks.

/// The frequencies of each schedule of an encoding, computed once per call over many lags (they depend on the
/// sequence length only, fixed per call); deque: references stay valid as tables are added.
class FrequencyCache {
 public:
  template <class Make>
  const FrequencyTable& get(const void* key, Make&& make) {
    for (const auto& [k, t] : tables_)
      if (k == key) return t;
    tables_.emplace_back(key, make());
    return tables_.back().second;
  }
  /// True if t is one of this cache's tables (a table that stays the same at every lag).
  bool holds(const FrequencyTable* t) const {
    for (const auto& kt : tables_)
      if (&kt.second == t) return true;
    return false;
  }

 private:
  std::deque<std::pair<const void*, FrequencyTable>> tables_;
};

/// The rotary blocks of one BlockContext::rotary call, kept whole: one per frequency of a cached table (the same at
/// every lag), all with the coefficients c (which may move with the lag).
struct RotaryGroup {
  const FrequencyTable* table = nullptr;
  std::vector<double> c;
};

/// Where blocks(e, lag) appends a family's blocks.
struct BlockContext {
  std::vector<Block>& out;
  double lag = 0;
  std::optional<double> seq_len;
  FrequencyCache& cache;
  /// When set, rotary() of a cached table fills the next RotaryGroup here (groups[groups_used++], reusing its
  /// storage) instead of appending one block per frequency: rotary_spectrum.cpp's grouped kernel.
  std::vector<RotaryGroup>* groups = nullptr;
  std::size_t* groups_used = nullptr;

  /// True for dynamic NTK without a given length: the length is the one a causal model has seen, |Dp| + 1.
  bool per_lag(const FrequencySchedule& f) const;
  /// The schedule's table at this lag's length: per lag into `scratch` (never cached), else from the cache.
  const FrequencyTable& table(const FrequencySchedule& f, FrequencyTable& scratch) const;
  /// One rotary block per frequency at phase -theta_i Dp with coefficients c.
  void rotary(const FrequencyTable& t, const std::vector<double>& c) const;
  /// The n - 2 ceil(r/2) unrotated dims of partial RoPE as one identity block repeated.
  void identity(int dims) const;
};

/// c_p = e^{-gamma Dp} (eta s)^p / p!, p < m (jordan_block.hpp, paper eq. 3.3), s the shear time.
std::vector<double> jordan_chain(int m, double gamma, double eta, double lag, double s);
/// Shear time: Dp / (1 + |Dp|/L) (bounded) or Dp (raw).
inline double shear_time(double d, bool bounded, int L) { return bounded ? d / (1 + std::abs(d) / L) : d; }
/// Identity dims of partial RoPE (n - 2 ceil(r/2)): only geometric schedules have them.
int identity_dims(const FrequencySchedule& f);
/// A schedule's frequency count without computing them: a geometric count (default r/2), a list, or D draws.
std::int64_t schedule_count(const FrequencySchedule& f);
/// True when the schedule's scheme is dynamic NTK (G depends on the sequence length: not a group).
bool is_dynamic(const FrequencySchedule& f);

// Dispatchers the families recurse through (encoding.cpp).
void append_blocks(const Encoding& e, BlockContext& ctx);
std::int64_t feature_count(const Encoding& e);

// ---------------------------------------------------------------------------------------------

template <class F>
void ParseContext::take_key(Spelling& s, const Key<F>& k, F& f) const {
  switch (k.kind) {
    case KeyKind::integer: {
      int& v = f.*std::get<int F::*>(k.member);
      v = take_int_in(s, k.name, fallback_int(k.fallback, v), static_cast<int>(k.min), static_cast<int>(k.max));
      if (k.even && v % 2) bad(s, k.name, std::to_string(v), "a positive even integer");
      break;
    }
    case KeyKind::positive: {
      double& v = f.*std::get<double F::*>(k.member);
      v = take_positive(s, k.name, fallback_double(k.fallback, v));
      break;
    }
    case KeyKind::nonnegative: {
      double& v = f.*std::get<double F::*>(k.member);
      v = take_nonnegative(s, k.name, fallback_double(k.fallback, v));
      break;
    }
    case KeyKind::tau: f.*std::get<bool F::*>(k.member) = take_tau(s); break;
    case KeyKind::rate: f.*std::get<std::optional<double> F::*>(k.member) = take_rate(s, k.name); break;
    case KeyKind::seed: {
      std::uint64_t& v = f.*std::get<std::uint64_t F::*>(k.member);
      v = take_seed(s, k.name, v);
      break;
    }
    case KeyKind::fraction: {
      double& v = f.*std::get<double F::*>(k.member);
      v = take_fraction(s, k.name, v);
      break;
    }
  }
}

std::string format_key(KeyKind kind, int v);
std::string format_key(KeyKind kind, double v);
std::string format_key(KeyKind kind, bool v);
std::string format_key(KeyKind kind, std::uint64_t v);
/// The default text of a key that falls back to the run's defaults: "1024 (fit: the run's --train-context)".
std::string run_default_text(Fallback from);

/// The rules of a key table, for FamilyInfo::keys, with each key's default read from a default F.
template <class F, std::size_t N>
std::vector<KeyRule> key_rules(const std::array<Key<F>, N>& keys) {
  std::vector<KeyRule> out;
  for (const auto& k : keys) {
    std::string def = k.fallback != Fallback::member ? run_default_text(k.fallback) : "unset";
    if (k.fallback == Fallback::member)
      std::visit(
          [&](auto member) {
            if constexpr (!std::is_same_v<decltype(member), std::optional<double> F::*>)
              def = format_key(k.kind, F{}.*member);
          },
          k.member);
    out.push_back({k.name, k.kind, k.min, k.max, k.even, std::move(def)});
  }
  return out;
}
/// "m: integer in [1, 32], default 2; gamma: >= 0, default 0.0001 (fit: --gamma); ...": a family's keys for
/// `list encodings --verbose`, from its rules, the schedule's when it takes one, then more_keys.
std::string family_keys_text(const FamilyInfo& info);
/// The frequency schedule's own keys (take_schedule): dim, base, F, partial.
const std::vector<KeyRule>& schedule_key_rules();

template <class F, std::size_t N>
KeyValues print_keys(const std::array<Key<F>, N>& keys, const F& f) {
  KeyValues out;
  for (const auto& k : keys) {
    if (const auto* rate = std::get_if<std::optional<double> F::*>(&k.member)) {
      if (const auto& v = f.**rate) out.emplace_back(std::string(k.name), format_key(k.kind, *v));
      continue;
    }
    std::visit(
        [&](auto member) {
          if constexpr (!std::is_same_v<decltype(member), std::optional<double> F::*>)
            out.emplace_back(std::string(k.name), format_key(k.kind, f.*member));
        },
        k.member);
  }
  return out;
}

template <class F, std::size_t N>
std::string key_names(const std::array<Key<F>, N>& keys, std::string_view more) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "" : ", ") + std::string(k.name);
  if (!more.empty()) out += (out.empty() ? "" : ", ") + std::string(more);
  return out;
}

}  // namespace ropekit
