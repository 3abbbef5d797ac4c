#pragma once
// The encoding commands (spec encodings.md sections 1, 2, 5) that other command groups share: `kernel
// --encoding` (registered with the RF-RoPE group's `kernel`) and `features --encoding` (the fixed-basis group's
// `features`). `frequencies` and `check` are registered by add_encoding_commands (cli.hpp).

#include <optional>
#include <string>
#include <vector>

#include "cli/cli.hpp"

namespace ropekit {

/// The --plot-* options as typed (bound to reports/kernel_plot.hpp's KernelPlotSpec by run_encoding_kernel).
struct KernelPlotArgs {
  std::vector<std::string> columns;  ///< empty: kernel, content_variance
  std::optional<std::string> title;
  std::string size, x_scale, xrange;  ///< "" : defaults
  std::vector<std::string> yrange;    ///< [COLUMN=]LO:HI each
  std::vector<std::string> log_y;
  std::vector<std::string> labels;  ///< one per curve
  std::string line;                 ///< "": mean
  bool any() const {
    return !columns.empty() || title || !size.empty() || !x_scale.empty() || !xrange.empty() || !yrange.empty() ||
           !log_y.empty() || !labels.empty() || !line.empty();
  }
};

struct EncodingKernelArgs {
  std::vector<std::string> encodings;  ///< spellings as typed (several: side by side)
  std::string lags;                    ///< "" : 0,1,10,100,1000 for 1-D encodings; k-D encodings need it
  std::optional<double> rho, seq_len;
  std::optional<double> position;  ///< the query position of a layer type with a query temperature (default |lag|)
  std::string format, out, plot;  ///< format "": csv, or npy for --out FILE.npy
  int block_rows = 1 << 16;  ///< 1-D lags without --plot are streamed in blocks of this many (memory: one block)
  /// Empty, or one per encoding: the model layer type it stands for (label "" for an --encoding). Given any, rows
  /// start with a layer_type column, and a lag the layer's window hides (|lag| >= span) is masked: empty cells.
  std::vector<ModelLayer> layers;
  KernelPlotArgs plot_options;
  std::vector<std::string> columns;  ///< --columns: these only, in this order (empty: every column)
};
/// ropekit kernel --encoding E [E...]: encoding,lag,kernel,content_variance (+ rf-rope and plain-RoPE columns).
void run_encoding_kernel(const EncodingKernelArgs& a);

struct EncodingFeatureArgs {
  std::string encoding, lags, format, out;  ///< format "": csv, or npy for --out FILE.npy
  /// Given --model: the layer type's label (ModelLayer::label), the rows' first column `layer_type`.
  std::optional<std::string> layer_type;
};
/// ropekit features --encoding E: lag, then the encoding's feature columns (--model: led by layer_type).
void run_encoding_features(const EncodingFeatureArgs& a);

}  // namespace ropekit
