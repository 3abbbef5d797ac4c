#pragma once
// The request of `ropekit check` and ropekit.check: encodings' exactness over a window of lags (group law,
// orthogonality, reversibility; sinusoidal: relativity), their structural verdicts and RoFormer's long-term decay
// bound (spec encodings.md section 5), validated here once so that the command line and the Python module only bind
// options to a request and render its rows (issue 33). A model's layer type (models/model_layers.hpp) is checked on
// the window lags it sees (|lag| < span, said in a note), and a query temperature makes it not relative. Messages
// name the command and its options.

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ropekit/core/budget.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/models/model_layers.hpp"

namespace ropekit {

struct CheckRequest {
  std::string command = "ropekit check";  ///< names the messages
  std::vector<std::string> encodings;     ///< spellings as typed, at least one
  /// The window as typed ("": the default, default_check_window per encoding) or, when `window` holds values, their
  /// spelling in messages.
  std::string window_text;
  std::optional<std::vector<double>> window;  ///< lags given as numbers (Python), instead of window_text
  std::optional<double> seq_len;              ///< > 0: every G at this sequence length (default |lag| + 1)
  /// Empty, or one per encoding: the model layer type it stands for (ModelLayer{} for an encoding given as such).
  /// A layer type's window lags are those it sees (|lag| < span); a query temperature makes it not relative.
  std::vector<ModelLayer> layers;
};

/// A validated request: the encodings parsed and each one's window lags (those its layer type sees).
struct CheckPlan {
  std::vector<Encoding> encodings;
  std::vector<std::vector<double>> windows;  ///< one per encoding
  std::vector<std::string> notes;  ///< without the "<command>: note: " head: windows that hid lags, temperatures
};

/// The original context L0 of every scheme in the encoding (dynamic, yarn, longrope, llama3), parts in order.
std::vector<double> scheme_original_contexts(const Encoding& e);
/// 0, 1, 2, 5, 10, 50, 100, 1000 and 2 L0 of each scheme with an original context, sorted, each once.
std::vector<double> default_check_window(const Encoding& e);

/// @throws InputError for a spelling that does not parse, a seq_len that is not > 0, window lags that do not parse
///         (naming --window), or a layer type whose window hides every window lag.
CheckPlan plan_check(const CheckRequest& request);

/// The budget (core/budget.hpp) of every encoding's checks over its window; returns the estimated seconds.
/// @throws InputError naming --window and the most lags that fit, else --encoding and the largest n that fits.
double check_check_budget(const CheckRequest& request, const CheckPlan& plan);

/// One row of `ropekit check`: a verdict (bool) or a number; `lag` for the long-term decay bound only.
struct CheckRow {
  std::string layer_type;  ///< the layer type's label (ModelLayer::label), "" for an encoding given as such
  std::string encoding;    ///< the canonical spelling
  std::string quantity;    ///< is_relative, is_exact, is_orthogonal, *_defect, long_term_decay_bound
  std::optional<double> lag;
  std::variant<bool, double> value;
};

/// LongRoPE's switch (spec models.md: transformers recomputes inv_freq once a sequence passes orig, its KV cache keeps
/// the keys rotated under the short factors): the largest |score(p, lag) - K_long(lag)| of isotropic content, the
/// query at p in [orig, orig + lag) under the long factors, the key at p - lag < orig under the short ones, over the
/// window's lags (at most 64 query positions each). None for an encoding without LongRoPE.
struct SwitchDefect {
  double lag = 0, defect = 0;
};
std::optional<SwitchDefect> longrope_switch_defect(const Encoding& e, const std::vector<double>& window);

/// Every encoding's rows in order: is_relative (false under a query temperature), is_exact, is_orthogonal, then the
/// group law, orthogonality and reversibility defects (an absolute encoding: the relativity defect), LongRoPE's
/// switch defect (longrope_switch_defect, at its worst lag), then the long-term decay bound at each window lag (encodings with rotary frequencies).
/// @throws InputError naming --window when a defect is not finite, or the encoding's own message as the command's.
std::vector<CheckRow> check_rows(const CheckRequest& request, const CheckPlan& plan);

}  // namespace ropekit
