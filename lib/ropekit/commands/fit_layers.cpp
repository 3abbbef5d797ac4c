#include "ropekit/commands/fit_layers.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "ropekit/core/error.hpp"

namespace ropekit {

namespace {

// The span of encodings[i]'s layer type that clips the run (W < the longest length), else none.
std::optional<std::int64_t> clipping_span(const FitConfig& c, const std::vector<ModelLayer>& layers, std::size_t i) {
  if (layers.empty() || !layers[i].span || *layers[i].span >= c.max_length()) return std::nullopt;
  return layers[i].span;
}

}  // namespace

std::vector<FitRow> run_fit_layers(const FitConfig& config, const std::vector<ModelLayer>& layers, int threads) {
  if (!layers.empty() && layers.size() != config.encodings.size())
    throw std::logic_error("run_fit_layers: one layer type per encoding");
  const std::size_t nm = config.methods.size(), nb = nm + config.encodings.size();
  const std::size_t per = 1 + config.eval_contexts.size();
  // The bases by span: methods and unclipped encodings run as one config; each span W as its own, on lags < W.
  std::vector<std::optional<std::int64_t>> spans = {std::nullopt};
  std::vector<std::size_t> group_of(nb, 0);
  for (std::size_t i = 0; i < config.encodings.size(); ++i) {
    const auto w = clipping_span(config, layers, i);
    auto it = std::find(spans.begin(), spans.end(), w);
    if (it == spans.end()) it = spans.insert(spans.end(), w);
    group_of[nm + i] = static_cast<std::size_t>(it - spans.begin());
  }
  struct Group {
    FitConfig config;
    std::vector<std::size_t> bases;   // indices into the whole run's bases
    std::vector<std::size_t> eval_of; // the run's eval_contexts[c] -> this config's
    std::vector<FitRow> rows;
  };
  std::vector<Group> groups(spans.size());
  for (std::size_t g = 0; g < spans.size(); ++g) {
    Group& G = groups[g];
    G.config = config;
    G.config.methods.clear();
    G.config.encodings.clear();
    for (std::size_t b = 0; b < nb; ++b) {
      if (group_of[b] != g) continue;
      G.bases.push_back(b);
      if (b < nm) G.config.methods.push_back(config.methods[b]);
      else G.config.encodings.push_back(config.encodings[b - nm]);
    }
    if (spans[g]) {
      const int w = static_cast<int>(*spans[g]);
      G.config.basis.train_context = std::min(G.config.basis.train_context, w);
      G.config.train_points = std::min(G.config.train_points, w);
      G.config.eval_contexts.clear();
    }
    for (int t : config.eval_contexts) {
      if (!spans[g]) {
        G.eval_of.push_back(G.eval_of.size());
        continue;
      }
      const int clipped = std::min<int>(t, static_cast<int>(*spans[g]));
      auto it = std::find(G.config.eval_contexts.begin(), G.config.eval_contexts.end(), clipped);
      if (it == G.config.eval_contexts.end()) it = G.config.eval_contexts.insert(G.config.eval_contexts.end(), clipped);
      G.eval_of.push_back(static_cast<std::size_t>(it - G.config.eval_contexts.begin()));
    }
    if (!G.bases.empty()) G.rows = run_fixed_basis(G.config, threads);
  }
  // Rows in the whole run's order: seed, target, basis, then the train row and one eval row per length.
  const std::size_t nt = config.targets.size();
  std::vector<FitRow> rows;
  rows.reserve(config.seeds.size() * nt * nb * per);
  for (std::size_t k = 0; k < config.seeds.size(); ++k)
    for (std::size_t j = 0; j < nt; ++j)
      for (std::size_t b = 0; b < nb; ++b) {
        const Group& G = groups[group_of[b]];
        const std::size_t gb = static_cast<std::size_t>(std::find(G.bases.begin(), G.bases.end(), b) - G.bases.begin());
        const std::size_t gper = 1 + G.config.eval_contexts.size();
        const std::size_t first = ((k * nt + j) * G.bases.size() + gb) * gper;
        FitRow train = G.rows.at(first);
        train.context = config.basis.train_context;
        if (b >= nm && !layers.empty()) train.layer_type = layers[b - nm].label;
        rows.push_back(train);
        for (std::size_t c = 0; c < config.eval_contexts.size(); ++c) {
          FitRow r = G.rows.at(first + 1 + G.eval_of[c]);
          r.context = config.eval_contexts[c];
          r.layer_type = train.layer_type;
          rows.push_back(r);
        }
      }
  return rows;
}

std::vector<std::string> fit_layer_notes(const FitConfig& config, const std::vector<ModelLayer>& layers) {
  std::vector<std::string> notes;
  for (std::size_t i = 0; i < layers.size() && i < config.encodings.size(); ++i) {
    const auto w = clipping_span(config, layers, i);
    if (!w) continue;
    const std::string note =
        fmt::format("{}: {} hides |lag| >= {}: trained on lags 0..{} and scored on lags 0..min(T, {})-1 only (the "
                    "lags it sees); rows keep the lengths asked (context), n_train counts the lags trained on",
                    layers[i].label, layers[i].window, *w, std::min<std::int64_t>(config.basis.train_context, *w) - 1,
                    *w);
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
  }
  // A query temperature scales the score by s(p) of the query position p, which a fit of the lag's features does
  // not know: the basis is the encoding's own, said here rather than applied at an assumed position.
  for (std::size_t i = 0; i < layers.size() && i < config.encodings.size(); ++i) {
    const auto& t = layers[i].temperature;
    if (!t) continue;
    const std::string note = fmt::format(
        "{}: the query temperature s(p) = {} ln(1 + floor((p + 1)/{})) + 1 is not applied: fitted on the encoding's "
        "own features (s(p) depends on the query position p, not on the lag alone; `ropekit kernel --model` applies "
        "it)",
        layers[i].label, format_number(t->attn_scale), format_number(t->floor_scale));
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
  }
  return notes;
}

}  // namespace ropekit
