#include "ropekit/encodings/family.hpp"

#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/cancel.hpp"
#include "ropekit/core/echo.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/basis.hpp"
#include "ropekit/encodings/jordan_block.hpp"
#include "ropekit/spectral/spectrum.hpp"

namespace ropekit {

namespace {

constexpr int kMaxDim = 1 << 24;

bool has(const Spelling& s, std::string_view key) {
  for (const auto& [k, v] : s.params())
    if (k == key) return true;
  return false;
}

// "ropekit::frequencies: dim = 7 (...)" -> "dim = 7 (...)": the caller names the spelling.
std::string strip_context(const std::string& what) {
  const std::string prefix = "ropekit::frequencies: ";
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parsing.

void ParseContext::bad(const Spelling& s, std::string_view key, std::string_view value,
                       std::string_view constraint) const {
  throw InputError(fmt::format("{}: {}: {} = {} (must be {})", where_.context, s.where(), s.name(key),
                               bounded(value), constraint));
}

void ParseContext::rethrow(const Spelling& s, const InputError& e) const {
  throw InputError(fmt::format("{}: {}: {}", where_.context, s.where(), strip_context(e.what())));
}

int ParseContext::take_int_in(Spelling& s, std::string_view key, int fallback, int min, int max) const {
  const auto v = s.take_int(key);
  if (!v) return fallback;
  if (*v < min || *v > max) bad(s, key, std::to_string(*v), fmt::format("an integer in [{}, {}]", min, max));
  return static_cast<int>(*v);
}

double ParseContext::take_positive(Spelling& s, std::string_view key, double fallback) const {
  const auto v = s.take_double(key);
  if (!v) return fallback;
  if (!(*v > 0) || !std::isfinite(*v)) bad(s, key, format_number(*v), "finite and > 0");
  return *v;
}

double ParseContext::take_nonnegative(Spelling& s, std::string_view key, double fallback) const {
  const auto v = s.take_double(key);
  if (!v) return fallback;
  if (!(*v >= 0) || !std::isfinite(*v)) bad(s, key, format_number(*v), "finite and >= 0");
  return *v;
}

bool ParseContext::take_tau(Spelling& s) const {
  const auto v = s.take_word("tau");
  if (!v) return defaults_.bounded_tau;
  if (*v == "bounded") return true;
  if (*v == "raw") return false;
  bad(s, "tau", *v, "bounded or raw");
}

// A shear rate: finite, > 0 and 1/eta finite (the bounded shear time tends to 1/eta); absent: 1/L.
std::optional<double> ParseContext::take_rate(Spelling& s, std::string_view key) const {
  const auto v = s.take_double(key);
  if (v && (!(*v > 0) || !std::isfinite(*v) || !std::isfinite(1 / *v)))
    bad(s, key, format_number(*v), fmt::format("finite and > 0 with 1/{} finite", key));
  return v;
}

std::uint64_t ParseContext::take_seed(Spelling& s, std::string_view key, std::uint64_t fallback) const {
  const auto seed = s.take_text(key);
  if (!seed) return fallback;
  // Named with the spelling, as every other key's refusal is.
  const Where where(fmt::format("{}: {}", where_.context, s.where()));
  return parse_unsigned_in(*seed, where, s.name(key), std::numeric_limits<std::uint64_t>::max());
}

double ParseContext::take_fraction(Spelling& s, std::string_view key, double fallback) const {
  const auto v = s.take_double(key);
  if (!v) return fallback;
  if (!(*v > 0 && *v <= 1)) bad(s, key, format_number(*v), "in (0, 1]");
  return *v;
}

const std::vector<KeyRule>& schedule_key_rules() {
  static const std::vector<KeyRule> rules = {
      {"dim", KeyKind::integer, 2, kMaxDim, true, run_default_text(Fallback::dim)},
      {"base", KeyKind::positive, 0, 0, false, run_default_text(Fallback::base)},
      {"F", KeyKind::integer, 1, kMaxNumFreqs, false, "r/2 (fit: --num-freqs)"},
      {"partial", KeyKind::fraction, 0, 0, false, "1 (r = int(dim * partial) rotary dims)"},
  };
  return rules;
}

std::string run_default_text(Fallback from) {
  const EncodingDefaults d;
  switch (from) {
    case Fallback::dim: return fmt::format("{} (fit: --head-dim)", d.dim);
    case Fallback::base: return fmt::format("{} (fit: --theta)", format_number(d.base));
    case Fallback::gamma: return fmt::format("{} (fit: --gamma)", format_number(d.gamma));
    case Fallback::L: return fmt::format("{} (fit: --train-context)", d.L);
    case Fallback::tau: return fmt::format("{} (fit: --tau)", d.bounded_tau ? "bounded" : "raw");
    case Fallback::member: break;
  }
  return "";
}

namespace {
std::string constraint_text(const KeyRule& r) {
  switch (r.kind) {
    case KeyKind::integer:
      if (r.max == std::numeric_limits<int>::max()) return fmt::format("{}integer >= {}", r.even ? "even " : "", r.min);
      return fmt::format("{}integer in [{}, {}]", r.even ? "even " : "", r.min, r.max);
    case KeyKind::positive: return "> 0";
    case KeyKind::nonnegative: return ">= 0";
    case KeyKind::tau: return "bounded or raw";
    case KeyKind::rate: return "> 0";
    case KeyKind::seed: return "integer in [0, 2^64 - 1]";
    case KeyKind::fraction: return "in (0, 1]";
  }
  return "";
}
}  // namespace

std::string family_keys_text(const FamilyInfo& info) {
  std::vector<std::string> parts;
  auto add = [&](const KeyRule& r) {
    parts.push_back(fmt::format("{}: {}, default {}", r.name, constraint_text(r), r.default_text));
  };
  for (const auto& r : info.keys) add(r);
  if (info.schedule) {
    for (const auto& r : schedule_key_rules()) add(r);
    parts.emplace_back("scaling: a scheme (`ropekit list schemes`), default none");
    parts.emplace_back("freqs=[...] | file=<path>: explicit frequencies instead of dim, base, F and partial");
  }
  if (!info.more_keys.empty()) parts.emplace_back(info.more_keys);
  return parts.empty() ? "(none)" : fmt::format("{}", fmt::join(parts, "; "));
}

double ParseContext::fallback_double(Fallback from, double member) const {
  switch (from) {
    case Fallback::base: return defaults_.base;
    case Fallback::gamma: return defaults_.gamma;
    default: return member;
  }
}

int ParseContext::fallback_int(Fallback from, int member) const {
  switch (from) {
    case Fallback::dim: return defaults_.dim;
    case Fallback::L: return defaults_.L;
    default: return member;
  }
}

FrequencySchedule ParseContext::take_schedule(Spelling& s) const {
  FrequencySchedule out;
  auto list = s.take_items("freqs");
  auto file = s.take_word("file");
  if (list || file) {
    if (list && file) bad(s, "freqs", "given with file", "one of freqs=[...] and file=PATH");
    ExplicitFrequencies e;
    if (list) {
      for (const auto& item : *list) {
        const auto v = parse_double(item);
        if (!v || !(*v > 0) || !std::isfinite(*v)) bad(s, "freqs", item, "finite numbers > 0");
        e.values.push_back(*v);
      }
    } else {
      const auto read = read_frequency_file(*file);
      if (read.w.cols() != 1) bad(s, "file", *file, "a file of one frequency per line");
      for (Eigen::Index i = 0; i < read.w.rows(); ++i) {
        const double v = std::abs(read.w(i, 0));
        if (!(v > 0)) bad(s, "file", *file, fmt::format("frequencies > 0 in magnitude (line {} is 0)", i + 1));
        e.values.push_back(v);
      }
      e.source = *file;
    }
    for (auto key : {"dim", "base", "F", "partial"})
      if (s.take_text(key)) bad(s, key, "given with explicit frequencies", "absent: freqs/file fix the frequencies");
    out.source = std::move(e);
  } else {
    Geometric g;
    const bool dim_given = has(s, "dim");
    g.dim = take_int_in(s, "dim", defaults_.dim, 2, kMaxDim);
    g.base = take_positive(s, "base", defaults_.base);
    g.partial = take_fraction(s, "partial", g.partial);
    if (g.dim % 2) bad(s, "dim", std::to_string(g.dim), "a positive even integer");
    // r = int(dim * partial), truncated as transformers does (an odd or fractional product: a note, frequencies.hpp).
    if (truncated_rotary_dims(g) < 1)
      bad(s, "partial", format_number(g.partial),
          fmt::format("such that int(dim * partial) >= 1 (dim * partial = {})", format_number(g.dim * g.partial)));
    // F: given, else ceil(r/2) when dim is given, else the run's F (a fit config's num_freqs), else ceil(r/2).
    const int fallback = dim_given || !defaults_.count ? default_count(g) : *defaults_.count;
    g.count = take_int_in(s, "F", fallback, 1, kMaxNumFreqs);
    out.source = g;
  }
  if (auto sc = s.take_spelling("scaling")) {
    std::map<std::string, std::string> keys;
    for (const auto& [k, v] : sc->params()) keys[k] = v;
    out.scaling = parse_scaling(sc->family(), keys, Where(fmt::format("{}: {}", where_.context, s.where())));
  }
  // Evaluate once so that a bad combination (a scheme on explicit frequencies, longrope lengths) is
  // refused here, naming the spelling. Dynamic NTK needs a length: checked at a length past orig.
  try {
    const auto* dyn = std::get_if<scaling::Dynamic>(&out.scaling);
    (void)ropekit::frequencies(out, dyn ? std::optional<double>(2 * dyn->orig) : std::nullopt);
  } catch (const InputError& e) {
    rethrow(s, e);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Printing: every parameter explicit, so a spelling means the same under any defaults.

KeyValues schedule_keys(const FrequencySchedule& f) {
  KeyValues keys;
  std::visit(Overloaded{
                 [&](const Geometric& g) {
                   keys.emplace_back("dim", std::to_string(g.dim));
                   keys.emplace_back("base", format_number(g.base));
                   if (g.partial != 1) keys.emplace_back("partial", format_number(g.partial));
                   keys.emplace_back("F", std::to_string(g.count.value_or(default_count(g))));
                 },
                 [&](const ExplicitFrequencies& e) {
                   if (!e.source.empty()) {
                     keys.emplace_back("file", e.source);
                   } else {
                     keys.emplace_back("freqs", format_numbers(e.values));
                   }
                 },
                 [&](const SampledFrequencies&) {},
             },
             f.source);
  if (!std::holds_alternative<scaling::None>(f.scaling)) keys.emplace_back("scaling", spelling(f.scaling));
  return keys;
}

std::string format_key(KeyKind, int v) { return std::to_string(v); }
std::string format_key(KeyKind, double v) { return format_number(v); }
std::string format_key(KeyKind, bool v) { return v ? "bounded" : "raw"; }
std::string format_key(KeyKind, std::uint64_t v) { return std::to_string(v); }

std::string spell(std::string_view family, const KeyValues& keys, bool nested) {
  return nested ? format_nested(family, keys) : format_spelling(family, keys);
}

void throw_no_frequencies(const Encoding& e) {
  throw InputError(fmt::format("encoding '{}' has no frequencies", spelling(e)));
}

// ---------------------------------------------------------------------------------------------
// Blocks.

bool BlockContext::per_lag(const FrequencySchedule& f) const {
  // Without seq_len, schemes that depend on T use the length a causal model has seen at the lag: T = |Dp| + 1.
  return !seq_len && (std::holds_alternative<scaling::Dynamic>(f.scaling) ||
                      std::holds_alternative<scaling::LongRope>(f.scaling));
}

const FrequencyTable& BlockContext::table(const FrequencySchedule& f, FrequencyTable& scratch) const {
  if (per_lag(f)) return scratch = frequencies(f, std::abs(lag) + 1);
  return cache.get(&f, [&] { return frequencies(f, seq_len); });
}

void BlockContext::rotary(const FrequencyTable& t, const std::vector<double>& c) const {
  if (groups && cache.holds(&t)) {
    if (*groups_used == groups->size()) groups->emplace_back();
    RotaryGroup& g = (*groups)[(*groups_used)++];
    g.table = &t;
    g.c.assign(c.begin(), c.end());
    return;
  }
  for (Eigen::Index i = 0; i < t.theta.rows(); ++i) {
    if (i % 65536 == 65535) check_cancelled();  // Ctrl-C within the blocks of a huge encoding (millions of them)
    Block b;
    b.phase = -t.theta(i, 0) * lag;
    b.c = c;
    out.push_back(std::move(b));
  }
}

void BlockContext::identity(int dims) const {
  if (dims > 0) out.push_back(Block{false, 0, {1.0}, dims});
}

std::vector<double> jordan_chain(int m, double gamma, double eta, double lag, double s) {
  const Eigen::VectorXd c = jordan_coefficients(JordanBlock{m, gamma, 0.0, eta}, lag, s);
  return std::vector<double>(c.data(), c.data() + c.size());
}

int identity_dims(const FrequencySchedule& f) {
  if (const auto* g = std::get_if<Geometric>(&f.source)) return unrotated_dims(*g);
  return 0;
}

std::int64_t schedule_count(const FrequencySchedule& f) {
  return std::visit(Overloaded{
                        [](const Geometric& g) -> std::int64_t { return g.count.value_or((rotary_dims(g) + 1) / 2); },
                        [](const ExplicitFrequencies& x) -> std::int64_t { return static_cast<std::int64_t>(x.values.size()); },
                        [](const SampledFrequencies& s) -> std::int64_t { return s.count; },
                    },
                    f.source);
}

bool is_dynamic(const FrequencySchedule& f) { return std::holds_alternative<scaling::Dynamic>(f.scaling); }

}  // namespace ropekit
