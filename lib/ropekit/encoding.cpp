#include "ropekit/encoding.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>

#include <fmt/format.h>

#include "ropekit/core/keep_max.hpp"
#include "ropekit/core/overloaded.hpp"
#include "ropekit/core/rng.hpp"
#include "ropekit/core/spelling.hpp"
#include "ropekit/encodings/basis.hpp"
#include "ropekit/encodings/jordan_block.hpp"
#include "ropekit/encodings/method.hpp"
#include "ropekit/lie/generator_io.hpp"
#include "ropekit/mc/rf_estimator.hpp"
#include "ropekit/spectral/spectrum.hpp"

namespace ropekit {

namespace {

constexpr int kMaxDim = 1 << 24;

std::string known_families() {
  return "rope, rope-freqs, rope-matched, xpos, rf-rope, damped, jordan, jordan-scaled, real-jordan, alibi, poly, "
         "nope, rope-alibi, direct-sum, direct-sum-poly, nd, sinusoidal, and the fixed-basis reference names "
         "(ropekit list methods)";
}

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

// ---------------------------------------------------------------------------------------------
// Parsing: one Spelling per family value (top level or nested), keys consumed, then finish().

struct Parser {
  const Where& where;
  const EncodingDefaults& defaults;

  [[noreturn]] void bad(const Spelling& s, std::string_view key, std::string_view value,
                        std::string_view constraint) const {
    throw InputError(fmt::format("{}: {}: {} = {} (must be {})", where.context, s.where(), s.name(key), value,
                                 constraint));
  }

  int take_int_in(Spelling& s, std::string_view key, int fallback, int min, int max) const {
    const auto v = s.take_int(key);
    if (!v) return fallback;
    if (*v < min || *v > max) bad(s, key, std::to_string(*v), fmt::format("an integer in [{}, {}]", min, max));
    return static_cast<int>(*v);
  }
  double take_positive(Spelling& s, std::string_view key, double fallback) const {
    const auto v = s.take_double(key);
    if (!v) return fallback;
    if (!(*v > 0) || !std::isfinite(*v)) bad(s, key, format_number(*v), "finite and > 0");
    return *v;
  }
  double take_nonnegative(Spelling& s, std::string_view key, double fallback) const {
    const auto v = s.take_double(key);
    if (!v) return fallback;
    if (!(*v >= 0) || !std::isfinite(*v)) bad(s, key, format_number(*v), "finite and >= 0");
    return *v;
  }
  bool take_tau(Spelling& s) const {
    const auto v = s.take_word("tau");
    if (!v) return defaults.bounded_tau;
    if (*v == "bounded") return true;
    if (*v == "raw") return false;
    bad(s, "tau", *v, "bounded or raw");
  }
  int take_L(Spelling& s) const {
    return take_int_in(s, "L", defaults.L, 1, std::numeric_limits<int>::max());
  }
  // A shear rate: finite, > 0 and 1/eta finite (the bounded shear time tends to 1/eta); absent: 1/L.
  std::optional<double> take_rate(Spelling& s, std::string_view key) const {
    const auto v = s.take_double(key);
    if (v && (!(*v > 0) || !std::isfinite(*v) || !std::isfinite(1 / *v)))
      bad(s, key, format_number(*v), fmt::format("finite and > 0 with 1/{} finite", key));
    return v;
  }

  // dim, base, F, partial, scaling | freqs=[...] | file=PATH
  static constexpr std::string_view kFreqKeys = "dim, base, F, partial, scaling, freqs, file";
  FrequencySchedule take_schedule(Spelling& s) const {
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
      g.dim = take_int_in(s, "dim", defaults.dim, 2, kMaxDim);
      g.base = take_positive(s, "base", defaults.base);
      const auto partial = s.take_double("partial");
      if (partial) {
        if (!(*partial > 0 && *partial <= 1)) bad(s, "partial", format_number(*partial), "in (0, 1]");
        g.partial = *partial;
      }
      const double r = g.dim * g.partial;
      if (r != std::floor(r) || static_cast<long>(r) % 2 != 0 || r < 2)
        bad(s, g.partial == 1 ? "dim" : "partial", g.partial == 1 ? std::to_string(g.dim) : format_number(g.partial),
            g.partial == 1 ? "a positive even integer" : "such that dim * partial is an even integer >= 2");
      // F: given, else r/2 when dim is given, else the run's F (a fit config's num_freqs), else r/2.
      const int fallback = dim_given || !defaults.count ? static_cast<int>(r) / 2 : *defaults.count;
      g.count = take_int_in(s, "F", fallback, 1, kMaxNumFreqs);
      out.source = g;
    }
    if (auto sc = s.take_spelling("scaling")) {
      std::map<std::string, std::string> keys;
      for (const auto& [k, v] : sc->params()) keys[k] = v;
      out.scaling = parse_scaling(sc->family(), keys, Where(fmt::format("{}: {}", where.context, s.where())));
    }
    // Evaluate once so that a bad combination (a scheme on explicit frequencies, longrope lengths) is
    // refused here, naming the spelling. Dynamic NTK needs a length: checked at a length past orig.
    try {
      const auto* dyn = std::get_if<scaling::Dynamic>(&out.scaling);
      (void)ropekit::frequencies(out, dyn ? std::optional<double>(2 * dyn->orig) : std::nullopt);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}: {}", where.context, s.where(), strip_context(e.what())));
    }
    return out;
  }


  Encoding direct_sum(std::vector<Encoding> parts) const { return Encoding{enc::DirectSum{std::move(parts)}}; }
  Encoding rope_part(const FrequencySchedule& f) const { return Encoding{enc::Rope{f}}; }

