#include "ropekit/encodings/direct_sum.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ropekit/core/cancel.hpp"
#include "ropekit/encoding.hpp"

namespace ropekit::enc {

namespace {

Encoding sum(std::vector<Encoding> parts) { return Encoding{DirectSum{std::move(parts)}}; }

// direct-sum:[<enc>,...], or the fixed-basis direct_sum RoPE (+) ALiBi (+) real Jordan (columns 1, C, S, x, E,
// that E) from its keys.
Encoding parse(Spelling& s, const ParseContext& ctx) {
  if (auto items = s.take_spellings("")) {
    std::vector<Encoding> parts;
    for (auto& part : *items) parts.push_back(ctx.parse_part(part));
    if (parts.size() < 2) ctx.bad(s, "parts", std::to_string(parts.size()), "at least 2 encodings in [...]");
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (ropekit::lag_dims(parts[i]) != 1 || !ropekit::is_relative(parts[i]))
        ctx.bad(s, fmt::format("parts[{}]", i), spelling(parts[i]),
                "a relative encoding of 1-D lags (a direct sum shares one scalar lag)");
    s.finish("");
    return sum(std::move(parts));
  }
  const auto fs = ctx.take_schedule(s);
  RealJordan j;
  ctx.take_keys(s, real_jordan_keys(), j);
  s.finish(fmt::format("[parts...] or {}", key_names(real_jordan_keys(), kFreqKeys)));
  Alibi a;
  a.L = j.L;
  return sum({{Rope{fs}}, {a}, {j}});
}

// The fixed-basis rope_alibi: RoPE (+) ALiBi.
Encoding parse_rope_alibi(Spelling& s, const ParseContext& ctx) {
  const auto fs = ctx.take_schedule(s);
  Alibi a;
  a.L = ctx.take_int_in(s, "L", ctx.defaults().L, 1, std::numeric_limits<int>::max());
  s.finish(fmt::format("L, {}", kFreqKeys));
  return sum({{Rope{fs}}, {a}});
}

// RoPE (+) unipotent shear of order k.
Encoding parse_rope_poly(Spelling& s, const ParseContext& ctx) {
  const auto fs = ctx.take_schedule(s);
  Poly p;
  ctx.take_keys(s, poly_keys(), p);
  s.finish(key_names(poly_keys(), kFreqKeys));
  return sum({{Rope{fs}}, {p}});
}

}  // namespace

const FamilyInfo& DirectSum::info() {
  static const FamilyInfo info{
      "direct-sum",
      {{"rope-alibi", parse_rope_alibi}, {"direct-sum", parse}, {"direct-sum-poly", parse_rope_poly}},
      {{"direct-sum:[<enc>,<enc>,...]",
        "rope_alibi = [rope,alibi], direct_sum = [rope,alibi,real-jordan], direct_sum_poly_m<k> = [rope,poly:k]",
        "G_1 (+) G_2 (+) ...", "1, then each part's columns"}},
      "direct-sum:[rope(dim=16),alibi(L=64)]",
      Rotary::of_parts,
      "a direct sum with one of them",
      {},
      {},
      false,
      "parts: [<enc>,<enc>,...], nested spellings family(key=value,...), required",
  };
  return info;
}

std::string print(const DirectSum& f, bool nested) {
  std::string list = "[";
  for (std::size_t i = 0; i < f.parts.size(); ++i) list += (i ? "," : "") + nested_spelling(f.parts[i]);
  return spell("direct-sum", {{"", list + "]"}}, nested);
}

bool is_exact(const DirectSum& f) {
  return std::all_of(f.parts.begin(), f.parts.end(), [](const Encoding& p) { return ropekit::is_exact(p); });
}
bool is_orthogonal(const DirectSum& f) {
  return std::all_of(f.parts.begin(), f.parts.end(), [](const Encoding& p) { return ropekit::is_orthogonal(p); });
}
bool is_relative(const DirectSum&) { return true; }
int lag_dims(const DirectSum& f) {
  int k = 1;
  for (const auto& p : f.parts) k = std::max(k, ropekit::lag_dims(p));
  return k;
}
bool has_frequencies(const DirectSum& f) {
  return std::any_of(f.parts.begin(), f.parts.end(), [](const Encoding& p) { return ropekit::has_frequencies(p); });
}
const FrequencySchedule* schedule(const DirectSum&) { return nullptr; }

// The first part's with frequencies.
FrequencyTable frequencies(const DirectSum& f, std::optional<double> seq_len, Convention convention, bool float32) {
  for (const auto& p : f.parts)
    if (ropekit::has_frequencies(p)) return ropekit::frequencies(p, seq_len, convention, float32);
  throw_no_frequencies(Encoding{f});
}

void append_blocks(const DirectSum& f, BlockContext& ctx) {
  for (const auto& part : f.parts) {
    check_cancelled();  // a sum of huge parts: Ctrl-C between parts (cancel.hpp)
    ropekit::append_blocks(part, ctx);
  }
}

Features features(const DirectSum& f, const Lags& lags) {
  Features out;
  out.values = Eigen::MatrixXd::Ones(lags.rows(), 1);
  out.names = {"1"};
  for (const auto& part : f.parts) {
    Features p = ropekit::features(part, lags);
    const Eigen::Index add = p.values.cols() - 1;
    out.values.conservativeResize(Eigen::NoChange, out.values.cols() + add);
    out.values.rightCols(add) = p.values.rightCols(add);
    out.names.insert(out.names.end(), p.names.begin() + 1, p.names.end());
  }
  return out;
}

std::int64_t feature_count(const DirectSum& f) {
  std::int64_t total = 1;
  for (const auto& part : f.parts) total += ropekit::feature_count(part) - 1;
  return total;
}

}  // namespace ropekit::enc
