#pragma once
// The request of `ropekit frequencies` and ropekit.frequencies: an encoding's rotary frequencies theta_i,
// wavelengths and attention factor, optionally as a framework computing in float32 gets them (spec encodings.md
// section 3), validated here once so that the command line and the Python module only bind options to a request
// and render its columns (issue 19). Messages name the command and its options.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ropekit/core/budget.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/frequencies.hpp"

namespace ropekit {

struct FrequenciesRequest {
  std::string command = "ropekit frequencies";  ///< names the messages
  std::string encoding;                         ///< a spelling as typed
  std::optional<double> seq_len;                ///< > 0: the sequence length of dynamic and longrope schemes
  bool float32 = false;                         ///< add the float32 frequencies
  std::string convention = "huggingface";       ///< huggingface or ggml
  std::string format = "csv";                   ///< how the rows are rendered (json cells cost more; budgets only)
};

/// A validated request.
struct FrequenciesPlan {
  Encoding encoding;
  Convention convention = Convention::huggingface;
  bool sum = false;  ///< a direct sum: rows carry their part
  int k = 1;         ///< lag dimension: theta has k components
};

/// @throws InputError for a spelling that does not parse, a convention other than huggingface or ggml, a seq_len
///         that is not > 0, or an encoding without rotary frequencies.
FrequenciesPlan plan_frequencies(const FrequenciesRequest& request);

/// The estimated cost of `rows` frequencies: the scheme's arithmetic and the printed cells.
Cost frequencies_cost(const FrequenciesRequest& request, const FrequenciesPlan& plan, double rows);
/// The number of rows (rotary frequencies of every part) the budget counts.
double frequencies_budget_rows(const FrequenciesPlan& plan);
/// The budget (core/budget.hpp) of the plan's frequencies.
/// @throws InputError naming --encoding and the largest number of frequencies that fits.
void check_frequencies_budget(const FrequenciesRequest& request, const FrequenciesPlan& plan);

/// One row per frequency of every rotary part, columns by name (a 1-D part of a k-D sum has zeros past its axis).
struct FrequencyRows {
  std::vector<std::int64_t> part, index;            ///< the part of a direct sum; i within the part
  std::vector<std::vector<double>> theta, theta32;  ///< [axis][row]; theta32 only with float32
  std::vector<double> wavelength;                   ///< 2 pi / ||theta||: the period along the frequency vector; inf for theta = 0
  std::vector<double> attention_factor;
};
/// @throws InputError with the encoding's own message as the command's.
FrequencyRows frequency_rows(const FrequenciesRequest& request, const FrequenciesPlan& plan);

}  // namespace ropekit
