#include "ropekit/encodings/nd.hpp"

#include <cmath>

#include <fmt/format.h>

#include "ropekit/core/number_text.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/feature_columns.hpp"
#include "ropekit/lie/generator_io.hpp"

namespace ropekit::enc {

namespace {

// The axial and mixed families' keys, as parsed below and as the contract derives bad values from them.
// (A function's static: family_infos() may run during another file's static initialisation.)
const std::vector<KeyRule>& rules() {
  static const std::vector<KeyRule> r = {
      {"dim", KeyKind::integer, 4, 1024, false, "64 (mrope: 128)"},
      {"axes", KeyKind::integer, 1, 8, false, "2"},
      {"base", KeyKind::positive, 0, 0, false, "100 (mrope: 1e4)"}};
  return r;
}

// MRoPE (Qwen2-VL, Qwen3-VL): RoPE's one grid theta_i = base^{-2i/dim}, each pair rotated by one axis (t, h, w, ...):
// contiguous sections (Qwen2-VL: pairs 0..s0-1 by t, the next s1 by h, ...) or, interleaved (Qwen3-VL's
// apply_interleaved_mrope), pair i by axis a > 0 when i % N == a and i < N s_a, else by t. A torus whose lag is
// (Dt, Dh, Dw); text tokens (Dt = Dh = Dw) see 1-D RoPE.
GeneratorFamily take_mrope(Spelling& s, const ParseContext& ctx, std::string& canonical) {
  const auto& r = rules();
  const int dim = ctx.take_int_in(s, "dim", 128, static_cast<int>(r[0].min), static_cast<int>(r[0].max));
  const double base = ctx.take_positive(s, "base", 1e4);
  const bool interleaved = s.take_bool("interleaved").value_or(false);
  const auto items = s.take_items("sections");
  if (!items) ctx.bad(s, "sections", "(none)", "given: pairs per axis, e.g. sections=[16,24,24]");
  if (items->empty() || items->size() > 8) ctx.bad(s, "sections", fmt::format("{} entries", items->size()), "1 to 8 axes");
  std::vector<int> sections;
  int total = 0;
  for (const auto& item : *items) {
    const auto v = parse_int(item);
    if (!v || *v < 1 || *v > dim) ctx.bad(s, "sections", item, "integers >= 1");
    sections.push_back(static_cast<int>(*v));
    total += sections.back();
  }
  if (total != dim / 2)
    ctx.bad(s, "sections", format_numbers(std::vector<double>(sections.begin(), sections.end())),
            fmt::format("pair counts summing to dim / 2 = {} (they sum to {})", dim / 2, total));
  s.finish("family, dim, base, sections, interleaved");
  canonical = fmt::format("nd:family=mrope,dim={},base={},sections={},interleaved={}", dim, format_number(base),
                          format_numbers(std::vector<double>(sections.begin(), sections.end())),
                          interleaved ? "true" : "false");
  const auto axes = static_cast<int>(sections.size());
  gen::Torus t{Eigen::MatrixXd::Zero(axes, dim / 2)};
  for (int i = 0, a = 0, end = sections[0]; i < dim / 2; ++i) {
    int axis = 0;
    if (interleaved) {
      axis = i % axes != 0 && i < axes * sections[static_cast<std::size_t>(i % axes)] ? i % axes : 0;
    } else {
      while (i >= end) end += sections[static_cast<std::size_t>(++a)];
      axis = a;
    }
    t.frequencies(axis, i) = geometric_frequency(base, i, dim);
  }
  return t;
}

// The generators, and the canonical spelling: every key of a family written, defaults included (a file's spelling
// is its path).
GeneratorFamily take_generators(Spelling& s, const ParseContext& ctx, std::string& canonical) {
  if (const auto file = s.take_word("file")) {
    s.finish("file");
    canonical = "nd:file=" + *file;
    return gen::User{load_generator_file(*file).acting()};
  }
  const auto fam = s.take_word("family").value_or("axial");
  if (fam == "axial" || fam == "mixed") {
    const auto& r = rules();
    const int dim = ctx.take_int_in(s, "dim", 64, static_cast<int>(r[0].min), static_cast<int>(r[0].max));
    const int axes = ctx.take_int_in(s, "axes", 2, static_cast<int>(r[1].min), static_cast<int>(r[1].max));
    const double base = ctx.take_positive(s, "base", 100);
    canonical = fmt::format("nd:family={},dim={},axes={},base={}", fam, dim, axes, format_number(base));
    if (fam == "axial") {
      s.finish("family, dim, axes, base");
      return gen::Axial{dim, axes, base};
    }
    gen::Mixed m{dim, axes, base, 1};
    m.seed = ctx.take_seed(s, "seed", m.seed);
    s.finish("family, dim, axes, base, seed");
    canonical += fmt::format(",seed={}", m.seed);
    return m;
  }
  if (fam == "mrope") return take_mrope(s, ctx, canonical);
  ctx.bad(s, "family", fam, "axial, mixed or mrope (or file=PATH of generators)");
}

Encoding parse(Spelling& s, const ParseContext& ctx) {
  Nd n;
  n.generators = take_generators(s, ctx, n.spelling);
  try {
    (void)generators(n.generators);  // validates dim, axes, base as the generator families define them
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}: {}", ctx.where().context, s.where(), e.what()));
  }
  return {n};
}

bool torus(const Nd& f) { return !std::holds_alternative<gen::User>(f.generators); }

void require_torus(const Nd& f) {
  if (!torus(f)) throw InputError(fmt::format("encoding '{}': features need commuting (torus) generators", f.spelling));
}

}  // namespace

