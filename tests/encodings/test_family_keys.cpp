// The bad-value contract, derived from the registry: for every family's example spelling and every key its
// record declares (FamilyInfo::keys, and the schedule's dim/base/F/partial where it takes them), values outside
// the key's rule are refused with one line "<where>: <spelling>: <key> = <value> (must be <constraint>)". The bad
// values come from the rule's kind and range here, not from the parser, and the declared keys must be every key
// the family's "unknown parameter" message lists (so a key added to a parser without a rule fails this test).

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/family.hpp"

using namespace ropekit;

namespace {

// Top-level "k=v" items of "family:items" (commas inside [] and () belong to nested spellings).
std::vector<std::string> items(const std::string& params) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : params) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// The example with key set to value (replaced where the example spells it, else appended).
std::string with_key(const std::string& example, const std::string& key, const std::string& value) {
  const auto colon = example.find(':');
  const std::string family = example.substr(0, colon);
  std::vector<std::string> kv = colon == std::string::npos ? std::vector<std::string>{} : items(example.substr(colon + 1));
  bool replaced = false;
  for (auto& item : kv)
    if (item.rfind(key + "=", 0) == 0) item = key + "=" + value, replaced = true;
  if (!replaced) kv.push_back(key + "=" + value);
  std::string out = family + ":";
  for (std::size_t i = 0; i < kv.size(); ++i) out += (i ? "," : "") + kv[i];
  return out;
}

// Values outside the rule, from its kind alone (integers: each side of the range, a fraction, odd for even keys).
std::vector<std::string> bad_values(const KeyRule& r) {
  switch (r.kind) {
    case KeyKind::integer: {
      std::vector<std::string> v = {std::to_string(r.min - 1), std::to_string(r.max + 1), "1.5", "nan", "x"};
      if (r.even) v.push_back(std::to_string(r.min % 2 ? r.min : r.min + 1));
      return v;
    }
    case KeyKind::positive: return {"0", "-1", "-0", "nan", "inf", "1e999", "x"};
    case KeyKind::nonnegative: return {"-1", "-1e-300", "nan", "inf", "x"};
    case KeyKind::tau: return {"sideways", "1", "Bounded"};
    case KeyKind::rate: return {"0", "-1", "nan", "inf", "1e-320", "x"};
    case KeyKind::seed: return {"-1", "1.5", "18446744073709551616", "x"};
    case KeyKind::fraction: return {"0", "-0.5", "1.0000001", "nan", "x"};
  }
  return {};
}

// "... zz_unknown = '1' (must be absent: damped takes gamma, dim, base, ...)" -> {gamma, dim, ...}.
std::set<std::string> known_keys(const std::string& example) {
  try {
    (void)parse_encoding(with_key(example, "zz_unknown", "1"), Where("ropekit kernel"));
  } catch (const InputError& e) {
    const std::string what = e.what();
    std::set<std::string> out;
    const auto takes = what.find(" takes ", what.find("zz_unknown = "));
    if (takes == std::string::npos || what.find("takes no parameters") != std::string::npos) return out;
    for (const auto& k : items(what.substr(takes + 7, what.size() - takes - 8)))
      out.insert(k.front() == ' ' ? k.substr(1) : k);
    return out;
  }
  return {};
}

