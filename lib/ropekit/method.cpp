#include "ropekit/method.hpp"

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "ropekit/error.hpp"
#include "ropekit/spelling.hpp"
#include "ropekit/overloaded.hpp"

namespace ropekit {

namespace {

constexpr int kMaxOrder = 32;  // x^p/p! for p < 32 stays far inside double range on any lag grid

std::string known_names() {
  return "nope, rope, rope_matched_m<k>, alibi, rope_alibi, damped_rope, real_jordan, direct_sum, "
         "direct_sum_poly_m<k>, jordan_rope, jordan_no_gamma, jordan_raw_tau, jordan_exact[_cNNN], "
         "jordan_exact_scaled, jordan_m3, jordan_m4, jordan_scaled_m<k>[_cNNN]; or a readable spelling such as "
         "jordan-scaled:m=4,c=0.1 (see `ropekit list methods`)";
}

[[noreturn]] void unknown(std::string_view name) {
  throw InputError(fmt::format("unknown method '{}' (known: {})", name, known_names()));
}

// "c" followed by digits only: c = NNN / 100 (c010 = 0.1, c150 = 1.5, c1 = 0.01).
std::optional<double> c_token(const std::string& tok) {
  static const std::regex re("c([0-9]+)");
  std::smatch m;
  if (!std::regex_match(tok, m, re)) return std::nullopt;
  return std::stod(m[1].str()) / 100.0;
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

std::string c_spelling(double c) { return fmt::format("c{:03d}", static_cast<int>(std::lround(c * 100))); }

// Rule 3: jordan_exact... = order-2 scaled-exact basis, c from the first cNNN token (default 1).
Method parse_jordan_exact(const std::string& name) {
  auto tokens = split_underscore(name);
  std::optional<double> c;
  std::optional<std::string> order_token;
  for (size_t i = 2; i < tokens.size(); ++i) {
    const auto& tok = tokens[i];
    if (auto v = c_token(tok)) {
      if (c) throw InputError(fmt::format("method '{}': c given twice (write jordan_exact_cNNN once)", name));
      c = v;
    } else if (tok == "scaled") {
      continue;  // jordan_exact_scaled: c = 1 unless a cNNN token says otherwise
    } else if (std::regex_match(tok, std::regex("m[0-9]+"))) {
      order_token = tok;
    } else {
      throw InputError(fmt::format("method '{}': unknown token '{}' (jordan_exact takes only a cNNN token; known: {})",
                                   name, tok, known_names()));
    }
  }
  const double cv = c.value_or(1.0);
  if (order_token) {
    const int m = std::stoi(order_token->substr(1));
    throw InputError(fmt::format(
        "method '{}': the reference ignores '{}' in jordan_exact names and silently builds order-2 features; "
        "write jordan_scaled_m{}_{} (or jordan-scaled:m={},c={}) for order {}, or jordan_exact_{} for order 2",
        name, *order_token, m, c_spelling(cv), m, format_number(cv), m, c_spelling(cv)));
  }
  return method::JordanScaled{2, cv};
}

Method parse_reference(const std::string& name) {
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
  if (name.rfind("jordan_exact", 0) == 0 && (name.size() == 12 || name[12] == '_')) return parse_jordan_exact(name);

  std::smatch m;
  static const std::regex matched("rope_matched(?:_m([0-9]+))?");
  if (std::regex_match(name, m, matched)) {
    const int k = m[1].matched ? std::stoi(m[1].str()) : 2;
    return RopeMatched{std::max(1, k)};
  }
  static const std::regex poly("direct_sum_poly(?:_m([0-9]+))?");
  if (std::regex_match(name, m, poly)) {
    const int k = m[1].matched ? std::stoi(m[1].str()) : 4;
    return DirectSumPoly{std::max(2, k), {}};
  }
  static const std::regex scaled("jordan_scaled(?:_m([0-9]+))?(?:_(c[0-9]+))?");
  if (std::regex_match(name, m, scaled)) {
    const int k = m[1].matched ? std::stoi(m[1].str()) : 3;
    const double c = m[2].matched ? *c_token(m[2].str()) : 1.0;
    if (k > kMaxOrder) throw_bad_value(fmt::format("method '{}'", name), "m", std::to_string(k), "<= 32");
    return JordanScaled{std::max(2, k), c};
  }
  if (std::regex_match(name, std::regex("jordan_m[0-9]+")))
    throw InputError(fmt::format("unknown method '{}': the reference knows only jordan_m3 and jordan_m4; "
                                 "write jordan:m={} for another order",
                                 name, name.substr(8)));
  unknown(name);
}

int take_order(Spelling& s, std::string_view key, int fallback, int min) {
  auto v = s.take_int(key);
  if (!v) return fallback;
  if (*v < min || *v > kMaxOrder)
    throw_bad_value(fmt::format("method '{}'", s.text()), key, std::to_string(*v),
                    fmt::format("an integer in [{}, {}]", min, kMaxOrder));
  return static_cast<int>(*v);
}

std::optional<double> take_gamma(Spelling& s) {
  auto g = s.take_double("gamma");
  if (g) check_nonnegative(fmt::format("method '{}'", s.text()), "gamma", *g);
  return g;
}

std::optional<bool> take_tau(Spelling& s) {
  auto w = s.take_word("tau");
  if (!w) return std::nullopt;
  if (*w == "bounded") return true;
  if (*w == "raw") return false;
  throw_bad_value(fmt::format("method '{}'", s.text()), "tau", fmt::format("'{}'", *w), "bounded or raw");
}

Method parse_readable(std::string_view text) {
  using namespace method;
  auto s = Spelling::parse(text, "method");
  const auto& f = s.family();
  Method out;
  std::string keys;
  if (f == "nope") out = Nope{};
  else if (f == "rope") out = Rope{};
  else if (f == "alibi") out = Alibi{};
  else if (f == "rope-alibi") out = RopeAlibi{};
  else if (f == "rope-matched") out = RopeMatched{take_order(s, "k", 2, 1)}, keys = "k";
  else if (f == "damped-rope") out = DampedRope{take_gamma(s)}, keys = "gamma";
  else if (f == "real-jordan") {
    auto g = take_gamma(s);
    out = RealJordan{g, take_tau(s)}, keys = "gamma, tau";
  } else if (f == "direct-sum") {
    auto g = take_gamma(s);
    out = DirectSum{g, take_tau(s)}, keys = "gamma, tau";
  } else if (f == "direct-sum-poly") {
    const int k = take_order(s, "k", 4, 1);
    out = DirectSumPoly{k, take_tau(s)}, keys = "k, tau";
  } else if (f == "jordan") {
    const int m = take_order(s, "m", 2, 1);
    auto g = take_gamma(s);
    out = Jordan{m, g, take_tau(s)}, keys = "m, gamma, tau";
  } else if (f == "jordan-scaled") {
    const int m = take_order(s, "m", 3, 1);
    const double c = s.take_double("c").value_or(1.0);
    check_nonnegative(fmt::format("method '{}'", s.text()), "c", c);
    out = JordanScaled{m, c}, keys = "m, c";
  } else {
    unknown(text);
  }
  s.finish(keys);
  return out;
}

}  // namespace

Method parse_method(std::string_view name) {
  std::string n(name);
  if (n.empty()) throw InputError("method name is empty (known: " + known_names() + ")");
  if (n.find_first_of(":-=") != std::string::npos) return parse_readable(n);
  return parse_reference(n);
}

std::string readable_name(const Method& method) {
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
      {"rope-matched:k=<k>", "rope_matched_m<k> (k default 2)", "1, C_0..C_{M-1}, S_0..S_{M-1}, M = max(1, F/k)",
       "1+2M"},
      {"alibi", "alibi", "1, x", "2"},
      {"rope-alibi", "rope_alibi", "1, C, S, x", "2+2F"},
      {"damped-rope[:gamma=<g>]", "damped_rope", "1, E C, E S", "1+2F"},
      {"real-jordan[:gamma=<g>,tau=bounded|raw]", "real_jordan", "1, E, that E", "3"},
      {"direct-sum[:gamma=<g>,tau=bounded|raw]", "direct_sum", "1, C, S, x, E, that E", "4+2F"},
      {"direct-sum-poly:k=<k>[,tau=bounded|raw]", "direct_sum_poly_m<k> (k default 4)",
       "1, C, S, that^1..that^(k-1)", "2F+k"},
      {"jordan:m=<m>[,gamma=<g>,tau=bounded|raw]",
       "jordan_rope (m=2), jordan_no_gamma (gamma=0), jordan_raw_tau (tau=raw), jordan_m3, jordan_m4",
       "1, (that^p/p!) E C, (that^p/p!) E S for p < m", "1+2mF"},
      {"jordan-scaled:m=<m>,c=<c>", "jordan_scaled_m<k>[_cNNN] (m default 3), jordan_exact[_cNNN] (m=2), "
                                    "jordan_exact_scaled (m=2, c=1); c default 1",
       "1, (x^p/p!) e^{-cx} C, (x^p/p!) e^{-cx} S for p < m", "1+2mF"},
  };
  return families;
}

}  // namespace ropekit
