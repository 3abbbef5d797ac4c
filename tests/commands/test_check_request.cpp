// The check request (commands/check_request.hpp): plain RoPE's exactness at rounding level, the verdicts, RoFormer's
// long-term decay bound by its definition, a model layer type's window masking the window lags it hides (with its
// note), Llama 4's query temperature making the layer not relative, and the refusals worded as the command line's.
#include <cmath>
#include <complex>
#include <stdexcept>

#include <doctest/doctest.h>

#include "ropekit/commands/check_request.hpp"
#include "ropekit/core/error.hpp"
#include "support.hpp"

using namespace ropekit;
using ropekit::test::source_path;

namespace {

// The rows of `quantity` (their lags and values as numbers; a verdict 1 or 0).
struct Picked {
  std::vector<double> lags, values;
  std::vector<std::string> labels;
};
Picked pick(const std::vector<CheckRow>& rows, const std::string& quantity, const std::string& encoding = "") {
  Picked p;
  for (const auto& r : rows)
    if (r.quantity == quantity && (encoding.empty() || r.encoding == encoding)) {
      p.lags.push_back(r.lag.value_or(NAN));
      p.values.push_back(std::holds_alternative<bool>(r.value) ? (std::get<bool>(r.value) ? 1.0 : 0.0)
                                                               : std::get<double>(r.value));
      p.labels.push_back(r.layer_type);
    }
  return p;
}

// RoFormer's bound by its definition: theta_k = base^(-2k/dim), k < dim/2, descending; (1/D) sum_j |S_j(lag)|.
double decay_by_hand(int dim, double base, double lag) {
  const int D = dim / 2;
  std::complex<double> s = 0;
  double sum = 0;
  for (int k = 0; k < D; ++k) {
    s += std::polar(1.0, lag * std::pow(base, -2.0 * k / dim));
    sum += std::abs(s);
  }
  return sum / D;
}

}  // namespace

TEST_CASE("check request: plain RoPE is exact to rounding, its decay bound RoFormer's") {
  CheckRequest r;
  r.encodings = {"rope:dim=8,base=100"};
  r.window_text = "0,1,7,100";
  const CheckPlan p = plan_check(r);
  REQUIRE(p.windows.size() == 1);
  CHECK(p.windows[0] == std::vector<double>{0, 1, 7, 100});
  CHECK(p.notes.empty());
  CHECK(check_check_budget(r, p) >= 0);
  const auto rows = check_rows(r, p);
  CHECK(pick(rows, "is_relative").values == std::vector<double>{1});
  CHECK(pick(rows, "is_orthogonal").values == std::vector<double>{1});
  // Rotations: G(s) G(t) = G(s + t), G^T G = I, G(-t) G(t) = I up to a few ulps of entries of size 1.
  for (const char* q : {"group_law_defect", "orthogonality_defect", "reversibility_defect"}) {
    CAPTURE(q);
    const auto d = pick(rows, q);
    REQUIRE(d.values.size() == 1);
    CHECK(d.values[0] >= 0);
    CHECK(d.values[0] < 1e-14);
    CHECK(std::isnan(d.lags[0]));  // no lag cell
  }
  const auto b = pick(rows, "long_term_decay_bound");
  CHECK(b.lags == std::vector<double>{0, 1, 7, 100});
  CHECK(b.values[0] == doctest::Approx(2.5).epsilon(1e-15));  // (D + 1)/2 at lag 0, D = 4
  for (std::size_t i = 0; i < 4; ++i) CHECK(b.values[i] == doctest::Approx(decay_by_hand(8, 100, b.lags[i])).epsilon(1e-13));
  for (const auto& row : rows) CHECK(row.layer_type.empty());
}

TEST_CASE("check request: sinusoidal is absolute (a relativity defect, no group law), the default window") {
  CheckRequest r;
  r.encodings = {"sinusoidal:dim=8"};
  const CheckPlan p = plan_check(r);
  CHECK(p.windows[0] == std::vector<double>{0, 1, 2, 5, 10, 50, 100, 1000});
  const auto rows = check_rows(r, p);
  CHECK(pick(rows, "is_relative").values == std::vector<double>{0});
  CHECK(pick(rows, "relativity_defect").values.size() == 1);
  CHECK(pick(rows, "group_law_defect").values.empty());
  // A scheme with an original context adds 2 L0 to the default window.
  CHECK(default_check_window(parse_encoding("rope:dim=8,scaling=yarn(factor=4,orig=2048)")).back() == 4096);
  CHECK(scheme_original_contexts(parse_encoding("direct-sum:[rope(dim=8,scaling=yarn(factor=4,orig=64)),rope(dim=4)]")) ==
        std::vector<double>{64});
}