  Encoding parse_family(Spelling& s) {
    const std::string& f = s.family();
    if (f == "rope") {
      enc::Rope r{take_schedule(s)};
      s.finish(kFreqKeys);
      return {r};
    }
    if (f == "rope-freqs") {
      if (!has(s, "freqs") && !has(s, "file")) bad(s, "freqs", "missing", "given: freqs=[...] or file=PATH");
      enc::Rope r{take_schedule(s)};
      s.finish("freqs, file, scaling");
      return {r};
    }
    if (f == "rope-matched") {
      enc::RopeMatched r{take_schedule(s)};
      r.k = take_int_in(s, "k", 2, 1, std::numeric_limits<int>::max());
      s.finish("k, dim, base, F, partial, scaling, freqs, file");
      return {r};
    }
    if (f == "xpos") {
      enc::Xpos x;
      x.dim = take_int_in(s, "dim", defaults.dim, 2, kMaxDim);
      if (x.dim % 2) bad(s, "dim", std::to_string(x.dim), "a positive even integer");
      x.base = take_positive(s, "base", defaults.base);
      x.scale_base = take_positive(s, "scale_base", 512);
      s.finish("dim, base, scale_base");
      return {x};
    }
    if (f == "rf-rope") {
      enc::RfRope r;
      const auto spec = s.take_text("spectrum");
      if (!spec) bad(s, "spectrum", "missing", "a spectral family, e.g. spectrum=gaussian(sigma=1)");
      try {
        r.freqs.spectrum = parse_spectrum(nested_to_colon(*spec));
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}: {}: spectrum: {}", where.context, s.where(), e.what()));
      }
      r.freqs.count = take_int_in(s, "blocks", 32, 1, kMaxNumFreqs);
      if (const auto seed = s.take_text("seed"))
        r.freqs.seed = parse_unsigned_in(*seed, where, "seed", std::numeric_limits<std::uint64_t>::max());
      const auto sampling = s.take_word("sampling");
      if (sampling && *sampling == "quantile") {
        if (r.freqs.seed) bad(s, "sampling", "quantile", "used without seed (the quantile grid is deterministic)");
      } else if (sampling) {
        r.freqs.sampling = parse_sampling(*sampling);
        if (!r.freqs.seed) r.freqs.seed = kDefaultSeed;
      }
      s.finish("spectrum, blocks, seed, sampling");
      try {
        (void)ropekit::frequencies(FrequencySchedule{r.freqs, scaling::None{}});  // validates (the quantile grid needs k = 1, ...)
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}: {}: {}", where.context, s.where(), strip_context(e.what())));
      }
      return {r};
    }
    if (f == "damped" || f == "damped-rope") {
      enc::Damped d{take_schedule(s)};
      d.gamma = take_nonnegative(s, "gamma", defaults.gamma);
      s.finish("gamma, dim, base, F, partial, scaling, freqs, file");
      return {d};
    }
    if (f == "jordan") {
      enc::Jordan j{take_schedule(s)};
      j.m = take_int_in(s, "m", 2, 1, 32);
      j.gamma = take_nonnegative(s, "gamma", defaults.gamma);
      j.bounded_tau = take_tau(s);
      j.L = take_L(s);
      j.eta = take_rate(s, "eta");
      s.finish("m, gamma, tau, L, eta, dim, base, F, partial, scaling, freqs, file");
      return {j};
    }
    if (f == "jordan-scaled") {
      enc::JordanScaled j{take_schedule(s)};
      j.m = take_int_in(s, "m", 3, 2, 32);
      j.c = take_nonnegative(s, "c", 1.0);
      j.L = take_L(s);
      s.finish("m, c, L, dim, base, F, partial, scaling, freqs, file");
      return {j};
    }
    if (f == "real-jordan") {
      enc::RealJordan j;
      j.gamma = take_nonnegative(s, "gamma", defaults.gamma);
      j.bounded_tau = take_tau(s);
      j.L = take_L(s);
      s.finish("gamma, tau, L");
      return {j};
    }
    if (f == "alibi") {
      enc::Alibi a;
      a.slope = take_positive(s, "slope", 1.0);
      a.L = take_L(s);
      s.finish("slope, L");
      return {a};
    }
    if (f == "poly") {
      enc::Poly p;
      p.k = take_int_in(s, "k", 4, 2, 32);
      p.bounded_tau = take_tau(s);
      p.L = take_L(s);
      s.finish("k, tau, L");
      return {p};
    }
    if (f == "nope") {
      s.finish("");
      return {enc::Nope{}};
    }
    if (f == "rope-alibi") {  // fixed-basis rope_alibi = RoPE (+) ALiBi
      const auto fs = take_schedule(s);
      enc::Alibi a;
      a.L = take_L(s);
      s.finish("L, dim, base, F, partial, scaling, freqs, file");
      return direct_sum({rope_part(fs), {a}});
    }
    if (f == "direct-sum-poly") {  // RoPE (+) unipotent shear of order k
      const auto fs = take_schedule(s);
      enc::Poly p;
      p.k = take_int_in(s, "k", 4, 2, 32);
      p.bounded_tau = take_tau(s);
      p.L = take_L(s);
      s.finish("k, tau, L, dim, base, F, partial, scaling, freqs, file");
      return direct_sum({rope_part(fs), {p}});
    }
    if (f == "direct-sum") {
      if (auto items = s.take_spellings("")) {
        std::vector<Encoding> parts;
        for (auto& part : *items) parts.push_back(parse_family(part));
        if (parts.size() < 2) bad(s, "parts", std::to_string(parts.size()), "at least 2 encodings in [...]");
        for (std::size_t i = 0; i < parts.size(); ++i)
          if (lag_dims(parts[i]) != 1 || !is_relative(parts[i]))
            bad(s, fmt::format("parts[{}]", i), spelling(parts[i]),
                "a relative encoding of 1-D lags (a direct sum shares one scalar lag)");
        s.finish("");
        return direct_sum(std::move(parts));
      }
      // The fixed-basis direct_sum: RoPE (+) ALiBi (+) real Jordan, columns 1, C, S, x, E, that E.
      const auto fs = take_schedule(s);
      enc::RealJordan j;
      j.gamma = take_nonnegative(s, "gamma", defaults.gamma);
      j.bounded_tau = take_tau(s);
      j.L = take_L(s);
      s.finish("[parts...] or gamma, tau, L, dim, base, F, partial, scaling, freqs, file");
      enc::Alibi a;
      a.L = j.L;
      return direct_sum({rope_part(fs), {a}, {j}});
    }
    if (f == "nd") {
      enc::Nd n;
      n.spelling = s.text();
      n.generators = take_generators(s);
      try {
        (void)generators(n.generators);  // validates dim, axes, base as the generator families define them
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}: {}: {}", where.context, s.where(), e.what()));
      }
      return {n};
    }
    if (f == "sinusoidal") {
      enc::Sinusoidal x;
      x.dim = take_int_in(s, "dim", defaults.dim, 2, 4096);
      if (x.dim % 2) bad(s, "dim", std::to_string(x.dim), "a positive even integer");
      x.base = take_positive(s, "base", defaults.base);
      if (const auto seed = s.take_text("seed"))
        x.seed = parse_unsigned_in(*seed, where, "seed", std::numeric_limits<std::uint64_t>::max());
      s.finish("dim, base, seed");
      return {x};
    }
    throw InputError(fmt::format("{}: {} '{}': unknown encoding family '{}' (known: {})", where.context, s.what(),
                                 s.text(), f, known_families()));
  }

  GeneratorFamily take_generators(Spelling& s) const {
    if (const auto file = s.take_word("file")) {
      s.finish("file");
      return gen::User{load_generator_file(*file).acting()};
    }
    const auto fam = s.take_word("family").value_or("axial");
    if (fam == "axial" || fam == "mixed") {
      const int dim = take_int_in(s, "dim", 64, 4, 1024);
      const int axes = take_int_in(s, "axes", 2, 1, 8);
      const double base = take_positive(s, "base", 100);
      if (fam == "axial") {
        s.finish("family, dim, axes, base");
        return gen::Axial{dim, axes, base};
      }
      gen::Mixed m{dim, axes, base, 1};
      if (const auto seed = s.take_text("seed"))
        m.seed = parse_unsigned_in(*seed, where, "seed", std::numeric_limits<std::uint64_t>::max());
      s.finish("family, dim, axes, base, seed");
      return m;
    }
    bad(s, "family", fam, "axial or mixed (or file=PATH of generators)");
  }

  static std::string nested_to_colon(const std::string& text) {
    // gaussian(sigma=20) -> gaussian:sigma=20 (the spectrum parser's own grammar).
    const auto open = text.find('(');
    if (open == std::string::npos || text.back() != ')') return text;
    return text.substr(0, open) + ":" + text.substr(open + 1, text.size() - open - 2);
  }
};

}  // namespace


}  // namespace ropekit

