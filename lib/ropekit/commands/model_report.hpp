#pragma once
// The models report's numbers (`ropekit probe models` on the built-in configs, `ropekit report FILE...` on the
// user's): per layer type of a model,
//   1. the kernel Phi(Dp) over the lags the layer can see (its window) up to the model's context, with its minimum;
//   2. wavelength coverage: how many rotating pairs complete a turn within the original and the extended context;
//   3. Men et al.'s base bound (base_bound.hpp): the smallest base whose kernel stays >= 0 over those lags;
//   4. the framework notes of the reader, and where llama.cpp's YaRN (truncated correction dims) differs;
//   5. optionally, precision (precision/): the first positions whose phase errors pass given tolerances in a
//      pipeline and dtype.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ropekit/models/model.hpp"
#include "ropekit/precision/first_position.hpp"
#include "ropekit/precision/pipeline.hpp"

namespace ropekit {

/// The lags of the kernels-at-selected-lags table (a lag past the layer's visible lags has no value).
const std::vector<double>& model_report_table_lags();

/// The first positions past a tolerance of one layer type through a pipeline (precision/first_position.hpp, over
/// positions 0 .. the largest whose angles are finite, at most 2^31 - 1).
struct PrecisionFirsts {
  double tolerance = 0;
  FirstPosition phase;         ///< phase_error_max: the angle's, which the table dtype does not change
  FirstPosition table_phase;   ///< table_phase_error_max: the phase the cos / sin tables carry in their dtype
};

/// One layer type's numbers. NoPE and ALiBi layers (not rotary) have no schedule: only context, visible lags and the
/// notes (a NoPE layer's kernel is 1).
struct LayerReport {
  LayerType layer;
  bool rotary = false;
  std::string family;              ///< the encoding's family ("rope", "nope", "alibi", ...)
  double context = 0;              ///< max_position_embeddings, or YaRN's orig x factor where it stretches past it
  std::int64_t visible_lags = 0;   ///< the largest lag the layer sees: min(context, window span) - 1
  // Rotary layers (the rotated part's schedule: a decoupled head's rope part):
  std::optional<double> base;      ///< a geometric schedule's (none: explicit frequencies)
  std::string scheme;              ///< "yarn(4)", "llama3(8)", "default" (the scheme and its factor)
  std::int64_t pairs = 0, turns_within_orig = 0, turns_within_context = 0;
  double min_kernel = 1;
  std::int64_t min_kernel_lag = 0;
  std::optional<std::int64_t> first_negative_lag;
  std::optional<double> base_bound;  ///< Men et al.'s bound on a 16-per-decade grid from 10 (none: none up to 1e12,
                                     ///< or no base)
  std::vector<std::optional<double>> table_kernel;  ///< at model_report_table_lags() (none past visible_lags)
  std::vector<double> plot_lags, plot_kernel;       ///< 161 log-spaced lags 1 .. visible_lags (duplicates once)
  std::vector<std::string> notes;  ///< framework notes, in the report's order (llama.cpp's YaRN reading first)
  // Precision, when asked (ModelReportOptions::pipeline):
  std::vector<PrecisionFirsts> precision;
  std::string precision_note;  ///< why there is none (an encoding the pipeline does not model), or ""
};

struct ModelReport {
  std::vector<LayerReport> layers;
  std::vector<std::string> notes;  ///< the file's notes (Model::notes)
};

struct ModelReportOptions {
  std::optional<Pipeline> pipeline;  ///< none: no precision
  std::vector<double> tolerances = {1e-3, 1e-2};
  std::string command = "ropekit report";  ///< names refusals
};

/// The report of a model read from a file (read_model or read_hf_config). Cancellable (check_cancelled).
/// @throws InputError for a layer whose kernel is not defined.
ModelReport model_report(const Model& m, const ModelReportOptions& o = {});

/// One file of `ropekit report`: the path read (a folder's config.json), its model, the dtype and pipeline its
/// precision is computed in and the report.
struct FileReport {
  std::string given, path;  ///< as typed; the file read
  Model model;
  Pipeline pipeline;
  std::string dtype_source;  ///< "torch_dtype = bfloat16", "dtype = float16", "GGUF: ggml's f32 tables", ...
  std::vector<std::string> dtype_notes;  ///< a default assumed (bf16 when the config names no dtype), said here
  std::vector<double> tolerances;        ///< the precision searches' (ReportRequest::tolerances)
  ModelReport report;
};

/// The request of `ropekit report` and ropekit.report: model files (config.json, GGUF, or a folder holding a
/// config.json), read and checked before anything is computed.
struct ReportRequest {
  std::string command = "ropekit report";
  std::string files_name = "FILE";  ///< the files' parameter in messages ("files" in Python)
  std::vector<std::string> files;
  std::vector<double> tolerances = {1e-3, 1e-2};  ///< of the precision searches: at least one, each finite and > 0
  std::string tolerances_name = "--tolerance";  ///< in messages ("tolerances" in Python)
  /// Called once the files are read, before the computation, with what runs and its estimated seconds (the command
  /// line says it on stderr when long: reports/progress.hpp's announce).
  std::function<void(const std::string& what, double seconds)> announce;
};
/// @throws InputError "<command>: FILE = '<path>' (must be ...)" for zero files, a missing path or a folder without
/// config.json; "<command>: <path>: ..." for a malformed model file (the reader's message).
std::vector<FileReport> report_files(const ReportRequest& r);

/// The precision pipeline of a model file: GGUF, ggml's (fp32 tables); a config.json, transformers' in the dtype its
/// `torch_dtype` (transformers 4) or `dtype` (transformers 5) key names, top level or in text_config; bf16 when it
/// names none or one ropekit does not model (said in `notes`). `source` is "<key> = <value>".
Pipeline model_file_pipeline(const std::string& path, const Model& m, std::string& source, std::vector<std::string>& notes);

}  // namespace ropekit
