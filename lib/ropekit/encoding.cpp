// The encoding's dispatch: every function of encoding.hpp visits the family variant with one overload per family
// (encodings/<family>.{hpp,cpp} hold the families' parsing, printing, traits, blocks and features), and the parser
// table, `list encodings` and the messages are folded from the families' info records. The operator-level
// quantities over the blocks (G, kernel rows, exactness) are in encodings/operator.cpp.
#include "ropekit/encoding.hpp"

#include <algorithm>
#include <cmath>
#include <concepts>
#include <limits>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encodings/reference_names.hpp"

namespace ropekit {

namespace {

/// What every family provides: a missing function is a compile error here, not a silent default.
template <class F>
concept EncodingFamily = requires(const F& f, BlockContext& ctx, const Lags& lags, std::optional<double> seq_len) {
  { F::info() } -> std::same_as<const FamilyInfo&>;
  { enc::print(f, true) } -> std::same_as<std::string>;
  { enc::is_exact(f) } -> std::same_as<bool>;
  { enc::is_orthogonal(f) } -> std::same_as<bool>;
  { enc::is_relative(f) } -> std::same_as<bool>;
  { enc::lag_dims(f) } -> std::same_as<int>;
  { enc::has_frequencies(f) } -> std::same_as<bool>;
  { enc::schedule(f) } -> std::same_as<const FrequencySchedule*>;
  { enc::frequencies(f, seq_len, Convention::huggingface, false) } -> std::same_as<FrequencyTable>;
  { enc::append_blocks(f, ctx) } -> std::same_as<void>;
  { enc::features(f, lags) } -> std::same_as<Features>;
  { enc::feature_count(f) } -> std::same_as<std::int64_t>;
};
template <class V>
struct AllFamilies;
template <class... F>
struct AllFamilies<std::variant<F...>> : std::bool_constant<(EncodingFamily<F> && ...)> {
  static std::vector<const FamilyInfo*> infos() { return {&F::info()...}; }
};
static_assert(AllFamilies<EncodingValue>::value, "every family of EncodingValue provides the functions of family.hpp");

}  // namespace

// ---------------------------------------------------------------------------------------------
// The registry: the families' records folded in the variant's order.

const std::vector<const FamilyInfo*>& family_infos() {
  static const std::vector<const FamilyInfo*> infos = AllFamilies<EncodingValue>::infos();
  return infos;
}

// By construction the record of the alternative at index i (the infos are folded from the same variant).
const FamilyInfo& family_info(const Encoding& e) { return *family_infos()[e.value.index()]; }

std::string family_name(const Encoding& e) { return std::string(family_info(e).name); }

const std::vector<EncodingFamilyInfo>& encoding_families() {
  static const std::vector<EncodingFamilyInfo> table = [] {
    std::vector<EncodingFamilyInfo> out;
    for (const auto* info : family_infos())
      for (EncodingFamilyInfo line : info->list) {
        if (line.keys.empty()) line.keys = family_keys_text(*info);
        if (line.example.empty()) line.example = std::string(info->example);
        out.push_back(std::move(line));
      }
    return out;
  }();
  return table;
}

std::string rotary_families() {
  std::string always, sometimes, of_parts;
  auto add = [](std::string& to, std::string_view what) { to += (to.empty() ? "" : ", ") + std::string(what); };
  for (const auto* info : family_infos()) {
    if (info->rotary == Rotary::always)
      for (const auto& p : info->parsers)
        if (p.listed) add(always, p.name);
    if (info->rotary == Rotary::sometimes) add(sometimes, info->rotary_when);
    if (info->rotary == Rotary::of_parts) add(of_parts, info->rotary_when);
  }
  std::string out = always;
  if (!sometimes.empty()) add(out, sometimes);
  if (!of_parts.empty()) add(out, "or " + of_parts);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parsing: the parser table of every family's names.

namespace {

const FamilyParser* find_parser(std::string_view name) {
  for (const auto* info : family_infos())
    for (const auto& p : info->parsers)
      if (p.name == name) return &p;
  return nullptr;
}

std::string known_families() {
  std::string out;
  for (const auto* info : family_infos())
    for (const auto& p : info->parsers)
      if (p.listed) out += std::string(p.name) + ", ";
  return out + "or a fixed-basis reference name (ropekit list methods)";
}

bool is_reference_name(std::string_view text) {
  const auto family = text.substr(0, text.find(':'));
  return family.find('_') != std::string_view::npos;
}

}  // namespace

Encoding ParseContext::parse_part(Spelling& s) const {
  if (const auto* p = find_parser(s.family())) return p->parse(s, *this);
  throw InputError(fmt::format("{}: {} {}: encoding family = {} (must be one of {})", where_.context, s.what(),
                               quote(s.text()), quote(s.family()), known_families()));
}

Encoding parse_encoding(std::string_view text, const Where& where, const EncodingDefaults& defaults) {
  if (is_reference_name(text)) return from_method(parse_method(text, where.context + ": encoding"), defaults);
  // The grammar's own refusals (a malformed number, a bracket) name the spelling but not the caller: every
  // refusal leaves here as "<where>: encoding '<text>': ..." (rethrow_for_encoding).
  try {
    Spelling s = Spelling::parse(text, "encoding");
    return ParseContext(where, defaults).parse_part(s);
  } catch (const InputError& e) {
    if (where.context.empty()) throw;
    rethrow_for_encoding(where.context, std::string(text), e);
  }
}

Encoding parse_encoding_for(const std::string& command, const std::string& text) {
  return for_encoding(command, text, [&] { return parse_encoding(text, Where(command)); });
}

// ---------------------------------------------------------------------------------------------
// Printing.

namespace {

std::string print(const Encoding& e, bool nested) {
  return std::visit(Overloaded{
                        [&](const enc::Rope& f) { return enc::print(f, nested); },
                        [&](const enc::RopeMatched& f) { return enc::print(f, nested); },
                        [&](const enc::Xpos& f) { return enc::print(f, nested); },
                        [&](const enc::RfRope& f) { return enc::print(f, nested); },
                        [&](const enc::Damped& f) { return enc::print(f, nested); },
                        [&](const enc::Jordan& f) { return enc::print(f, nested); },
                        [&](const enc::JordanScaled& f) { return enc::print(f, nested); },
                        [&](const enc::RealJordan& f) { return enc::print(f, nested); },
                        [&](const enc::Alibi& f) { return enc::print(f, nested); },
                        [&](const enc::Poly& f) { return enc::print(f, nested); },
                        [&](const enc::Nope& f) { return enc::print(f, nested); },
                        [&](const enc::DirectSum& f) { return enc::print(f, nested); },
                        [&](const enc::Nd& f) { return enc::print(f, nested); },
                        [&](const enc::Sinusoidal& f) { return enc::print(f, nested); },
                    },
                    e.value);
}

}  // namespace

std::string spelling(const Encoding& e) { return print(e, false); }
std::string nested_spelling(const Encoding& e) { return print(e, true); }

// ---------------------------------------------------------------------------------------------
// Traits.

int lag_dims(const Encoding& e) {
  return std::visit(Overloaded{
                        [](const enc::Rope& f) { return enc::lag_dims(f); },
                        [](const enc::RopeMatched& f) { return enc::lag_dims(f); },
                        [](const enc::Xpos& f) { return enc::lag_dims(f); },
                        [](const enc::RfRope& f) { return enc::lag_dims(f); },
                        [](const enc::Damped& f) { return enc::lag_dims(f); },
                        [](const enc::Jordan& f) { return enc::lag_dims(f); },
                        [](const enc::JordanScaled& f) { return enc::lag_dims(f); },
                        [](const enc::RealJordan& f) { return enc::lag_dims(f); },
                        [](const enc::Alibi& f) { return enc::lag_dims(f); },
                        [](const enc::Poly& f) { return enc::lag_dims(f); },
                        [](const enc::Nope& f) { return enc::lag_dims(f); },
                        [](const enc::DirectSum& f) { return enc::lag_dims(f); },
                        [](const enc::Nd& f) { return enc::lag_dims(f); },
                        [](const enc::Sinusoidal& f) { return enc::lag_dims(f); },
                    },
                    e.value);
}

bool is_exact(const Encoding& e) {
  return std::visit(Overloaded{
                        [](const enc::Rope& f) { return enc::is_exact(f); },
                        [](const enc::RopeMatched& f) { return enc::is_exact(f); },
                        [](const enc::Xpos& f) { return enc::is_exact(f); },
                        [](const enc::RfRope& f) { return enc::is_exact(f); },
                        [](const enc::Damped& f) { return enc::is_exact(f); },
                        [](const enc::Jordan& f) { return enc::is_exact(f); },
                        [](const enc::JordanScaled& f) { return enc::is_exact(f); },
                        [](const enc::RealJordan& f) { return enc::is_exact(f); },
                        [](const enc::Alibi& f) { return enc::is_exact(f); },
                        [](const enc::Poly& f) { return enc::is_exact(f); },
                        [](const enc::Nope& f) { return enc::is_exact(f); },
                        [](const enc::DirectSum& f) { return enc::is_exact(f); },
                        [](const enc::Nd& f) { return enc::is_exact(f); },
                        [](const enc::Sinusoidal& f) { return enc::is_exact(f); },
                    },
                    e.value);
}

bool is_orthogonal(const Encoding& e) {
  return std::visit(Overloaded{
                        [](const enc::Rope& f) { return enc::is_orthogonal(f); },
                        [](const enc::RopeMatched& f) { return enc::is_orthogonal(f); },
                        [](const enc::Xpos& f) { return enc::is_orthogonal(f); },
                        [](const enc::RfRope& f) { return enc::is_orthogonal(f); },
                        [](const enc::Damped& f) { return enc::is_orthogonal(f); },
                        [](const enc::Jordan& f) { return enc::is_orthogonal(f); },
                        [](const enc::JordanScaled& f) { return enc::is_orthogonal(f); },
                        [](const enc::RealJordan& f) { return enc::is_orthogonal(f); },
                        [](const enc::Alibi& f) { return enc::is_orthogonal(f); },
                        [](const enc::Poly& f) { return enc::is_orthogonal(f); },
                        [](const enc::Nope& f) { return enc::is_orthogonal(f); },
                        [](const enc::DirectSum& f) { return enc::is_orthogonal(f); },
                        [](const enc::Nd& f) { return enc::is_orthogonal(f); },
                        [](const enc::Sinusoidal& f) { return enc::is_orthogonal(f); },
                    },
                    e.value);
}

bool is_relative(const Encoding& e) {
  return std::visit(Overloaded{
                        [](const enc::Rope& f) { return enc::is_relative(f); },
                        [](const enc::RopeMatched& f) { return enc::is_relative(f); },
                        [](const enc::Xpos& f) { return enc::is_relative(f); },
                        [](const enc::RfRope& f) { return enc::is_relative(f); },
                        [](const enc::Damped& f) { return enc::is_relative(f); },
                        [](const enc::Jordan& f) { return enc::is_relative(f); },
                        [](const enc::JordanScaled& f) { return enc::is_relative(f); },
                        [](const enc::RealJordan& f) { return enc::is_relative(f); },
                        [](const enc::Alibi& f) { return enc::is_relative(f); },
                        [](const enc::Poly& f) { return enc::is_relative(f); },
                        [](const enc::Nope& f) { return enc::is_relative(f); },
                        [](const enc::DirectSum& f) { return enc::is_relative(f); },
                        [](const enc::Nd& f) { return enc::is_relative(f); },
                        [](const enc::Sinusoidal& f) { return enc::is_relative(f); },
                    },
                    e.value);
}

bool has_frequencies(const Encoding& e) {
  return std::visit(Overloaded{
                        [](const enc::Rope& f) { return enc::has_frequencies(f); },
                        [](const enc::RopeMatched& f) { return enc::has_frequencies(f); },
                        [](const enc::Xpos& f) { return enc::has_frequencies(f); },
                        [](const enc::RfRope& f) { return enc::has_frequencies(f); },
                        [](const enc::Damped& f) { return enc::has_frequencies(f); },
                        [](const enc::Jordan& f) { return enc::has_frequencies(f); },
                        [](const enc::JordanScaled& f) { return enc::has_frequencies(f); },
                        [](const enc::RealJordan& f) { return enc::has_frequencies(f); },
                        [](const enc::Alibi& f) { return enc::has_frequencies(f); },
                        [](const enc::Poly& f) { return enc::has_frequencies(f); },
                        [](const enc::Nope& f) { return enc::has_frequencies(f); },
                        [](const enc::DirectSum& f) { return enc::has_frequencies(f); },
                        [](const enc::Nd& f) { return enc::has_frequencies(f); },
                        [](const enc::Sinusoidal& f) { return enc::has_frequencies(f); },
                    },
                    e.value);
}

FrequencySchedule* schedule_of(Encoding& e) { return const_cast<FrequencySchedule*>(schedule_of(std::as_const(e))); }

const FrequencySchedule* schedule_of(const Encoding& e) {
  return std::visit(Overloaded{
                        [](const enc::Rope& f) { return enc::schedule(f); },
                        [](const enc::RopeMatched& f) { return enc::schedule(f); },
                        [](const enc::Xpos& f) { return enc::schedule(f); },
                        [](const enc::RfRope& f) { return enc::schedule(f); },
                        [](const enc::Damped& f) { return enc::schedule(f); },
                        [](const enc::Jordan& f) { return enc::schedule(f); },
                        [](const enc::JordanScaled& f) { return enc::schedule(f); },
                        [](const enc::RealJordan& f) { return enc::schedule(f); },
                        [](const enc::Alibi& f) { return enc::schedule(f); },
                        [](const enc::Poly& f) { return enc::schedule(f); },
                        [](const enc::Nope& f) { return enc::schedule(f); },
                        [](const enc::DirectSum& f) { return enc::schedule(f); },
                        [](const enc::Nd& f) { return enc::schedule(f); },
                        [](const enc::Sinusoidal& f) { return enc::schedule(f); },
                    },
                    e.value);
}

// ---------------------------------------------------------------------------------------------
// Frequencies and blocks.

FrequencyTable frequencies(const Encoding& e, std::optional<double> seq_len) {
  return frequencies(e, seq_len, Convention::huggingface, false);
}

FrequencyTable frequencies(const Encoding& e, std::optional<double> seq_len, Convention convention, bool float32) {
  const auto T = seq_len;
  const auto c = convention;
  const bool f32 = float32;
  return std::visit(Overloaded{
                        [&](const enc::Rope& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::RopeMatched& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::Xpos& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::RfRope& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::Damped& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::Jordan& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::JordanScaled& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::RealJordan& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::Alibi& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::Poly& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::Nope& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::DirectSum& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::Nd& f) { return enc::frequencies(f, T, c, f32); },
                        [&](const enc::Sinusoidal& f) { return enc::frequencies(f, T, c, f32); },
                    },
                    e.value);
}

void append_blocks(const Encoding& e, BlockContext& ctx) {
  std::visit(Overloaded{
                 [&](const enc::Rope& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::RopeMatched& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::Xpos& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::RfRope& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::Damped& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::Jordan& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::JordanScaled& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::RealJordan& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::Alibi& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::Poly& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::Nope& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::DirectSum& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::Nd& f) { enc::append_blocks(f, ctx); },
                 [&](const enc::Sinusoidal& f) { enc::append_blocks(f, ctx); },
             },
             e.value);
}

std::vector<Block> blocks(const Encoding& e, double lag, std::optional<double> seq_len) {
  if (!std::isfinite(lag)) throw InputError(fmt::format("lag = {} (must be finite)", format_number(lag)));
  std::vector<Block> out;
  FrequencyCache cache;
  BlockContext ctx{out, lag, seq_len, cache};
  append_blocks(e, ctx);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Features.

Features features(const Encoding& e, const Lags& lags) {
  if (lags.cols() != lag_dims(e))
    throw InputError(
        fmt::format("encoding {}: lag dimension = {} (must be {})", quote(spelling(e)), lags.cols(), lag_dims(e)));
  return std::visit(Overloaded{
                        [&](const enc::Rope& f) { return enc::features(f, lags); },
                        [&](const enc::RopeMatched& f) { return enc::features(f, lags); },
                        [&](const enc::Xpos& f) { return enc::features(f, lags); },
                        [&](const enc::RfRope& f) { return enc::features(f, lags); },
                        [&](const enc::Damped& f) { return enc::features(f, lags); },
                        [&](const enc::Jordan& f) { return enc::features(f, lags); },
                        [&](const enc::JordanScaled& f) { return enc::features(f, lags); },
                        [&](const enc::RealJordan& f) { return enc::features(f, lags); },
                        [&](const enc::Alibi& f) { return enc::features(f, lags); },
                        [&](const enc::Poly& f) { return enc::features(f, lags); },
                        [&](const enc::Nope& f) { return enc::features(f, lags); },
                        [&](const enc::DirectSum& f) { return enc::features(f, lags); },
                        [&](const enc::Nd& f) { return enc::features(f, lags); },
                        [&](const enc::Sinusoidal& f) { return enc::features(f, lags); },
                    },
                    e.value);
}

std::int64_t feature_count(const Encoding& e) {
  return std::visit(Overloaded{
                        [](const enc::Rope& f) { return enc::feature_count(f); },
                        [](const enc::RopeMatched& f) { return enc::feature_count(f); },
                        [](const enc::Xpos& f) { return enc::feature_count(f); },
                        [](const enc::RfRope& f) { return enc::feature_count(f); },
                        [](const enc::Damped& f) { return enc::feature_count(f); },
                        [](const enc::Jordan& f) { return enc::feature_count(f); },
                        [](const enc::JordanScaled& f) { return enc::feature_count(f); },
                        [](const enc::RealJordan& f) { return enc::feature_count(f); },
                        [](const enc::Alibi& f) { return enc::feature_count(f); },
                        [](const enc::Poly& f) { return enc::feature_count(f); },
                        [](const enc::Nope& f) { return enc::feature_count(f); },
                        [](const enc::DirectSum& f) { return enc::feature_count(f); },
                        [](const enc::Nd& f) { return enc::feature_count(f); },
                        [](const enc::Sinusoidal& f) { return enc::feature_count(f); },
                    },
                    e.value);
}

int n_features(const Encoding& e) {
  const std::int64_t total = feature_count(e);
  if (total > std::numeric_limits<int>::max())
    throw InputError(fmt::format("encoding '{}': {} feature columns (must be at most {})", spelling(e), total,
                                 std::numeric_limits<int>::max()));
  return static_cast<int>(total);
}

// ---------------------------------------------------------------------------------------------
// Helpers over the tree of parts.

namespace {
void add_rotary_leaves(const Encoding& e, std::vector<const Encoding*>& out) {
  if (const auto* d = std::get_if<enc::DirectSum>(&e.value)) {
    for (const auto& p : d->parts) add_rotary_leaves(p, out);
  } else if (has_frequencies(e)) {
    out.push_back(&e);
  }
}
}  // namespace

std::vector<const Encoding*> rotary_leaves(const Encoding& e) {
  std::vector<const Encoding*> out;
  add_rotary_leaves(e, out);
  return out;
}

std::vector<std::string> encoding_notes(const Encoding& e) {
  std::vector<std::string> out;
  const auto add = [&](const Encoding& leaf, auto& self) -> void {
    if (const auto* d = std::get_if<enc::DirectSum>(&leaf.value)) {
      for (const auto& p : d->parts) self(p, self);
    } else if (const FrequencySchedule* f = schedule_of(leaf)) {
      for (auto& note : schedule_notes(*f))
        if (std::find(out.begin(), out.end(), note) == out.end()) out.push_back(std::move(note));
    }
  };
  add(e, add);
  return out;
}

std::optional<RopeGrid> plain_rope(const Encoding& e) {
  const auto* r = std::get_if<enc::Rope>(&e.value);
  if (!r || !std::holds_alternative<scaling::None>(r->freqs.scaling)) return std::nullopt;
  const auto* g = std::get_if<Geometric>(&r->freqs.source);
  if (!g || g->partial != 1 || !(g->base > 1) || (g->count && *g->count != g->dim / 2)) return std::nullopt;
  return RopeGrid{g->dim, g->base};
}

void rethrow_for_encoding(const std::string& command, const std::string& text, const InputError& e) {
  std::string what = e.what();
  if (what.rfind(command + ":", 0) == 0) throw e;
  for (const char* prefix : {"ropekit::frequencies: ", "ropekit::long_term_decay_bound: "})
    if (what.rfind(prefix, 0) == 0) what = what.substr(std::char_traits<char>::length(prefix));
  if (what.rfind("encoding '", 0) == 0) throw InputError(fmt::format("{}: {}", command, what));
  throw InputError(fmt::format("{}: encoding {}: {}", command, quote(text), what));
}

}  // namespace ropekit
