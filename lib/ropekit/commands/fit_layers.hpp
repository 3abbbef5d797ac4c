#pragma once
// A fixed-basis run (fit_run.hpp) of model layer types (`ropekit fit --model`, `ropekit.fit(model=...)`): a layer
// type whose window hides lags >= W is trained and scored on the lags it sees only, and every row carries its
// layer type's label (FitRow::layer_type). A query temperature is not applied (a note says so): s(p) depends on the
// query position, which a fit of the lag's features does not have.

#include <string>
#include <vector>

#include "ropekit/fit/fit_config.hpp"
#include "ropekit/fit/fit_run.hpp"
#include "ropekit/models/model_layers.hpp"

namespace ropekit {

/// run_fixed_basis with `layers` one per config.encodings entry (ModelLayer{} for an encoding given as such; empty:
/// none). A layer type with a window span W trains on lags 0..min(L, W)-1 (train_points at most W) and its eval row
/// of length T scores lags 0..min(T, W)-1; rows keep the lengths asked (context L, T) and n_train counts the lags
/// trained on. Rows in run_fixed_basis' order. @throws InputError as run_fixed_basis.
std::vector<FitRow> run_fit_layers(const FitConfig& config, const std::vector<ModelLayer>& layers, int threads = 0);

/// One note per layer type whose window clips the run's lengths ("<label>: sliding W: trained on lags 0..W-1 ..."),
/// then one per layer type with a query temperature (Llama 4's NoPE layers: s(p) is not applied, the fit is of the
/// encoding's own features), without the "<command>: note: " head.
std::vector<std::string> fit_layer_notes(const FitConfig& config, const std::vector<ModelLayer>& layers);

}  // namespace ropekit
