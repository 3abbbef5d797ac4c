#pragma once
// The request of `ropekit kernel --encoding E...` and ropekit.kernel: encodings' kernels and content variances at
// lags (encoding.hpp kernel_rows), validated here once so that the command line and the Python module only bind
// options to a request and render its rows (issue 19). Messages name the command and its options.

#include <optional>
#include <string>
#include <vector>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/lags.hpp"
#include "ropekit/encoding.hpp"
#include "ropekit/encodings/kernel_cost.hpp"
#include "ropekit/encodings/rope_kernel.hpp"
#include "ropekit/models/model_layers.hpp"

namespace ropekit {

struct KernelRequest {
  std::string command = "ropekit kernel";  ///< names the messages
  std::vector<std::string> encodings;      ///< spellings as typed, at least one (several: side by side)
  std::string lags_text;                   ///< "": the default 0,1,10,100,1000 (1-D encodings only)
  bool lags_given = false;                 ///< lags given otherwise (as numbers, read in plan.k dimensions)
  double rho = 1;                          ///< content correlation, in [-1, 1]
  std::optional<double> seq_len;           ///< > 0: the sequence length of dynamic and longrope schemes
  bool matrix = false;  ///< the caller holds float64 columns, no text rows (Python; budgets only)
  /// Empty, or one per encoding: the model layer type it stands for (ModelLayer{} for an encoding given as such).
  /// A lag the layer's window hides (|lag| >= span) is masked (kernel_masked); a query temperature scales the kernel
  /// by s(p) and the content variance by s(p)^2 (kernel_query_scale). Windows need 1-D lags (they count tokens).
  std::vector<ModelLayer> layers;
  std::optional<double> position;  ///< >= 0: the query position p of a query temperature (default |lag|)
};

/// A validated request: the encodings parsed (relative, of one lag dimension k) and what their columns hold.
struct KernelPlan {
  std::vector<Encoding> encodings;
  int k = 1;               ///< lag dimension
  bool any_rf = false;     ///< an rf-rope among them: expected_kernel and frequency_variance columns
  bool any_plain = false;  ///< a plain RoPE among them: sine_residual, continuum and continuum_sine cells
  std::string lag_text;    ///< the lags' spelling (request.lags_text or the default)
};

/// @throws InputError for a spelling that does not parse, an absolute encoding, rho outside [-1, 1], a seq_len
///         that is not > 0, encodings of different lag dimensions, or no lags for k-D encodings.
KernelPlan plan_kernel(const KernelRequest& request);

/// Whether encodings[j]'s layer type cannot see `lag` (the first lag component): its window hides |lag| >= span.
bool kernel_masked(const KernelRequest& request, std::size_t j, double lag);
/// s(p) of encodings[j]'s layer type at p = request.position or |lag|; 1 without a query temperature.
double kernel_query_scale(const KernelRequest& request, std::size_t j, double lag);
/// The notes of the layer types (without the "<command>: note: " head): each window that masks lags in [lo, hi]
/// (none without lags), then each query temperature.
std::vector<std::string> kernel_layer_notes(const KernelRequest& request, std::optional<std::pair<double, double>> lags);

/// The columns of a kernel table in their order (a model's rows start with a layer_type column besides these).
const std::vector<std::string>& kernel_column_names();
/// The columns the plan's rows fill, in kernel_column_names()'s order (rf-rope's two and plain RoPE's three only
/// where such an encoding is among them): every column, where no --columns / columns= is given.
std::vector<std::string> kernel_plan_columns(const KernelPlan& plan);
/// `columns` asked of the plan's rows (--columns, Python's columns=), duplicates once, in the order asked: with one
/// encoding each must be a column of its kernel, with several a column of kernel_column_names() (those no encoding
/// fills are left out). @throws InputError "<command>: --columns = '<name>' (must be columns of ...)".
std::vector<std::string> checked_kernel_columns(const KernelRequest& request, const KernelPlan& plan,
                                                const std::vector<std::string>& columns);

/// plan.lag_text parsed (k-D lags, or 1-D lags held whole). @throws InputError naming --lags.
Lags kernel_lags(const KernelRequest& request, const KernelPlan& plan);

/// Checks the lags of a plan with an rf-rope (within kMaxRfLag). @throws InputError naming --lags.
void check_kernel_lags(const KernelRequest& request, const KernelPlan& plan, const Lags& lags);

/// The estimated cost of `rows` lags of every encoding of the plan, at most `held` rows held at once (the command
/// line streams 1-D lags one block at a time; Python holds them all).
/// `matrix`: the held rows are float64 columns (8 bytes a cell and the lag), not the command line's rows of text.
Cost kernel_cost(const KernelPlan& plan, double rows, double held, bool matrix = false);
/// The budget (core/budget.hpp) of `count` lags, at most `held` held at once.
/// @throws InputError naming --lags and the largest count that fits.
void check_kernel_budget(const KernelRequest& request, const KernelPlan& plan, std::int64_t count, double held);

/// kernel_rows of plan.encodings[j] at `lags`, each finite. @throws InputError naming the lag where the kernel or
///         the content variance overflows, or the encoding's own message as the command's.
std::vector<KernelRow> kernel_block(const KernelRequest& request, const KernelPlan& plan, std::size_t j,
                                    const Lags& lags);

}  // namespace ropekit