// =============================================================================================
namespace ropekit {

namespace {

FrequencySchedule default_schedule(const EncodingDefaults& d) {
  Geometric g;
  g.dim = d.dim;
  g.base = d.base;
  g.count = d.count.value_or(d.dim / 2);
  return {g, scaling::None{}};
}

// A reference method value (fixed-basis.md section 2) as the family value it names.
Encoding from_method(const Method& method, const EncodingDefaults& d) {
  using namespace method;
  const auto fs = default_schedule(d);
  const int L = d.L;
  auto rope = [&] { return Encoding{enc::Rope{fs}}; };
  auto alibi = [&] { return Encoding{enc::Alibi{1.0, L}}; };
  return std::visit(
      Overloaded{
          [&](const Nope&) { return Encoding{enc::Nope{}}; },
          [&](const Rope&) { return rope(); },
          [&](const RopeMatched& m) { return Encoding{enc::RopeMatched{fs, m.k}}; },
          [&](const Alibi&) { return alibi(); },
          [&](const RopeAlibi&) { return Encoding{enc::DirectSum{{rope(), alibi()}}}; },
          [&](const DampedRope& m) { return Encoding{enc::Damped{fs, m.gamma.value_or(d.gamma)}}; },
          [&](const RealJordan& m) {
            return Encoding{enc::RealJordan{m.gamma.value_or(d.gamma), m.bounded_tau.value_or(d.bounded_tau), L}};
          },
          [&](const DirectSum& m) {
            Encoding j{enc::RealJordan{m.gamma.value_or(d.gamma), m.bounded_tau.value_or(d.bounded_tau), L}};
            return Encoding{enc::DirectSum{{rope(), alibi(), j}}};
          },
          [&](const DirectSumPoly& m) {
            Encoding p{enc::Poly{m.k, m.bounded_tau.value_or(d.bounded_tau), L}};
            return Encoding{enc::DirectSum{{rope(), p}}};
          },
          [&](const Jordan& m) {
            return Encoding{
                enc::Jordan{fs, m.m, m.gamma.value_or(d.gamma), m.bounded_tau.value_or(d.bounded_tau), L}};
          },
          [&](const JordanScaled& m) { return Encoding{enc::JordanScaled{fs, m.m, m.c, L}}; },
      },
      method);
}

bool is_reference_name(std::string_view text) {
  const auto family = text.substr(0, text.find(':'));
  return family.find('_') != std::string_view::npos;
}

}  // namespace

Encoding parse_encoding(std::string_view text, const Where& where, const EncodingDefaults& defaults) {
  if (is_reference_name(text)) return from_method(parse_method(text, where.context + ": encoding"), defaults);
  Spelling s = Spelling::parse(text, "encoding");
  Parser p{where, defaults};
  return p.parse_family(s);
}

// ---------------------------------------------------------------------------------------------
// Printing: every parameter explicit, so a spelling means the same under any defaults.

namespace {

std::string tau_text(bool bounded) { return bounded ? "bounded" : "raw"; }

// gaussian:sigma=20 -> gaussian(sigma=20), the nested form of a spectrum's own spelling.
std::string spectrum_nested(const Spectrum& s) {
  std::string t = spelling(s);
  const auto colon = t.find(':');
  return colon == std::string::npos ? t : t.substr(0, colon) + "(" + t.substr(colon + 1) + ")";
}

std::vector<std::pair<std::string, std::string>> schedule_keys(const FrequencySchedule& f) {
  std::vector<std::pair<std::string, std::string>> keys;
  std::visit(Overloaded{
                 [&](const Geometric& g) {
                   keys.emplace_back("dim", std::to_string(g.dim));
                   keys.emplace_back("base", format_number(g.base));
                   if (g.partial != 1) keys.emplace_back("partial", format_number(g.partial));
                   keys.emplace_back("F", std::to_string(g.count.value_or(static_cast<int>(g.dim * g.partial) / 2)));
                 },
                 [&](const ExplicitFrequencies& e) {
                   if (!e.source.empty()) {
                     keys.emplace_back("file", e.source);
                   } else {
                     std::string list = "[";
                     for (std::size_t i = 0; i < e.values.size(); ++i)
                       list += (i ? "," : "") + format_number(e.values[i]);
                     keys.emplace_back("freqs", list + "]");
                   }
                 },
                 [&](const SampledFrequencies&) {},
             },
             f.source);
  if (!std::holds_alternative<scaling::None>(f.scaling)) keys.emplace_back("scaling", spelling(f.scaling));
  return keys;
}

std::string print(const Encoding& e, bool nested) {
  using K = std::vector<std::pair<std::string, std::string>>;
  auto out = [&](std::string_view family, const K& keys) {
    return nested ? format_nested(family, keys) : format_spelling(family, keys);
  };
  return std::visit(
      Overloaded{
          [&](const enc::Rope& r) { return out("rope", schedule_keys(r.freqs)); },
          [&](const enc::RopeMatched& r) {
            K k = schedule_keys(r.freqs);
            k.insert(k.begin(), {"k", std::to_string(r.k)});
            return out("rope-matched", k);
          },
          [&](const enc::Xpos& x) {
            return out("xpos", {{"dim", std::to_string(x.dim)},
                                {"base", format_number(x.base)},
                                {"scale_base", format_number(x.scale_base)}});
          },
          [&](const enc::RfRope& r) {
            K k{{"spectrum", spectrum_nested(r.freqs.spectrum)}, {"blocks", std::to_string(r.freqs.count)}};
            if (r.freqs.seed) {
              k.emplace_back("seed", std::to_string(*r.freqs.seed));
              k.emplace_back("sampling", sampling_name(r.freqs.sampling));
            }
            return out("rf-rope", k);
          },
          [&](const enc::Damped& d) {
            K k = schedule_keys(d.freqs);
            k.insert(k.begin(), {"gamma", format_number(d.gamma)});
            return out("damped", k);
          },
          [&](const enc::Jordan& j) {
            K k{{"m", std::to_string(j.m)},
                {"gamma", format_number(j.gamma)},
                {"tau", tau_text(j.bounded_tau)},
                {"L", std::to_string(j.L)}};
            if (j.eta) k.emplace_back("eta", format_number(*j.eta));
            for (auto& kv : schedule_keys(j.freqs)) k.push_back(kv);
            return out("jordan", k);
          },
          [&](const enc::JordanScaled& j) {
            K k{{"m", std::to_string(j.m)}, {"c", format_number(j.c)}, {"L", std::to_string(j.L)}};
            for (auto& kv : schedule_keys(j.freqs)) k.push_back(kv);
            return out("jordan-scaled", k);
          },
          [&](const enc::RealJordan& j) {
            return out("real-jordan",
                       {{"gamma", format_number(j.gamma)}, {"tau", tau_text(j.bounded_tau)}, {"L", std::to_string(j.L)}});
          },
          [&](const enc::Alibi& a) {
            return out("alibi", {{"slope", format_number(a.slope)}, {"L", std::to_string(a.L)}});
          },
          [&](const enc::Poly& p) {
            return out("poly", {{"k", std::to_string(p.k)}, {"tau", tau_text(p.bounded_tau)}, {"L", std::to_string(p.L)}});
          },
          [&](const enc::Nope&) { return std::string("nope"); },
          [&](const enc::DirectSum& d) {
            std::string list = "[";
            for (std::size_t i = 0; i < d.parts.size(); ++i) list += (i ? "," : "") + print(d.parts[i], true);
            return out("direct-sum", {{"", list + "]"}});
          },
          [&](const enc::Nd& n) { return n.spelling; },
          [&](const enc::Sinusoidal& s) {
            return out("sinusoidal",
                       {{"dim", std::to_string(s.dim)}, {"base", format_number(s.base)}, {"seed", std::to_string(s.seed)}});
          },
      },
      e.value);
}

}  // namespace

std::string spelling(const Encoding& e) { return print(e, false); }

std::string family_name(const Encoding& e) {
  return std::visit(Overloaded{
                        [](const enc::Rope&) { return "rope"; },
                        [](const enc::RopeMatched&) { return "rope-matched"; },
                        [](const enc::Xpos&) { return "xpos"; },
                        [](const enc::RfRope&) { return "rf-rope"; },
                        [](const enc::Damped&) { return "damped"; },
                        [](const enc::Jordan&) { return "jordan"; },
                        [](const enc::JordanScaled&) { return "jordan-scaled"; },
                        [](const enc::RealJordan&) { return "real-jordan"; },
                        [](const enc::Alibi&) { return "alibi"; },
                        [](const enc::Poly&) { return "poly"; },
                        [](const enc::Nope&) { return "nope"; },
                        [](const enc::DirectSum&) { return "direct-sum"; },
                        [](const enc::Nd&) { return "nd"; },
                        [](const enc::Sinusoidal&) { return "sinusoidal"; },
                    },
                    e.value);
}

// ---------------------------------------------------------------------------------------------
// Frequencies and blocks.

namespace {

// The M = max(1, floor(F/k)) highest frequencies of a schedule (rope_matched).
FrequencyTable matched(const enc::RopeMatched& r, std::optional<double> seq_len,
                       Convention convention = Convention::huggingface, bool float32 = false) {
  FrequencyTable t = frequencies(r.freqs, seq_len, convention, float32);
  const Eigen::Index M = std::max<Eigen::Index>(1, t.theta.rows() / r.k);
  // Geometric grids descend from theta_0 = 1 when base > 1: the first M are the highest.
  t.theta.conservativeResize(M, Eigen::NoChange);
  t.unscaled.conservativeResize(M, Eigen::NoChange);
  return t;
}

FrequencyTable xpos_table(const enc::Xpos& x, bool float32 = false) {
  Geometric g;
  g.dim = x.dim;
  g.base = x.base;
  return frequencies(FrequencySchedule{g, scaling::None{}}, std::nullopt, Convention::huggingface, float32);
}

double xpos_zeta(const enc::Xpos& x, Eigen::Index i) { return (2.0 * i + 0.4 * x.dim) / (1.4 * x.dim); }

// Identity dims of partial RoPE (n - r): only geometric schedules have them.
int identity_dims(const FrequencySchedule& f) {
  if (const auto* g = std::get_if<Geometric>(&f.source)) return g->dim - static_cast<int>(g->dim * g->partial);
  return 0;
}

double shear_time(double d, bool bounded, int L) { return bounded ? d / (1 + std::abs(d) / L) : d; }

// Jordan's shear time and rate: eta = 1/L unless given. Given, the bounded tau = Dp / (1 + eta |Dp|), which is
// 1/eta (finite by the parser) where eta |Dp| overflows; absent, shear_time's d/L exactly as before.
double jordan_rate(const enc::Jordan& j) { return j.eta ? *j.eta : 1.0 / j.L; }
double jordan_shear_time(const enc::Jordan& j, double d) {
  if (!j.eta || !j.bounded_tau) return shear_time(d, j.bounded_tau, j.L);
  const double s = *j.eta * std::abs(d);
  return std::isinf(s) ? std::copysign(1 / *j.eta, d) : d / (1 + s);
}

void rotary(std::vector<Block>& out, const FrequencyTable& t, double lag, const std::vector<double>& c0,
            auto&& chain) {
  for (Eigen::Index i = 0; i < t.theta.rows(); ++i) {
    Block b;
    b.phase = -t.theta(i, 0) * lag;
    b.c = chain(i, c0);
    out.push_back(std::move(b));
  }
}

// The frequencies of each schedule of an encoding, computed once per call over many lags (they depend on the
// sequence length only, fixed per call); deque: references stay valid as tables are added.
class FrequencyCache {
 public:
  template <class Make>
  const FrequencyTable& get(const void* key, Make&& make) {
    for (const auto& [k, t] : tables_)
      if (k == key) return t;
    tables_.emplace_back(key, make());
    return tables_.back().second;
  }