const FamilyInfo& Nd::info() {
  static const FamilyInfo info{
      "nd",
      {{"nd", parse}},
      {{"nd:family=axial|mixed,dim=<n>,axes=<N>,base=<B>[,seed=<s>] | nd:family=mrope,dim=<n>,base=<B>,"
        "sections=[<s_t>,<s_h>,<s_w>][,interleaved=true] | nd:file=<generators.json>",
        "",
        "exp(-sum_a Dp_a B_a)", "1, cos(w_b . d), sin(w_b . d) (torus)"}},
      "nd:family=axial,dim=8,axes=2,base=100",
      Rotary::sometimes,
      "nd with torus generators",
      {},
      rules(),
      false,
      "family: axial, mixed or mrope, default axial; seed: mixed only; sections: mrope, pairs per axis, required; "
      "interleaved: mrope, default false; file: a generators JSON instead of the rest",
  };
  return info;
}

// The canonical spelling made when parsing (take_generators).
std::string print(const Nd& f, bool) { return f.spelling; }

bool is_exact(const Nd&) { return true; }
bool is_orthogonal(const Nd& f) { return torus(f); }
bool is_relative(const Nd&) { return true; }
// From the family's parameters: building the generators costs O(n^2 N).
int lag_dims(const Nd& f) {
  return std::visit(Overloaded{
                        [](const gen::Torus& t) { return static_cast<int>(t.frequencies.rows()); },
                        [](const gen::User& u) { return static_cast<int>(u.matrices.size()); },
                        [](const gen::Axial& a) { return a.axes; },
                        [](const gen::Mixed& m) { return m.axes; },
                        [](const gen::Random& r) { return r.axes; },
                    },
                    f.generators);
}
bool has_frequencies(const Nd& f) { return torus(f); }
const FrequencySchedule* schedule(const Nd&) { return nullptr; }

// The torus frequencies (rows = blocks, cols = axes), rounded to float for float32.
FrequencyTable frequencies(const Nd& f, std::optional<double>, Convention, bool float32) {
  FrequencyTable t;
  t.theta = torus_frequencies(f.generators).transpose();
  if (float32) t.theta = t.theta.cast<float>().cast<double>();
  t.unscaled = t.theta;
  return t;
}

void append_blocks(const Nd&, BlockContext&) {
  throw InputError("nd encodings take vector lags and have no 1-D blocks (use relative_operator)");
}

Features features(const Nd& f, const Lags& lags) {
  require_torus(f);
  return trig_columns(torus_frequencies(f.generators).transpose(), lags, {}, 1);
}

std::int64_t feature_count(const Nd& f) {
  require_torus(f);
  return 1 + 2 * torus_frequencies(f.generators).cols();
}

}  // namespace ropekit::enc
