// A fit of a model's layer types (commands/fit_layers.hpp): a sliding layer trains and is scored on the lags its window
// shows only. The independent route: the same encoding fitted as a plain run on lags 0..W-1 (train_context W, eval
// lengths min(T, W)) gives the same numbers bit for bit, and a plain run on the lengths asked does not.
#include <doctest/doctest.h>

#include "ropekit/commands/fit_layers.hpp"
#include "ropekit/fit/fit_summary.hpp"
#include "support.hpp"

using namespace ropekit;
using ropekit::test::source_path;

namespace {

FitConfig run_of(const std::vector<std::string>& encodings, int L, std::vector<int> T) {
  FitOptions o;
  o.encodings = encodings;
  o.targets = {"phase", "mixed"};
  o.basis.train_context = L;
  o.eval_contexts = std::move(T);
  o.freq_index = 3;  // the command line's defaults
  o.second_freq_index = 5;
  return fit_config(o);
}

}  // namespace

TEST_CASE("fit of Gemma 3's layer types: the sliding layer sees lags 0..1023 only, the full layer every lag") {
  const auto layers = model_layers(std::vector<std::string>{source_path("data/models/gemma-3-4b.json")}, true,
                                   Where::options("ropekit fit"));
  REQUIRE(layers.size() == 2);
  REQUIRE(layers[0].span == 1024);  // sliding_window in the file
  const std::vector<std::string> encodings = {layers[0].encoding, layers[1].encoding};
  const FitConfig config = run_of(encodings, 2048, {512, 4096, 8192});
  const auto rows = run_fit_layers(config, layers, 2);
  // seed, target (2), basis (2), then train + 3 eval rows.
  REQUIRE(rows.size() == 2 * 2 * 4);
  // The sliding layer alone on the lags it sees, and the full layer alone as asked.
  FitConfig on_seen = run_of({layers[0].encoding}, 1024, {512, 1024});
  on_seen.target = config.target;  // the run's targets (mixed reads L = 2048), fitted on lags 0..1023
  const auto seen = run_fixed_basis(on_seen, 2);
  const auto full = run_fixed_basis(run_of({layers[1].encoding}, 2048, {512, 4096, 8192}), 2);
  const auto unclipped = run_fixed_basis(run_of({layers[0].encoding}, 2048, {512, 4096, 8192}), 2);
  REQUIRE(seen.size() == 2 * 3);
  REQUIRE(full.size() == 2 * 4);
  for (std::size_t t = 0; t < 2; ++t) {
    const FitRow* s = &rows[(t * 2 + 0) * 4];
    const FitRow* f = &rows[(t * 2 + 1) * 4];
    CAPTURE(t);
    CHECK(s[0].layer_type == "sliding_attention");
    CHECK(f[0].layer_type == "full_attention");
    // Lengths as asked; the sliding layer trained on 1024 lags.
    CHECK(s[0].context == 2048);
    CHECK(s[0].split == "train");
    CHECK(s[0].n_train == 1024);
    CHECK(f[0].n_train == 2048);
    CHECK(s[1].context == 512);
    CHECK(s[2].context == 4096);
    CHECK(s[3].context == 8192);
    // Train and eval numbers are those of the run on lags < 1024: eval 4096 and 8192 score lags 0..1023.
    const FitRow* w = &seen[t * 3];
    CHECK(s[0].mse == w[0].mse);
    CHECK(s[0].cond == w[0].cond);
    CHECK(s[1].mse == w[1].mse);
    CHECK(s[2].mse == w[2].mse);
    CHECK(s[3].mse == w[2].mse);
    CHECK(s[3].r2 == w[2].r2);
    CHECK(s[2].mse != unclipped[t * 4 + 2].mse);  // lags >= 1024 would have changed it
    for (std::size_t c = 0; c < 4; ++c) {
      CHECK(f[c].mse == full[t * 4 + c].mse);
      CHECK(f[c].context == full[t * 4 + c].context);
    }
  }
  // --summary: each layer type a basis of its own, named by it.
  for (const auto& r : summarize_fit(rows)) {
    CHECK(r.methods == 2);
    CHECK((r.best.rfind("sliding_attention: rope:", 0) == 0 || r.best.rfind("full_attention: rope:", 0) == 0));
  }
  const auto notes = fit_layer_notes(config, layers);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "sliding_attention: sliding 1024 hides |lag| >= 1024: trained on lags 0..1023 and scored on lags "
                    "0..min(T, 1024)-1 only (the lags it sees); rows keep the lengths asked (context), n_train counts "
                    "the lags trained on");
  // A window no length reaches changes nothing and says nothing.
  const FitConfig short_run = run_of(encodings, 256, {512});
  CHECK(fit_layer_notes(short_run, layers).empty());
  const auto plain = run_fixed_basis(short_run, 2);
  const auto as_layers = run_fit_layers(short_run, layers, 2);
  REQUIRE(plain.size() == as_layers.size());
  for (std::size_t i = 0; i < plain.size(); ++i) CHECK(plain[i].mse == as_layers[i].mse);
}
