#include "ropekit/encodings/poly.hpp"

#include <array>

#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"

namespace ropekit::enc {

namespace {

Encoding parse(Spelling& s, const ParseContext& ctx) {
  Poly p;
  ctx.take_keys(s, poly_keys(), p);
  s.finish(key_names(poly_keys()));
  return {p};
}

}  // namespace

const std::array<Key<Poly>, 3>& poly_keys() {
  static const std::array<Key<Poly>, 3> keys = {{
      {"k", &Poly::k, KeyKind::integer, Fallback::member, 2, 32},
      {"tau", &Poly::bounded_tau, KeyKind::tau, Fallback::tau},
      {"L", &Poly::L, KeyKind::integer, Fallback::L, 1},
  }};
  return keys;
}

const FamilyInfo& Poly::info() {
  static const FamilyInfo info{
      "poly",
      {{"poly", parse}},
      {{"poly:k=<k>,tau=bounded|raw,L=<L>", "", "unipotent exp((tau/L) N_k)", "1, that^1..that^(k-1)"}},
      "poly:k=4,tau=raw,L=64",
      Rotary::never,
      "",
      {},
      key_rules(poly_keys()),
      false,
  };
  return info;
}

std::string print(const Poly& f, bool nested) { return spell("poly", print_keys(poly_keys(), f), nested); }

bool is_exact(const Poly& f) { return !f.bounded_tau; }
bool is_orthogonal(const Poly&) { return false; }
bool is_relative(const Poly&) { return true; }
int lag_dims(const Poly&) { return 1; }
bool has_frequencies(const Poly&) { return false; }
const FrequencySchedule* schedule(const Poly&) { return nullptr; }

FrequencyTable frequencies(const Poly& f, std::optional<double>, Convention, bool) {
  throw_no_frequencies(Encoding{f});
}

void append_blocks(const Poly& f, BlockContext& ctx) {
  ctx.out.push_back(Block{false, 0, jordan_chain(f.k, 0.0, 1.0 / f.L, ctx.lag, shear_time(ctx.lag, f.bounded_tau, f.L)), 1});
}

// direct_sum_poly's columns without RoPE's (F = 1: cos0, sin0).
Features features(const Poly& f, const Lags& lags) {
  return drop_columns(method_features(method::DirectSumPoly{f.k, f.bounded_tau}, shear_params(f.L, f.bounded_tau), lags),
                      1, 2);
}

std::int64_t feature_count(const Poly& f) { return f.k; }

}  // namespace ropekit::enc