TEST_CASE("check request: a sliding layer is checked on the window lags it sees, with a note") {
  CheckRequest r;
  r.layers = model_layers(std::vector<std::string>{source_path("data/models/gemma-3-4b.json")}, true,
                          Where::options(r.command));
  for (const auto& l : r.layers) r.encodings.push_back(l.encoding);
  REQUIRE(r.encodings.size() == 2);  // sliding (window 1024 in the file), full
  r.window_text = "0,10,1023,1024,5000";
  const CheckPlan p = plan_check(r);
  CHECK(p.windows[0] == std::vector<double>{0, 10, 1023});
  CHECK(p.windows[1] == std::vector<double>{0, 10, 1023, 1024, 5000});
  REQUIRE(p.notes.size() == 1);
  CHECK(p.notes[0] == "sliding_attention: sliding 1024 hides |lag| >= 1024: checked on the 3 window lag(s) it sees");
  const auto rows = check_rows(r, p);
  const auto sliding = pick(rows, "long_term_decay_bound", "rope:dim=256,base=10000,F=128");
  CHECK(sliding.lags == std::vector<double>{0, 10, 1023});
  CHECK(sliding.labels == std::vector<std::string>(3, "sliding_attention"));
  CHECK(sliding.values[2] == doctest::Approx(decay_by_hand(256, 10000, 1023)).epsilon(1e-12));
  for (const auto& row : rows) CHECK(!row.layer_type.empty());
  // Every window lag hidden: refused, naming --window as the command line spells it.
  r.layers.resize(1);
  r.encodings.resize(1);
  r.window_text = "1024,5000";
  CHECK_THROWS_WITH_AS(plan_check(r),
                       "ropekit check: --window = '1024,5000' (must be lags sliding_attention sees (sliding 1024 hides "
                       "|lag| >= 1024))",
                       InputError);
  r.window_text.clear();
  r.window = std::vector<double>{-1024, 2048};  // numbers (Python): echoed as their spelling
  CHECK_THROWS_WITH_AS(plan_check(r),
                       "ropekit check: --window = '-1024,2048' (must be lags sliding_attention sees (sliding 1024 hides "
                       "|lag| >= 1024))",
                       InputError);
}

TEST_CASE("check request: Llama 4's query temperature makes the layer not relative, said in a note") {
  CheckRequest r;
  r.layers = model_layers(std::vector<ModelReference>{{source_path("data/models/llama-4-scout.json"), "full_attention"}},
                          true, Where::options(r.command));
  REQUIRE(r.layers.size() == 1);
  r.encodings = {r.layers[0].encoding};
  r.window_text = "0,1";
  const CheckPlan p = plan_check(r);
  REQUIRE(p.notes.size() == 1);
  CHECK(p.notes[0].rfind("full_attention: is_relative false: the score is scaled by s(p)", 0) == 0);
  const auto rows = check_rows(r, p);
  CHECK(pick(rows, "is_relative").values == std::vector<double>{0});
  CHECK(pick(rows, "group_law_defect").values == std::vector<double>{0});  // G = I: its own rows exact
}

TEST_CASE("check request: refusals worded as the command line's") {
  CheckRequest r;
  r.encodings = {"rope:dim=8"};
  r.seq_len = -1;
  CHECK_THROWS_WITH_AS(plan_check(r), "ropekit check: --seq-len = -1 (must be finite and > 0)", InputError);
  r.seq_len.reset();
  r.window_text = "a";
  CHECK_THROWS_AS(plan_check(r), InputError);
  r.window_text.clear();
  r.window = std::vector<double>{};
  CHECK_THROWS_WITH_AS(plan_check(r), "ropekit check: --window = [] (must be at least one lag)", InputError);
  r.window = std::vector<double>{0, INFINITY};
  CHECK_THROWS_AS(plan_check(r), InputError);
  r.window.reset();
  r.encodings = {"jordan:m=3,dim=64"};
  r.window_text = "0,1,1e300";
  const CheckPlan p = plan_check(r);
  CHECK_THROWS_WITH_AS(check_rows(r, p),
                       "ropekit check: --window = 0,1,1e300 (must be lags at which G is finite for 'jordan:m=3,dim=64' "
                       "(reversibility_defect is nan))",
                       InputError);
  r.encodings = {"rope:dim=2097152"};
  r.window_text = "0:100";
  CHECK_THROWS_WITH_AS(check_check_budget(r, plan_check(r)), doctest::Contains("--encoding = 'rope:dim=2097152'"),
                       InputError);
  r.layers = {ModelLayer{}, ModelLayer{}};
  CHECK_THROWS_AS(plan_check(r), std::logic_error);  // one layer type per encoding
}

TEST_CASE("check: LongRoPE's switch defect, the query under the long factors and the cached key under the short") {
  // One pair (dim 2), base 100, short factor 1, long factor 4, orig 64: theta_S = 1, theta_L = 1/4. A query at p
  // (long) and a key at p - lag (short, p - lag < 64 <= p) score cos(p/4 - (p - lag)); the long kernel is cos(lag/4).
  // The worst over p = 64 .. 64 + lag - 1 at lag 8, written here from that definition.
  const Encoding e = parse_encoding("rope:dim=2,base=100,scaling=longrope(short=[1],long=[4],orig=64,max=256)");
  double worst = 0;
  for (double p = 64; p < 72; ++p) worst = std::max(worst, std::abs(std::cos(p / 4 - (p - 8)) - std::cos(8.0 / 4)));
  const auto d = longrope_switch_defect(e, {8});
  REQUIRE(d);
  CHECK(d->lag == 8);
  CHECK(d->defect == doctest::Approx(worst).epsilon(1e-12));  // cosines of arguments below 80 rad: 1e-14 each
  CHECK(d->defect > 0.1);
  // The same factors on both sides: no switch, no defect; a plain RoPE: no row.
  const auto same = longrope_switch_defect(parse_encoding("rope:dim=2,base=100,scaling=longrope(short=[4],long=[4],orig=64,max=256)"), {8, 100});
  REQUIRE(same);
  CHECK(same->defect < 1e-12);
  CHECK_FALSE(longrope_switch_defect(parse_encoding("rope:dim=8"), {8}));
  // Through the request: a row `longrope_switch_defect` at its worst lag, from Phi-3's config.
  CheckRequest r;
  r.encodings = {"rope:dim=2,base=100,scaling=longrope(short=[1],long=[4],orig=64,max=256)"};
  r.window_text = "8";
  const auto plan = plan_check(r);
  const auto picked = pick(check_rows(r, plan), "longrope_switch_defect");
  REQUIRE(picked.values.size() == 1);
  CHECK(picked.values[0] == doctest::Approx(worst).epsilon(1e-12));
}
