#include "ropekit/encodings/method.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <regex>

#include <fmt/format.h>

#include "ropekit/core/echo.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/core/overloaded.hpp"

namespace ropekit {

namespace {

constexpr int kMaxOrder = 32;  // x^p/p! for p < 32 stays far inside double range on any lag grid
constexpr std::int64_t kMaxMatchedK = INT32_MAX;  // rope_matched: k > F already means M = 1 column pair
constexpr std::size_t kMaxNameLength = 128;        // reference names are ~20 characters

std::string known_names() {
  return "nope, rope, rope_matched_m<k>, alibi, rope_alibi, damped_rope, real_jordan, direct_sum, "
         "direct_sum_poly_m<k>, jordan_rope, jordan_no_gamma, jordan_raw_tau, jordan_exact[_cNNN], "
         "jordan_exact_scaled, jordan_m3, jordan_m4, jordan_scaled_m<k>[_cNNN]; or a readable spelling such as "
         "jordan-scaled:m=4,c=0.1 (see `ropekit list methods`)";
}

// Messages name the method as the user wrote it, after the context `what` ("method", or
// "ropekit features: --method").
std::string where_of(std::string_view what, std::string_view name) { return fmt::format("{} {}", what, quote(name)); }

[[noreturn]] void unknown(std::string_view what, std::string_view name) {
  if (what == "method") throw InputError(fmt::format("method = {} (must be one of {})", quote(name), known_names()));
  throw InputError(fmt::format("{}: method = {} (must be one of {})", what, quote(name), known_names()));
}

// The family parameters of the spec (fixed-basis.md section 2), shared by the reference names and the
// readable spellings so that both read the same values: the reference's suffix k means max(min_ref, k),
// a readable spelling must give a value in [min, max] itself.
struct OrderRule {
  const char* ref;   // reference name before the digits
  const char* key;   // readable key: k or m
  int fallback;      // the default when absent
  int min_ref;       // reference names: k' = max(min_ref, k)
  std::int64_t min;  // readable: at least this (= min_ref: the spec has no smaller order)
  std::int64_t max;
};
constexpr OrderRule kMatched{"rope_matched_m", "k", 2, 1, 1, kMaxMatchedK};   // rope-matched:k=
constexpr OrderRule kPoly{"direct_sum_poly_m", "k", 4, 2, 2, kMaxOrder};        // direct-sum-poly:k=
constexpr OrderRule kScaled{"jordan_scaled_m", "m", 3, 2, 2, kMaxOrder};        // jordan-scaled:m=
constexpr OrderRule kJordan{"jordan_m", "m", 2, 1, 1, kMaxOrder};  // jordan:m= (reference: jordan_rope, _m3, _m4)

// The digit suffix of a reference name (rule 4), checked before any conversion: k' = max(min_ref, k) <= max.
int suffix_order(std::string_view what, const std::string& name, const std::string& digits, const OrderRule& r) {
  const IntegerText t = read_integer_text(digits);
  if (t.kind != IntegerText::Kind::integer || t.magnitude > static_cast<std::uint64_t>(r.max))
    throw_bad_value(where_of(what, name), r.key, digits,
                    fmt::format("an integer <= {} (the name's digits; k' = max({}, k))", r.max, r.min_ref));
  return std::max(r.min_ref, static_cast<int>(t.magnitude));
}

// "c" followed by digits only: c = NNN / 100 (c010 = 0.1, c150 = 1.5, c1 = 0.01).
std::optional<double> c_token(std::string_view what, const std::string& name, const std::string& tok) {
  static const std::regex re("c([0-9]+)");
  std::smatch m;
  if (!std::regex_match(tok, m, re)) return std::nullopt;
  const double c = parse_double(m[1].str()).value_or(HUGE_VAL) / 100.0;
  if (!std::isfinite(c)) throw_bad_value(where_of(what, name), "c", tok, "cNNN with c = NNN/100 finite");
  return c;
}

std::vector<std::string> split_underscore(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    auto pos = s.find('_', start);
    out.emplace_back(s.substr(start, pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string c_spelling(double c) {
  if (!(c * 100 < 1e15)) return "c" + format_number(c * 100);  // beyond exact integers: as written
  return fmt::format("c{:03d}", static_cast<long long>(std::llround(c * 100)));
}

// Rule 3: jordan_exact... = order-2 scaled-exact basis, c from the first cNNN token (default 1).
Method parse_jordan_exact(std::string_view what, const std::string& name) {
  auto tokens = split_underscore(name);
  std::optional<double> c;
  std::optional<std::string> order_token;
  for (size_t i = 2; i < tokens.size(); ++i) {
    const auto& tok = tokens[i];
    if (auto v = c_token(what, name, tok)) {
      if (c) throw InputError(fmt::format("{}: c given twice (write jordan_exact_cNNN once)", where_of(what, name)));
      c = v;
    } else if (tok == "scaled") {
      continue;  // jordan_exact_scaled: c = 1 unless a cNNN token says otherwise
    } else if (std::regex_match(tok, std::regex("m[0-9]+"))) {
      order_token = tok;
    } else {
      throw InputError(fmt::format("{}: token = {} (must be a cNNN token, the only one jordan_exact takes; known: {})",
                                   where_of(what, name), quote(tok), known_names()));
    }
  }
  const double cv = c.value_or(1.0);
  if (order_token) {
    const int m = suffix_order(what, name, order_token->substr(1), kScaled);
    throw InputError(fmt::format(
        "{}: the reference ignores '{}' in jordan_exact names and silently builds order-2 features; "
        "write jordan_scaled_m{}_{} (or jordan-scaled:m={},c={}) for order {}, or jordan_exact_{} for order 2",
        where_of(what, name), *order_token, m, c_spelling(cv), m, format_number(cv), m, c_spelling(cv)));
  }
  return method::JordanScaled{2, cv};
}

Method parse_reference(std::string_view what, const std::string& name) {
  using namespace method;
  if (name == "nope") return Nope{};
  if (name == "rope") return Rope{};
  if (name == "alibi") return Alibi{};
  if (name == "rope_alibi") return RopeAlibi{};
  if (name == "damped_rope") return DampedRope{};
  if (name == "real_jordan") return RealJordan{};
  if (name == "direct_sum") return DirectSum{};
  if (name == "jordan_rope") return Jordan{2, {}, {}};
  if (name == "jordan_no_gamma") return Jordan{2, 0.0, {}};      // rule 1
  if (name == "jordan_raw_tau") return Jordan{2, {}, false};     // rule 2
  if (name == "jordan_m3") return Jordan{3, {}, {}};
  if (name == "jordan_m4") return Jordan{4, {}, {}};
  if (name.rfind("jordan_exact", 0) == 0 && (name.size() == 12 || name[12] == '_'))
    return parse_jordan_exact(what, name);

  std::smatch m;
  static const std::regex matched("rope_matched(?:_m([0-9]+))?");
  if (std::regex_match(name, m, matched))
    return RopeMatched{m[1].matched ? suffix_order(what, name, m[1].str(), kMatched) : kMatched.fallback};
  static const std::regex poly("direct_sum_poly(?:_m([0-9]+))?");
  if (std::regex_match(name, m, poly))
    return DirectSumPoly{m[1].matched ? suffix_order(what, name, m[1].str(), kPoly) : kPoly.fallback, {}};
  static const std::regex scaled("jordan_scaled(?:_m([0-9]+))?(?:_(c[0-9]+))?");
  if (std::regex_match(name, m, scaled)) {
    const int k = m[1].matched ? suffix_order(what, name, m[1].str(), kScaled) : kScaled.fallback;
    const double c = m[2].matched ? *c_token(what, name, m[2].str()) : 1.0;
    return JordanScaled{k, c};
  }
  if (std::regex_match(name, std::regex("jordan_m[0-9]+"))) {
    const IntegerText t = read_integer_text(name.substr(8));
    if (t.kind == IntegerText::Kind::integer && t.magnitude >= 1 && t.magnitude <= kMaxOrder)
      throw InputError(fmt::format("{}: the reference knows only jordan_m3 and jordan_m4; write jordan:m={} for "
                                   "another order",
                                   where_of(what, name), t.magnitude));
    throw InputError(fmt::format("{}: the reference knows only jordan_m3 and jordan_m4; another order is "
                                 "jordan:m=<m>, m an integer in [1, {}]",
                                 where_of(what, name), kMaxOrder));
  }
  unknown(what, name);
}

int take_order(Spelling& s, const OrderRule& r) {
  auto v = s.take_int(r.key);
  if (!v) return r.fallback;
  if (*v < r.min || *v > r.max)
    throw_bad_value(where_of(s.what(), s.text()), r.key, std::to_string(*v),
                    *v < r.min && *v >= 0
                        ? fmt::format("an integer in [{}, {}]; the reference's {}{} means {} = {}", r.min, r.max, r.ref,
                                      *v, r.key, r.min_ref)
                        : fmt::format("an integer in [{}, {}]", r.min, r.max));
  return static_cast<int>(*v);
}

std::optional<double> take_gamma(Spelling& s) {
  auto g = s.take_double("gamma");
  if (g) check_nonnegative(where_of(s.what(), s.text()), "gamma", *g);
  return g;
}

std::optional<bool> take_tau(Spelling& s) {
  auto w = s.take_word("tau");
  if (!w) return std::nullopt;
  if (*w == "bounded") return true;
  if (*w == "raw") return false;
  throw_bad_value(where_of(s.what(), s.text()), "tau", fmt::format("'{}'", *w), "bounded or raw");
}

Method parse_readable(std::string_view what, std::string_view text) {
  using namespace method;
  auto s = Spelling::parse(text, what);
  const auto& f = s.family();
  Method out;
  std::string keys;
  if (f == "nope") out = Nope{};
  else if (f == "rope") out = Rope{};
  else if (f == "alibi") out = Alibi{};
  else if (f == "rope-alibi") out = RopeAlibi{};
  else if (f == "rope-matched") out = RopeMatched{take_order(s, kMatched)}, keys = "k";
  else if (f == "damped-rope") out = DampedRope{take_gamma(s)}, keys = "gamma";
  else if (f == "real-jordan") {
    auto g = take_gamma(s);
    out = RealJordan{g, take_tau(s)}, keys = "gamma, tau";
  } else if (f == "direct-sum") {
    auto g = take_gamma(s);
    out = DirectSum{g, take_tau(s)}, keys = "gamma, tau";
  } else if (f == "direct-sum-poly") {
    const int k = take_order(s, kPoly);
    out = DirectSumPoly{k, take_tau(s)}, keys = "k, tau";
  } else if (f == "jordan") {
    const int m = take_order(s, kJordan);
    auto g = take_gamma(s);
    out = Jordan{m, g, take_tau(s)}, keys = "m, gamma, tau";
  } else if (f == "jordan-scaled") {
    const int m = take_order(s, kScaled);
    const double c = s.take_double("c").value_or(1.0);
    check_nonnegative(where_of(s.what(), s.text()), "c", c);
    out = JordanScaled{m, c}, keys = "m, c";
  } else {
    unknown(what, text);
  }
  s.finish(keys);
  return out;
}

}  // namespace

Method parse_method(std::string_view name, std::string_view what) {
  std::string n(name);
  if (n.empty()) throw InputError(fmt::format("{}: method = '' (must be one of {})", what, known_names()));
  if (n.find_first_of(":-=") != std::string::npos) return parse_readable(what, n);
  // std::regex recurses per character: a name of 1e5 characters would overflow the stack.
  if (n.size() > kMaxNameLength)
    throw InputError(fmt::format("{} = {} characters (must be at most {}; known: {})",
                                 what == "method" ? std::string("method name") : std::string(what), n.size(),
                                 kMaxNameLength, known_names()));
  return parse_reference(what, n);
}

std::string spelling(const Method& method) {
  auto opt = [](std::string& out, std::string_view key, const std::optional<double>& v) {
    if (v) out += fmt::format("{}{}={}", out.find(':') == std::string::npos ? ":" : ",", key, format_number(*v));
  };
  auto tau = [](std::string& out, const std::optional<bool>& b) {
    if (b) out += fmt::format("{}tau={}", out.find(':') == std::string::npos ? ":" : ",", *b ? "bounded" : "raw");
  };
  using namespace method;
  return std::visit(
      Overloaded{
          [](const Nope&) { return std::string("nope"); },
          [](const Rope&) { return std::string("rope"); },
          [](const RopeMatched& m) { return fmt::format("rope-matched:k={}", m.k); },
          [](const Alibi&) { return std::string("alibi"); },
          [](const RopeAlibi&) { return std::string("rope-alibi"); },
          [&](const DampedRope& m) {
            std::string s = "damped-rope";
            opt(s, "gamma", m.gamma);
            return s;
          },
          [&](const RealJordan& m) {
            std::string s = "real-jordan";
            opt(s, "gamma", m.gamma);
            tau(s, m.bounded_tau);
            return s;
          },
          [&](const DirectSum& m) {
            std::string s = "direct-sum";
            opt(s, "gamma", m.gamma);
            tau(s, m.bounded_tau);
            return s;
          },
          [&](const DirectSumPoly& m) {
            std::string s = fmt::format("direct-sum-poly:k={}", m.k);
            tau(s, m.bounded_tau);
            return s;
          },
          [&](const Jordan& m) {
            std::string s = fmt::format("jordan:m={}", m.m);
            opt(s, "gamma", m.gamma);
            tau(s, m.bounded_tau);
            return s;
          },
          [](const JordanScaled& m) { return fmt::format("jordan-scaled:m={},c={}", m.m, format_number(m.c)); },
      },
      method);
}

const std::vector<MethodFamilyInfo>& method_families() {
  static const std::vector<MethodFamilyInfo> families = {
      {"nope", "nope", "1", "1"},
      {"rope", "rope", "1, C, S", "1+2F"},
      {"rope-matched:k=<k>", "rope_matched_m<k> (k default 2; k' = max(1, k))", "1, C_0..C_{M-1}, S_0..S_{M-1}, M = max(1, F/k)",
       "1+2M"},
      {"alibi", "alibi", "1, x", "2"},
      {"rope-alibi", "rope_alibi", "1, C, S, x", "2+2F"},
      {"damped-rope[:gamma=<g>]", "damped_rope", "1, E C, E S", "1+2F"},
      {"real-jordan[:gamma=<g>,tau=bounded|raw]", "real_jordan", "1, E, that E", "3"},
      {"direct-sum[:gamma=<g>,tau=bounded|raw]", "direct_sum", "1, C, S, x, E, that E", "4+2F"},
      {"direct-sum-poly:k=<k>[,tau=bounded|raw]", "direct_sum_poly_m<k> (k default 4; k' = max(2, k))",
       "1, C, S, that^1..that^(k-1)", "2F+k"},
      {"jordan:m=<m>[,gamma=<g>,tau=bounded|raw]",
       "jordan_rope (m=2), jordan_no_gamma (gamma=0), jordan_raw_tau (tau=raw), jordan_m3, jordan_m4",
       "1, (that^p/p!) E C, (that^p/p!) E S for p < m", "1+2mF"},
      {"jordan-scaled:m=<m>,c=<c>", "jordan_scaled_m<k>[_cNNN] (m default 3; m = max(2, k)), jordan_exact[_cNNN] (m=2), "
                                    "jordan_exact_scaled (m=2, c=1); c default 1",
       "1, (x^p/p!) e^{-cx} C, (x^p/p!) e^{-cx} S for p < m", "1+2mF"},
  };
  return families;
}

}  // namespace ropekit