 private:
  std::deque<std::pair<const void*, FrequencyTable>> tables_;
};

bool per_lag_length(const FrequencySchedule& f, std::optional<double> seq_len) {
  return !seq_len && std::holds_alternative<scaling::Dynamic>(f.scaling);
}

// Dynamic NTK without a given length: the length a causal model has seen at this lag, T = |Dp| + 1 (into
// `scratch`, never cached); every other schedule from the cache.
const FrequencyTable& frequencies_at(const FrequencySchedule& f, std::optional<double> seq_len, double lag,
                                     FrequencyCache& cache, FrequencyTable& scratch) {
  if (per_lag_length(f, seq_len)) return scratch = frequencies(f, std::abs(lag) + 1);
  return cache.get(&f, [&] { return frequencies(f, seq_len); });
}

void append_blocks(std::vector<Block>& out, const Encoding& e, double lag, std::optional<double> seq_len,
                   FrequencyCache& cache) {
  FrequencyTable scratch;
  auto plain = [](Eigen::Index, const std::vector<double>& c) { return c; };
  auto identity = [&](int dims) {
    if (dims > 0) out.push_back(Block{false, 0, {1.0}, dims});
  };
  // c_p = e^{-gamma Dp} (eta s)^p / p! (jordan_block.hpp, paper eq. 3.3), eta = 1/L (or jordan's eta), s the
  // shear time.
  auto jordan_chain = [&](int m, double gamma, double eta, double s) {
    const Eigen::VectorXd c = jordan_coefficients(JordanBlock{m, gamma, 0.0, eta}, lag, s);
    return std::vector<double>(c.data(), c.data() + c.size());
  };
  std::visit(
      Overloaded{
          [&](const enc::Rope& r) {
            const auto& t = frequencies_at(r.freqs, seq_len, lag, cache, scratch);
            const double a2 = t.attention_factor * t.attention_factor;
            rotary(out, t, lag, {a2}, plain);
            identity(identity_dims(r.freqs));
          },
          [&](const enc::RopeMatched& r) {
            const bool per_lag = per_lag_length(r.freqs, seq_len);
            const auto& t = per_lag ? (scratch = matched(r, std::abs(lag) + 1))
                                    : cache.get(&r, [&] { return matched(r, seq_len); });
            rotary(out, t, lag, {1.0}, plain);
          },
          [&](const enc::Xpos& x) {
            const auto& t = cache.get(&x, [&] { return xpos_table(x); });
            rotary(out, t, lag, {1.0}, [&](Eigen::Index i, const std::vector<double>&) {
              return std::vector<double>{std::pow(xpos_zeta(x, i), lag / x.scale_base)};
            });
          },
          [&](const enc::RfRope& r) {
            const auto& t = cache.get(&r, [&] { return frequencies(FrequencySchedule{r.freqs, scaling::None{}}); });
            if (t.theta.cols() != 1)
              throw InputError(fmt::format("rf-rope with a {}-D spectrum takes {}-D lags", t.theta.cols(), t.theta.cols()));
            rotary(out, t, lag, {1.0}, plain);
          },
          [&](const enc::Damped& d) {
            const auto& t = frequencies_at(d.freqs, seq_len, lag, cache, scratch);
            rotary(out, t, lag, {std::exp(-d.gamma * lag) * t.attention_factor * t.attention_factor}, plain);
            identity(identity_dims(d.freqs));
          },
          [&](const enc::Jordan& j) {
            const auto& t = frequencies_at(j.freqs, seq_len, lag, cache, scratch);
            const auto c = jordan_chain(j.m, j.gamma, jordan_rate(j), jordan_shear_time(j, lag));
            rotary(out, t, lag, c, plain);
            identity(identity_dims(j.freqs));
          },
          [&](const enc::JordanScaled& j) {
            const auto& t = frequencies_at(j.freqs, seq_len, lag, cache, scratch);
            rotary(out, t, lag, jordan_chain(j.m, j.c / j.L, 1.0 / j.L, lag), plain);
            identity(identity_dims(j.freqs));
          },
          [&](const enc::RealJordan& j) {
            out.push_back(Block{false, 0, jordan_chain(2, j.gamma, 1.0 / j.L, shear_time(lag, j.bounded_tau, j.L)), 1});
          },
          [&](const enc::Alibi& a) { out.push_back(Block{false, 0, {1.0, -a.slope * lag}, 1}); },
          [&](const enc::Poly& p) {
            out.push_back(Block{false, 0, jordan_chain(p.k, 0.0, 1.0 / p.L, shear_time(lag, p.bounded_tau, p.L)), 1});
          },
          [&](const enc::Nope&) { identity(1); },
          [&](const enc::DirectSum& d) {
            for (const auto& part : d.parts) append_blocks(out, part, lag, seq_len, cache);
          },
          [&](const enc::Nd&) {
            throw InputError("nd encodings take vector lags and have no 1-D blocks (use relative_operator)");
          },
          [&](const enc::Sinusoidal&) {
            throw InputError("sinusoidal is an absolute encoding: it has no relative operator (see ropekit check)");
          },
      },
      e.value);
}

}  // namespace

std::vector<Block> blocks(const Encoding& e, double lag, std::optional<double> seq_len) {
  if (!std::isfinite(lag)) throw InputError(fmt::format("lag = {} (must be finite)", format_number(lag)));
  std::vector<Block> out;
  FrequencyCache cache;
  append_blocks(out, e, lag, seq_len, cache);
  return out;
}

FrequencyTable frequencies(const Encoding& e, std::optional<double> seq_len) {
  return frequencies(e, seq_len, Convention::huggingface, false);
}

FrequencyTable frequencies(const Encoding& e, std::optional<double> seq_len, Convention convention, bool float32) {
  auto none = [&]() -> FrequencyTable {
    throw InputError(fmt::format("encoding '{}' has no frequencies", spelling(e)));
  };
  auto of = [&](const FrequencySchedule& f) { return frequencies(f, seq_len, convention, float32); };
  return std::visit(Overloaded{
                        [&](const enc::Rope& r) { return of(r.freqs); },
                        [&](const enc::RopeMatched& r) { return matched(r, seq_len, convention, float32); },
                        [&](const enc::Xpos& x) { return xpos_table(x, float32); },
                        [&](const enc::RfRope& r) { return of(FrequencySchedule{r.freqs, scaling::None{}}); },
                        [&](const enc::Damped& d) { return of(d.freqs); },
                        [&](const enc::Jordan& j) { return of(j.freqs); },
                        [&](const enc::JordanScaled& j) { return of(j.freqs); },
                        [&](const enc::DirectSum& d) {
                          for (const auto& p : d.parts)
                            if (has_frequencies(p)) return frequencies(p, seq_len, convention, float32);
                          return none();
                        },
                        [&](const enc::Nd& n) {
                          FrequencyTable t;
                          t.theta = torus_frequencies(n.generators).transpose();
                          if (float32) t.theta = t.theta.cast<float>().cast<double>();
                          t.unscaled = t.theta;
                          return t;
                        },
                        [&](const enc::Sinusoidal& s) {
                          Geometric g;
                          g.dim = s.dim;
                          g.base = s.base;
                          return of(FrequencySchedule{g, scaling::None{}});
                        },
                        [&](const auto&) { return none(); },
                    },
                    e.value);
}

bool has_frequencies(const Encoding& e) {
  return std::visit(Overloaded{
                        [](const enc::DirectSum& d) {
                          return std::any_of(d.parts.begin(), d.parts.end(), [](const Encoding& p) { return has_frequencies(p); });
                        },
                        [](const enc::Nd& n) { return !std::holds_alternative<gen::User>(n.generators); },
                        [](const enc::Alibi&) { return false; },
                        [](const enc::Poly&) { return false; },
                        [](const enc::RealJordan&) { return false; },
                        [](const enc::Nope&) { return false; },
                        [](const auto&) { return true; },
                    },
                    e.value);
}

int lag_dims(const Encoding& e) {
  return std::visit(Overloaded{
                        [](const enc::RfRope& r) { return dims(r.freqs.spectrum); },
                        [](const enc::Nd& n) {  // from the family's parameters: building the generators costs O(n^2 N)
                          return std::visit(Overloaded{
                                                [](const gen::Torus& t) { return static_cast<int>(t.frequencies.rows()); },
                                                [](const gen::User& u) { return static_cast<int>(u.matrices.size()); },
                                                [](const auto& f) { return f.axes; },
                                            },
                                            n.generators);
                        },
                        [](const enc::DirectSum& d) {
                          int k = 1;
                          for (const auto& p : d.parts) k = std::max(k, lag_dims(p));
                          return k;
                        },
                        [](const auto&) { return 1; },
                    },
                    e.value);
}

bool is_relative(const Encoding& e) { return !std::holds_alternative<enc::Sinusoidal>(e.value); }

bool is_orthogonal(const Encoding& e) {
  return std::visit(Overloaded{
                        [](const enc::Rope& r) {
                          return !std::holds_alternative<scaling::Yarn>(r.freqs.scaling) &&
                                 !std::holds_alternative<scaling::LongRope>(r.freqs.scaling);
                        },
                        [](const enc::RopeMatched&) { return true; },
                        [](const enc::RfRope&) { return true; },
                        [](const enc::Nope&) { return true; },
                        [](const enc::Nd& n) { return !std::holds_alternative<gen::User>(n.generators); },
                        [](const enc::DirectSum& d) {
                          return std::all_of(d.parts.begin(), d.parts.end(), [](const Encoding& p) { return is_orthogonal(p); });
                        },
                        [](const auto&) { return false; },
                    },
                    e.value);
}

bool is_exact(const Encoding& e) {
  return std::visit(Overloaded{
                        [](const enc::Rope& r) { return !std::holds_alternative<scaling::Dynamic>(r.freqs.scaling); },
                        [](const enc::Damped& d) { return !std::holds_alternative<scaling::Dynamic>(d.freqs.scaling); },
                        [](const enc::Jordan& j) {
                          return !j.bounded_tau && !std::holds_alternative<scaling::Dynamic>(j.freqs.scaling);
                        },
                        [](const enc::JordanScaled& j) { return !std::holds_alternative<scaling::Dynamic>(j.freqs.scaling); },
                        [](const enc::RealJordan& j) { return !j.bounded_tau; },
                        [](const enc::Poly& p) { return !p.bounded_tau; },
                        [](const enc::DirectSum& d) {
                          return std::all_of(d.parts.begin(), d.parts.end(), [](const Encoding& p) { return is_exact(p); });
                        },
                        [](const enc::Sinusoidal&) { return false; },
                        [](const auto&) { return true; },
                    },
                    e.value);
}

namespace {

// k-D rf-rope: rotary blocks at phases -w_i . Dp.
std::vector<Block> rf_blocks(const enc::RfRope& r, std::span<const double> lag, FrequencyCache& cache) {
  const auto& t = cache.get(&r, [&] { return frequencies(FrequencySchedule{r.freqs, scaling::None{}}); });
  std::vector<Block> out(static_cast<std::size_t>(t.theta.rows()));
  for (Eigen::Index i = 0; i < t.theta.rows(); ++i) {
    double phase = 0;
    for (Eigen::Index j = 0; j < t.theta.cols(); ++j) phase -= t.theta(i, j) * lag[j];
    out[i] = Block{true, phase, {1.0}, 1};
  }
  return out;
}

Eigen::MatrixXd nd_operator(const Encoder& encoder, std::span<const double> lag) {
  Eigen::VectorXd x(static_cast<Eigen::Index>(lag.size()));
  for (std::size_t j = 0; j < lag.size(); ++j) x[j] = -lag[j];  // G(Dp) = R(p_q)^T R(p_k) = R(-Dp)
  return encoder(x);
}

void check_lag(const Encoding& e, std::span<const double> lag) {
  const int k = lag_dims(e);
  if (static_cast<int>(lag.size()) != k)
    throw InputError(fmt::format("encoding '{}' takes {}-D lags; got {} components", spelling(e), k, lag.size()));
  for (double v : lag)
    if (!std::isfinite(v)) throw InputError(fmt::format("lag = {} (must be finite)", format_number(v)));
}

}  // namespace

Eigen::MatrixXd relative_operator(const Encoding& e, std::span<const double> lag, std::optional<double> seq_len) {
  check_lag(e, lag);
  if (const auto* n = std::get_if<enc::Nd>(&e.value)) return nd_operator(Encoder(generators(n->generators)), lag);
  FrequencyCache cache;
  if (const auto* r = std::get_if<enc::RfRope>(&e.value)) return assemble(rf_blocks(*r, lag, cache));
  return assemble(blocks(e, lag[0], seq_len));
}

int operator_dim(const Encoding& e) {
  if (const auto* n = std::get_if<enc::Nd>(&e.value)) return generators(n->generators).dim;
  if (std::holds_alternative<enc::Sinusoidal>(e.value)) return std::get<enc::Sinusoidal>(e.value).dim;
  const int k = lag_dims(e);
  const std::vector<double> zero(static_cast<std::size_t>(k), 0.0);
  int n = 0;
  FrequencyCache cache;
  for (const auto& b : (k == 1 ? blocks(e, 0.0) : rf_blocks(std::get<enc::RfRope>(e.value), zero, cache)))
    n += b.repeat * b.size();
  return n;
}

std::vector<KernelRow> kernel_rows(const Encoding& e, const Lags& lags, double rho, std::optional<double> seq_len) {
  if (!(rho >= -1 && rho <= 1)) throw InputError(fmt::format("rho = {} (must be in [-1, 1])", format_number(rho)));
  if (!is_relative(e))
    throw InputError(fmt::format("encoding '{}' is absolute (not relative): it has no kernel of the lag; "
                                 "ropekit check reports its relativity defect", spelling(e)));
  std::vector<KernelRow> rows(static_cast<std::size_t>(lags.rows()));
  const auto* rf = std::get_if<enc::RfRope>(&e.value);
  const auto* nd = std::get_if<enc::Nd>(&e.value);
  const std::optional<Encoder> nd_encoder = nd ? std::optional<Encoder>(Encoder(generators(nd->generators))) : std::nullopt;
  FrequencyCache cache;  // frequencies once for all lags
  std::vector<Block> bs;
  auto sums = [&](std::span<const double> lag, double& tr, double& fro, double& trsq) {
    if (nd) {
      const Eigen::MatrixXd G = nd_operator(*nd_encoder, lag);
      tr = G.trace();
      fro = G.squaredNorm();
      trsq = (G * G).trace();
      return;
    }
    tr = fro = trsq = 0;
    if (rf) {
      bs = rf_blocks(*rf, lag, cache);
    } else {
      bs.clear();
      append_blocks(bs, e, lag[0], seq_len, cache);
    }
    for (const auto& b : bs) {
      tr += trace(b);
      fro += frobenius_squared(b);
      trsq += trace_of_square(b);
    }
  };
  const std::vector<double> zero(static_cast<std::size_t>(lag_dims(e)), 0.0);
  double tr0, fro0, trsq0;
  sums(zero, tr0, fro0, trsq0);
  Coefficients unit;
  if (rf) {
    unit.A = Eigen::VectorXd::Constant(rf->freqs.count, 1.0 / rf->freqs.count);
    unit.B = Eigen::VectorXd::Zero(rf->freqs.count);
  }
  for (Eigen::Index i = 0; i < lags.rows(); ++i) {
    const Eigen::VectorXd row = lags.row(i).transpose();
    const std::span<const double> lag(row.data(), static_cast<std::size_t>(row.size()));
    check_lag(e, lag);
    double tr, fro, trsq;
    sums(lag, tr, fro, trsq);
    KernelRow& r = rows[static_cast<std::size_t>(i)];
    r.kernel = tr / tr0;
    r.content_mean = rho * tr;
    r.content_variance = fro + rho * rho * trsq;
    r.expected_kernel = r.frequency_variance = std::numeric_limits<double>::quiet_NaN();
    if (rf) {
      r.expected_kernel = phi(rf->freqs.spectrum, lag);
      // Variance of the realised kernel (1/D) sum_i cos(w_i . Dp) over draws (Prop 4 with A_i = 1/D, B_i = 0);
      // the quantile grid is deterministic.
      if (rf->freqs.seed && rf->freqs.sampling != Sampling::stratified)
        r.frequency_variance = score_variance(rf->freqs.spectrum, unit, lag, rf->freqs.sampling);
    }
  }
  return rows;
}

Eigen::VectorXd kernel(const Encoding& e, const Lags& lags, std::optional<double> seq_len) {
  const auto rows = kernel_rows(e, lags, 1, seq_len);
  Eigen::VectorXd out(lags.rows());
  for (Eigen::Index i = 0; i < out.size(); ++i) out[i] = rows[static_cast<std::size_t>(i)].kernel;
  return out;
}

Eigen::VectorXd content_variance(const Encoding& e, const Lags& lags, double rho, std::optional<double> seq_len) {
  const auto rows = kernel_rows(e, lags, rho, seq_len);
  Eigen::VectorXd out(lags.rows());
  for (Eigen::Index i = 0; i < out.size(); ++i) out[i] = rows[static_cast<std::size_t>(i)].content_variance;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Features: through the fixed-basis evaluator wherever a method has the same columns, so a reference
// method name and its family value give identical numbers.

namespace {

// BasisParams for a schedule: the geometric grid as the fixed-basis runs write it, or explicit frequencies.
BasisParams basis_params(const FrequencySchedule& f, std::optional<double> seq_len) {
  BasisParams p;
  const auto* g = std::get_if<Geometric>(&f.source);
  if (g && std::holds_alternative<scaling::None>(f.scaling)) {
    p.head_dim = static_cast<int>(g->dim * g->partial);
    p.base = g->base;
    p.num_freqs = g->count.value_or(p.head_dim / 2);
  } else {
    const auto t = frequencies(f, seq_len);
    p.num_freqs = static_cast<int>(t.theta.rows());
    p.omega = t.theta.col(0);
  }
  return p;
}

Features from_method(const Method& m, BasisParams p, const Lags& lags) {
  Eigen::VectorXd d = lags.col(0);
  return {BasisEvaluator(p, std::move(d)).features(m), feature_names(m, p)};
}

Features trig_columns(const Eigen::MatrixXd& w, const Lags& lags, const std::vector<double>& envelope_base,
                      double envelope_scale) {
  const Eigen::Index D = w.rows(), rows = lags.rows();
  Features f;
  f.values.resize(rows, 1 + 2 * D);
  f.values.col(0).setOnes();
  f.names.push_back("1");
  for (Eigen::Index i = 0; i < D; ++i) f.names.push_back(fmt::format("cos{}", i));
  for (Eigen::Index i = 0; i < D; ++i) f.names.push_back(fmt::format("sin{}", i));
  for (Eigen::Index r = 0; r < rows; ++r)
    for (Eigen::Index i = 0; i < D; ++i) {
      const double phase = w.row(i).dot(lags.row(r));
      const double env = envelope_base.empty() ? 1.0 : std::pow(envelope_base[i], lags(r, 0) / envelope_scale);
      f.values(r, 1 + i) = env * std::cos(phase);
      f.values(r, 1 + D + i) = env * std::sin(phase);
    }
  if (!envelope_base.empty())
    for (Eigen::Index i = 0; i < D; ++i) {
      f.names[1 + i] = fmt::format("zeta{0}^(d/S)*cos{0}", i);
      f.names[1 + D + i] = fmt::format("zeta{0}^(d/S)*sin{0}", i);
    }
  return f;
}

Features drop_columns(Features f, Eigen::Index first, Eigen::Index count) {
  const Eigen::Index n = f.values.cols();
  Eigen::MatrixXd v(f.values.rows(), n - count);
  v << f.values.leftCols(first), f.values.rightCols(n - first - count);
  f.values = std::move(v);
  f.names.erase(f.names.begin() + first, f.names.begin() + first + count);
  return f;
}

}  // namespace

Features features(const Encoding& e, const Lags& lags) {
  using namespace method;
  if (lags.cols() != lag_dims(e))
    throw InputError(fmt::format("encoding '{}' takes {}-D lags; got {}", spelling(e), lag_dims(e), lags.cols()));
  auto shear = [](int L, bool bounded, double gamma = 0) {
    BasisParams p;
    p.num_freqs = 1;
    p.train_context = L;
    p.bounded_tau = bounded;
    p.gamma = gamma;
    return p;
  };
  return std::visit(
      Overloaded{
          [&](const enc::Rope& r) { return from_method(Rope{}, basis_params(r.freqs, std::nullopt), lags); },
          [&](const enc::RopeMatched& r) {
            return from_method(RopeMatched{r.k}, basis_params(r.freqs, std::nullopt), lags);
          },
          [&](const enc::Xpos& x) {
            const auto t = xpos_table(x);
            std::vector<double> zeta;
            for (Eigen::Index i = 0; i < t.theta.rows(); ++i) zeta.push_back(xpos_zeta(x, i));
            return trig_columns(t.theta, lags, zeta, x.scale_base);
          },
          [&](const enc::RfRope& r) { return trig_columns(frequencies(FrequencySchedule{r.freqs, scaling::None{}}).theta, lags, {}, 1); },
          [&](const enc::Damped& d) {
            auto p = basis_params(d.freqs, std::nullopt);
            p.gamma = d.gamma;
            return from_method(DampedRope{d.gamma}, p, lags);
          },
          [&](const enc::Jordan& j) {
            auto p = basis_params(j.freqs, std::nullopt);
            p.train_context = j.L;
            p.eta = j.eta;
            return from_method(Jordan{j.m, j.gamma, j.bounded_tau}, p, lags);
          },
          [&](const enc::JordanScaled& j) {
            auto p = basis_params(j.freqs, std::nullopt);
            p.train_context = j.L;
            return from_method(JordanScaled{j.m, j.c}, p, lags);
          },
          [&](const enc::RealJordan& j) {
            return from_method(RealJordan{j.gamma, j.bounded_tau}, shear(j.L, j.bounded_tau, j.gamma), lags);
          },
          [&](const enc::Alibi& a) { return from_method(Alibi{}, shear(a.L, true), lags); },
          [&](const enc::Poly& q) {  // direct_sum_poly's columns without RoPE's (F = 1: cos0, sin0)
            return drop_columns(from_method(DirectSumPoly{q.k, q.bounded_tau}, shear(q.L, q.bounded_tau), lags), 1, 2);
          },
          [&](const enc::Nope&) { return from_method(Nope{}, shear(1, true), lags); },
          [&](const enc::DirectSum& d) {
            Features out;
            out.values = Eigen::MatrixXd::Ones(lags.rows(), 1);
            out.names = {"1"};
            for (const auto& part : d.parts) {
              Features f = features(part, lags);
              const Eigen::Index add = f.values.cols() - 1;
              out.values.conservativeResize(Eigen::NoChange, out.values.cols() + add);
              out.values.rightCols(add) = f.values.rightCols(add);
              out.names.insert(out.names.end(), f.names.begin() + 1, f.names.end());
            }
            return out;
          },
          [&](const enc::Nd& n) {
            if (std::holds_alternative<gen::User>(n.generators))
              throw InputError(fmt::format("encoding '{}': features need commuting (torus) generators", n.spelling));
            return trig_columns(torus_frequencies(n.generators).transpose(), lags, {}, 1);
          },
          [&](const enc::Sinusoidal& s) -> Features {
            throw InputError(fmt::format("encoding '{}' is absolute: it has no relative feature basis", spelling(Encoding{s})));
          },
      },
      e.value);
}

int n_features(const Encoding& e) {
  // Frequencies of a schedule without computing them: a geometric count (default r/2), a list, or D draws.
  auto count = [](const FrequencySchedule& f) -> std::int64_t {
    return std::visit(Overloaded{
                          [](const Geometric& g) -> std::int64_t { return g.count.value_or(rotary_dims(g) / 2); },
                          [](const ExplicitFrequencies& x) -> std::int64_t { return static_cast<std::int64_t>(x.values.size()); },
                          [](const SampledFrequencies& s) -> std::int64_t { return s.count; },
                      },
                      f.source);
  };
  std::function<std::int64_t(const Encoding&)> n = [&](const Encoding& x) -> std::int64_t {
    return std::visit(
        Overloaded{
            [&](const enc::Rope& r) { return 1 + 2 * count(r.freqs); },
            [&](const enc::RopeMatched& r) { return 1 + 2 * std::max<std::int64_t>(1, count(r.freqs) / r.k); },
            [&](const enc::Xpos& p) -> std::int64_t { return 1 + 2 * (p.dim / 2); },
            [&](const enc::RfRope& r) -> std::int64_t { return 1 + 2 * std::int64_t{r.freqs.count}; },
            [&](const enc::Damped& d) { return 1 + 2 * count(d.freqs); },
            [&](const enc::Jordan& j) { return 1 + 2 * j.m * count(j.freqs); },
            [&](const enc::JordanScaled& j) { return 1 + 2 * j.m * count(j.freqs); },
            [&](const enc::RealJordan&) -> std::int64_t { return 3; },
            [&](const enc::Alibi&) -> std::int64_t { return 2; },
            [&](const enc::Poly& q) -> std::int64_t { return q.k; },
            [&](const enc::Nope&) -> std::int64_t { return 1; },
            [&](const enc::DirectSum& d) {
              std::int64_t total = 1;
              for (const auto& part : d.parts) total += n(part) - 1;
              return total;
            },
            [&](const enc::Nd& nd) -> std::int64_t {
              if (std::holds_alternative<gen::User>(nd.generators))
                throw InputError(fmt::format("encoding '{}': features need commuting (torus) generators", nd.spelling));
              return 1 + 2 * torus_frequencies(nd.generators).cols();
            },
            [&](const enc::Sinusoidal& s) -> std::int64_t {
              throw InputError(
                  fmt::format("encoding '{}' is absolute: it has no relative feature basis", spelling(Encoding{s})));
            },
        },
        x.value);
  };
  const std::int64_t total = n(e);
  if (total > std::numeric_limits<int>::max())
    throw InputError(fmt::format("encoding '{}': {} feature columns (must be at most {})", spelling(e), total,
                                 std::numeric_limits<int>::max()));
  return static_cast<int>(total);
}

Exactness exactness(const Encoding& e, const std::vector<double>& window, std::optional<double> seq_len) {
  Exactness x;
  if (!is_relative(e)) {
    // Relativity defect of the position-position term p_m^T W p_n, W = W_q^T W_k with seeded N(0, 1/n)
    // entries: max over position pairs at one lag of the change of the score, relative to the largest score.
    const auto& s = std::get<enc::Sinusoidal>(e.value);
    const auto t = frequencies(e);
    Rng rng(s.seed, 0x53494E5553);  // the stream "SINUS" of W = W_q^T W_k
    const int n = s.dim;
    Eigen::MatrixXd W(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) W(i, j) = rng.normal() / std::sqrt(n);
    auto p = [&](double pos) {
      Eigen::VectorXd v(n);
      for (int j = 0; j < n / 2; ++j) {
        v[2 * j] = std::sin(pos * t.theta(j, 0));
        v[2 * j + 1] = std::cos(pos * t.theta(j, 0));
      }
      return v;
    };
    double worst = 0, scale = 0;
    for (double lag : window)
      for (double m : window) {
        const double a = p(m + lag).dot(W * p(m)), b = p(lag).dot(W * p(0));
        worst = std::max(worst, std::abs(a - b));
        scale = std::max({scale, std::abs(a), std::abs(b)});
      }
    x.relativity = scale > 0 ? worst / scale : 0;
    x.group_law = x.orthogonality = x.reversibility = std::numeric_limits<double>::quiet_NaN();
    return x;
  }
  const int k = lag_dims(e);
  // Dynamic schemes: each G at seq_len, else at the length a causal model has seen at that lag (T = |Dp| + 1). G is normalised
  // to tr G(0) = n, so a constant temperature (YaRN's attention factor a^2) is not counted as a defect.
  auto raw = [&](double lag) {
    std::vector<double> v(static_cast<std::size_t>(k), 0.0);
    v[0] = lag;
    return relative_operator(e, v, seq_len ? *seq_len : std::abs(lag) + 1);
  };
  const Eigen::MatrixXd G0 = raw(0);
  const double norm = G0.rows() / G0.trace();
  auto G = [&](double lag) -> Eigen::MatrixXd { return norm * raw(lag); };
  std::vector<Eigen::MatrixXd> Gw;  // G at each window lag, built once (the inner loop reuses them)
  for (double s : window) Gw.push_back(G(s));
  const Eigen::Index n = G0.rows();
  for (std::size_t a = 0; a < window.size(); ++a) {
    const Eigen::MatrixXd& Gs = Gw[a];
    // keep_max: a NaN defect (G overflowing at a window lag) shows, never vanishes behind std::max.
    keep_max(x.orthogonality, (Gs.transpose() * Gs - Eigen::MatrixXd::Identity(n, n)).norm());
    keep_max(x.reversibility, (G(-window[a]) * Gs - Eigen::MatrixXd::Identity(n, n)).norm());
    for (std::size_t b = 0; b < window.size(); ++b) {
      const Eigen::MatrixXd Gst = G(window[a] + window[b]);
      keep_max(x.group_law, (Gs * Gw[b] - Gst).norm() / std::max(1.0, Gst.norm()));
    }
  }
  return x;
}

const std::vector<EncodingFamilyInfo>& encoding_families() {
  static const std::vector<EncodingFamilyInfo> table = {
      {"rope:dim=<n>,base=<B>[,F=<F>,partial=<p>,scaling=<scheme>(...)]", "rope",
       "a^2 R(-theta_i Dp) per frequency, identity on the n - r unrotated dims", "1, C, S"},
      {"rope-freqs:freqs=[...] | file=<path>", "", "R(-theta_i Dp), theta_i as given", "1, C, S"},
      {"rope-matched:k=<k>[,<freq keys>]", "rope_matched_m<k>", "R(-theta_i Dp), the max(1, F/k) highest theta_i",
       "1, C_0..C_{M-1}, S_0..S_{M-1}"},
      {"xpos:dim=<n>,base=<B>,scale_base=<S>", "", "zeta_i^{Dp/S} R(-theta_i Dp), zeta_i = (2i + 0.4n)/(1.4n)",
       "1, zeta^{d/S} C, zeta^{d/S} S"},
      {"rf-rope:spectrum=<family>(...),blocks=<D>[,seed=<s>,sampling=iid|antithetic|stratified|quantile]", "",
       "R(-w_i . Dp), w_i drawn from the spectrum (quantile grid without seed)", "1, cos(w_i . d), sin(w_i . d)"},
      {"damped:gamma=<g>[,<freq keys>]", "damped_rope, damped-rope", "e^{-gamma Dp} R(-theta_i Dp)", "1, E C, E S"},
      {"jordan:m=<m>,gamma=<g>,tau=bounded|raw,L=<L>[,eta=<eta>][,<freq keys>]",
       "jordan_rope, jordan_no_gamma, jordan_raw_tau, jordan_m3, jordan_m4",
       "e^{-gamma Dp} exp(eta tau N_m) (x) R(-theta_i Dp), eta = 1/L unless given",
       "1, (that^p/p!) E C, (that^p/p!) E S, p < m"},
      {"jordan-scaled:m=<m>,c=<c>,L=<L>[,<freq keys>]", "jordan_scaled_m<k>[_cNNN], jordan_exact[_cNNN]",
       "e^{-c x} exp(x N_m) (x) R(-theta_i Dp), x = Dp/L", "1, (x^p/p!) e^{-cx} C, (x^p/p!) e^{-cx} S, p < m"},
      {"real-jordan:gamma=<g>,tau=bounded|raw,L=<L>", "real_jordan", "e^{-gamma Dp} [[1, tau/L], [0, 1]]",
       "1, E, that E"},
      {"alibi:slope=<m>,L=<L>", "alibi", "unipotent [[1, -m Dp], [0, 1]]", "1, x"},
      {"poly:k=<k>,tau=bounded|raw,L=<L>", "", "unipotent exp((tau/L) N_k)", "1, that^1..that^(k-1)"},
      {"nope", "nope", "1", "1"},
      {"direct-sum:[<enc>,<enc>,...]", "rope_alibi = [rope,alibi], direct_sum = [rope,alibi,real-jordan], "
       "direct_sum_poly_m<k> = [rope,poly:k]",
       "G_1 (+) G_2 (+) ...", "1, then each part's columns"},
      {"nd:family=axial|mixed,dim=<n>,axes=<N>,base=<B>[,seed=<s>] | nd:file=<generators.json>", "",
       "exp(-sum_a Dp_a B_a)", "1, cos(w_b . d), sin(w_b . d) (torus)"},
      {"sinusoidal:dim=<n>,base=<B>,seed=<s>", "", "absolute, added to the input: not relative",
       "(relativity defect only)"},
  };
  return table;
}

Encoding parse_encoding_for(const std::string& command, const std::string& text) {
  return for_encoding(command, text, [&] { return parse_encoding(text, Where(command)); });
}

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
  throw InputError(fmt::format("{}: encoding '{}': {}", command, text, what));
}

}  // namespace ropekit
