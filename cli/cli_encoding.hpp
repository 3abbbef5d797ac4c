#pragma once
// The encoding commands (spec encodings.md sections 1, 2, 5) that other command groups share: `kernel
// --encoding` (registered with the RF-RoPE group's `kernel`) and `features --encoding` (the fixed-basis group's
// `features`). `frequencies` and `check` are registered by add_encoding_commands (cli.hpp).

#include <optional>
#include <string>
#include <vector>

#include "cli/cli.hpp"

namespace ropekit {

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
};
/// ropekit kernel --encoding E [E...]: encoding,lag,kernel,content_variance (+ rf-rope and plain-RoPE columns).
void run_encoding_kernel(const EncodingKernelArgs& a);

struct EncodingFeatureArgs {
  std::string encoding, lags, format, out;  ///< format "": csv, or npy for --out FILE.npy
};
/// ropekit features --encoding E: lag, then the encoding's feature columns.
void run_encoding_features(const EncodingFeatureArgs& a);

}  // namespace ropekit