// The refusal of a spelling ("" when it parses).
std::string refusal(const std::string& spelling) {
  try {
    (void)parse_encoding(spelling, Where("ropekit kernel"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A family's declared rules, with the schedule's where it takes them.
std::vector<KeyRule> rules_of(const FamilyInfo& info) {
  std::vector<KeyRule> rules = info.keys;
  if (info.schedule) rules.insert(rules.end(), schedule_key_rules().begin(), schedule_key_rules().end());
  return rules;
}

}  // namespace

TEST_CASE("family keys: each declared rule's bad values are refused naming the key, value and constraint") {
  int checked = 0;
  for (const auto* info : family_infos()) {
    const std::string example(info->example);
    for (const auto& rule : rules_of(*info)) {
      for (const auto& value : bad_values(rule)) {
        const std::string spelling = with_key(example, std::string(rule.name), value);
        CAPTURE(spelling);
        const std::string what = refusal(spelling);
        CAPTURE(what);
        REQUIRE_FALSE(what.empty());
        // One line, naming the command and the spelling, the key, and a constraint.
        CHECK(what.find('\n') == std::string::npos);
        CHECK(what.rfind("ropekit kernel: encoding '" + spelling + "': ", 0) == 0);
        CHECK(what.find(std::string(rule.name) + " = ") != std::string::npos);
        CHECK(what.find("(must be ") != std::string::npos);
        ++checked;
      }
    }
  }
  CHECK(checked > 100);
}

TEST_CASE("family keys: the declared rules are every key the family's parser knows (besides nested spellings)") {
  // Keys whose values are spellings, lists or paths, checked by their own parsers' contracts.
  const std::set<std::string> nested = {"scaling", "freqs", "file", "spectrum", "sampling", "family"};
  for (const auto* info : family_infos()) {
    const std::string example(info->example);
    CAPTURE(example);
    std::set<std::string> declared;
    for (const auto& r : rules_of(*info)) declared.insert(std::string(r.name));
    for (const auto& k : known_keys(example)) {
      CAPTURE(k);
      CHECK((declared.count(k) == 1 || nested.count(k) == 1));
    }
  }
}

TEST_CASE("family keys: a value at each end of an integer rule's range is accepted") {
  // The other side of the boundary, so the rule's range is the parser's and not narrower.
  for (const auto* info : family_infos()) {
    for (const auto& rule : rules_of(*info)) {
      if (rule.kind != KeyKind::integer) continue;
      // Small ends only: the large ends build operators of 2^24 dims (their acceptance is the size contract's).
      if (rule.min > 64) continue;
      const auto lo = rule.even && rule.min % 2 ? rule.min + 1 : rule.min;
      const std::string spelling = with_key(std::string(info->example), std::string(rule.name), std::to_string(lo));
      CAPTURE(spelling);
      const std::string what = refusal(spelling);
      // The key itself must not be what is refused (another key may conflict, e.g. F > dim/2 is allowed).
      CHECK(what.find(std::string(rule.name) + " = " + std::to_string(lo) + " (") == std::string::npos);
    }
  }
}

TEST_CASE("scaling=default is transformers' rope_type for no scaling: none (the default() error's hint parses)") {
  // Issue 24: `scaling=default()` was refused with "write default alone", and `scaling=default` then refused too.
  const Encoding a = parse_encoding("rope:dim=64,base=1e4,scaling=default");
  const Encoding b = parse_encoding("rope:dim=64,base=1e4");
  CHECK(spelling(a) == spelling(b));
  Lags lags(3, 1);
  lags << 0, 7, 1000;
  CHECK(kernel(a, lags) == kernel(b, lags));
  try {
    (void)parse_encoding("rope:dim=64,scaling=default()");
    FAIL("accepted");
  } catch (const InputError& e) {
    const std::string what = e.what();
    REQUIRE(what.find("write default alone") != std::string::npos);
  }
}

namespace {
// The example without `key` (its other items kept).
std::string without_key(const std::string& example, const std::string& key) {
  const auto colon = example.find(':');
  std::string out = example.substr(0, colon);
  bool first = true;
  for (const auto& item : items(colon == std::string::npos ? "" : example.substr(colon + 1)))
    if (item.rfind(key + "=", 0) != 0) out += (first ? ":" : ",") + item, first = false;
  return out;
}
}  // namespace

TEST_CASE("list encodings --verbose: every plain default it states is what the parser takes for an absent key") {
  // Issue 24: the keys' texts (from the key tables, and written by hand for nested keys) could drift from the
  // parsers. Each "name: constraint, default VALUE" with a plain VALUE (a number or a word): the family's example
  // without the key and with key=VALUE are one encoding (the same canonical spelling).
  int checked = 0;
  for (const auto& line : encoding_families()) {
    for (const auto& entry : [&] {
           std::vector<std::string> out;
           std::size_t start = 0;
           for (std::size_t p; (p = line.keys.find("; ", start)) != std::string::npos; start = p + 2)
             out.push_back(line.keys.substr(start, p - start));
           out.push_back(line.keys.substr(start));
           return out;
         }()) {
      const auto colon = entry.find(": "), def = entry.rfind(", default ");
      if (colon == std::string::npos || def == std::string::npos) continue;
      const std::string key = entry.substr(0, colon);
      std::string value = entry.substr(def + 10);
      value = value.substr(0, value.find(' '));  // "128 (fit: --head-dim)" -> "128"
      const bool other_variant = entry.compare(colon + 2, 6, "mrope,") == 0;  // nd's example is axial
      if (key.find_first_of(" =[|") != std::string::npos || value.empty() || value == "unset" || value == "none" ||
          value.find_first_of("/(") != std::string::npos || other_variant)
        continue;  // a phrase, an option of another variant, or a default that depends on other keys
      CAPTURE(line.example);
      CAPTURE(entry);
      const std::string absent = without_key(line.example, key), given = with_key(absent, key, value);
      CAPTURE(absent);
      CAPTURE(given);
      CHECK(spelling(parse_encoding(absent)) == spelling(parse_encoding(given)));
      ++checked;
    }
  }
  CHECK(checked >= 40);  // the schedule's dim, base, partial in every family that takes them, and the families' own
}

TEST_CASE("nd's canonical spelling writes every key, defaults included, and reads back as itself") {
  // It printed the text as typed ("nd:axes=2"), so a table's encoding column hid dim = 64 and base = 100.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"nd:axes=2", "nd:family=axial,dim=64,axes=2,base=100"},
      {"nd:family=mixed,dim=8,base=1e4", "nd:family=mixed,dim=8,axes=2,base=10000,seed=1"},
      {"nd:family=mrope,dim=16,sections=[2,3,3]", "nd:family=mrope,dim=16,base=10000,sections=[2,3,3],interleaved=false"},
  };
  for (const auto& [typed, canonical] : cases) {
    CAPTURE(typed);
    CHECK(spelling(parse_encoding(typed)) == canonical);
    CHECK(spelling(parse_encoding(canonical)) == canonical);
  }
}
