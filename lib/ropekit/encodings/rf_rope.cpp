#include "ropekit/encodings/rf_rope.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ropekit/core/rng.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"
#include "ropekit/spectral/rf_estimator.hpp"
#include "ropekit/spectral/spectrum.hpp"

namespace ropekit::enc {

namespace {

// gaussian(sigma=20) -> gaussian:sigma=20 (the spectrum parser's own grammar), and back for printing.
std::string nested_to_colon(const std::string& text) {
  const auto open = text.find('(');
  if (open == std::string::npos || text.back() != ')') return text;
  return text.substr(0, open) + ":" + text.substr(open + 1, text.size() - open - 2);
}
std::string spectrum_nested(const Spectrum& s) {
  std::string t = spelling(s);
  const auto colon = t.find(':');
  return colon == std::string::npos ? t : t.substr(0, colon) + "(" + t.substr(colon + 1) + ")";
}

Encoding parse(Spelling& s, const ParseContext& ctx) {
  RfRope r;
  const auto spec = s.take_text("spectrum");
  if (!spec) ctx.bad(s, "spectrum", "missing", "a spectral family, e.g. spectrum=gaussian(sigma=1)");
  try {
    r.freqs.spectrum = parse_spectrum(nested_to_colon(*spec));
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}: spectrum: {}", ctx.where().context, s.where(), e.what()));
  }
  r.freqs.count = ctx.take_int_in(s, "blocks", 32, 1, kMaxNumFreqs);
  const auto params = s.params();
  if (std::any_of(params.begin(), params.end(), [](const auto& kv) { return kv.first == "seed"; }))
    r.freqs.seed = ctx.take_seed(s, "seed", 0);
  const auto sampling = s.take_word("sampling");
  if (sampling && *sampling == "quantile") {
    if (r.freqs.seed) ctx.bad(s, "sampling", "quantile", "used without seed (the quantile grid is deterministic)");
  } else if (sampling) {
    r.freqs.sampling = parse_sampling(*sampling);
    if (!r.freqs.seed) r.freqs.seed = kDefaultSeed;
  }
  s.finish("spectrum, blocks, seed, sampling");
  try {
    (void)ropekit::frequencies(FrequencySchedule{r.freqs, scaling::None{}});  // validates (the quantile grid needs k = 1, ...)
  } catch (const InputError& e) {
    ctx.rethrow(s, e);
  }
  return {r};
}

FrequencyTable table(const RfRope& f, std::optional<double> seq_len = std::nullopt,
                     Convention convention = Convention::huggingface, bool float32 = false) {
  return ropekit::frequencies(FrequencySchedule{f.freqs, scaling::None{}}, seq_len, convention, float32);
}

}  // namespace

const FamilyInfo& RfRope::info() {
  static const FamilyInfo info{
      "rf-rope",
      {{"rf-rope", parse}},
      {{"rf-rope:spectrum=<family>(...),blocks=<D>[,seed=<s>,sampling=iid|antithetic|stratified|quantile]", "",
        "R(-w_i . Dp), w_i drawn from the spectrum (quantile grid without seed)", "1, cos(w_i . d), sin(w_i . d)"}},
      "rf-rope:spectrum=gaussian(sigma=2),blocks=16,seed=7",
      Rotary::always,
      "",
      {"theta", "scale"},
      {{"blocks", KeyKind::integer, 1, kMaxNumFreqs, false, "32"},
       {"seed", KeyKind::seed, 0, 0, false, "unset (the deterministic quantile grid)"}},
      false,
      "spectrum: a spectral family (`ropekit kernel --families`), required; sampling: iid, antithetic, stratified "
      "or quantile, default iid with a seed, quantile without",
  };
  return info;
}

std::string print(const RfRope& f, bool nested) {
  KeyValues k{{"spectrum", spectrum_nested(f.freqs.spectrum)}, {"blocks", std::to_string(f.freqs.count)}};
  if (f.freqs.seed) {
    k.emplace_back("seed", std::to_string(*f.freqs.seed));
    k.emplace_back("sampling", sampling_name(f.freqs.sampling));
  }
  return spell("rf-rope", k, nested);
}

bool is_exact(const RfRope&) { return true; }
bool is_orthogonal(const RfRope&) { return true; }
bool is_relative(const RfRope&) { return true; }
int lag_dims(const RfRope& f) { return dims(f.freqs.spectrum); }
bool has_frequencies(const RfRope&) { return true; }
const FrequencySchedule* schedule(const RfRope&) { return nullptr; }

FrequencyTable frequencies(const RfRope& f, std::optional<double> seq_len, Convention convention, bool float32) {
  return table(f, seq_len, convention, float32);
}

void append_blocks(const RfRope& f, BlockContext& ctx) {
  const auto& t = ctx.cache.get(&f, [&] { return table(f); });
  if (t.theta.cols() != 1)
    throw InputError(fmt::format("rf-rope with a {}-D spectrum takes {}-D lags", t.theta.cols(), t.theta.cols()));
  ctx.rotary(t, {1.0});
}

std::vector<Block> rf_blocks(const RfRope& f, std::span<const double> lag, FrequencyCache& cache) {
  const auto& t = cache.get(&f, [&] { return table(f); });
  std::vector<Block> out(static_cast<std::size_t>(t.theta.rows()));
  for (Eigen::Index i = 0; i < t.theta.rows(); ++i) {
    double phase = 0;
    for (Eigen::Index j = 0; j < t.theta.cols(); ++j) phase -= t.theta(i, j) * lag[j];
    out[i] = Block{true, phase, {1.0}, 1};
  }
  return out;
}

Features features(const RfRope& f, const Lags& lags) { return trig_columns(table(f).theta, lags, {}, 1); }

std::int64_t feature_count(const RfRope& f) { return 1 + 2 * std::int64_t{f.freqs.count}; }

}  // namespace ropekit::enc
