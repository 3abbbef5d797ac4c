#pragma once
// `ropekit frameworks FILE[:LAYER_TYPE]` and ropekit.frameworks as one library request: per layer type of a
// config.json, one row per framework reading (frameworks/reading.hpp), with the logit scale and the differences
// against transformers 5 (frequencies; the kernel over the lags the layer sees).

#include <string>
#include <vector>

#include "ropekit/core/error.hpp"
#include "ropekit/frameworks/reading.hpp"

namespace ropekit {

struct FrameworkRow {
  std::string layer_type;
  FrameworkReading reading;
  int rotary_dims = 0;
  double logit_scale = 1;        ///< cos_sin_factor^2 x softmax_scale: the logits over 1/sqrt(head_dim)'s
  double max_rel_freq_diff = 0;  ///< max_i |theta_i - theta_i(transformers 5)| / max of the two (1: a pair lost)
  double kernel_max_diff = 0;    ///< max over the visible lags of |K(lag) - K_transformers5(lag)| (normalised kernels)
  std::string notes;
};

/// The columns of `ropekit frameworks`: layer_type,framework,version,encoding,pairing,rotary_dims,freq_denominator,
/// cos_sin_factor,softmax_scale,logit_scale,max_rel_freq_diff,kernel_max_diff,notes.
const std::vector<std::string>& framework_columns();

/// The rows for the model file `path`, every layer type or the one named (`layer_type`, "" for all). A GGUF file is
/// refused: the frameworks read a config.json (llama.cpp's row is the GGUF its converter writes from it).
/// @throws InputError naming `where`'s option for a file that does not read or an unknown layer type.
std::vector<FrameworkRow> framework_rows(const std::string& path, const std::string& layer_type, const Where& where);

}  // namespace ropekit
