#pragma once
// The Ceres module's entry table. fit/param_fit.cpp (the only file that links Ceres) is built as a module,
// libropekit_ceres.so, loaded on first use by fit/param_fit_loader.cpp: every command that does not fit
// parameters starts without loading Ceres and its 15 shared libraries (about 2 ms of process start-up).

#include <atomic>

#include "ropekit/fit/param_fit.hpp"

namespace ropekit {

/// Bumped when a signature or a result struct changes; the loader refuses a module built from other sources.
inline constexpr int kParamFitModuleAbi = 5;

struct ParamFitModule {
  int abi = kParamFitModuleAbi;
  std::size_t sizes = 0;  ///< param_fit_struct_sizes() of the module's build (same check, from the other side)
  decltype(&tunable_features) tunable_features_fn = nullptr;
  decltype(&varpro_evaluate) varpro_evaluate_fn = nullptr;
  decltype(&tune_encoding) tune_encoding_fn = nullptr;
  decltype(&fit_spectrum) fit_spectrum_fn = nullptr;
  /// Runs `call` with the module's copy of this thread's cancel flag (cancel.hpp) set to `flag`: the module links
  /// its own ropekit_lib, so the caller's CancelScope must be handed over for Ctrl-C to reach tune_encoding's loops.
  void (*with_cancel_flag)(const std::atomic<bool>* flag, void (*call)(void*), void* context) = nullptr;
};

/// A fingerprint of the layouts that cross the module boundary.
constexpr std::size_t param_fit_struct_sizes() {
  return sizeof(Encoding) + 3 * sizeof(TunableEncoding) + 5 * sizeof(TuneResult) + 7 * sizeof(TuneOptions) +
         11 * sizeof(SpectralFitResult) + 13 * sizeof(KernelTable) + 17 * sizeof(VarProEvaluation) +
         23 * sizeof(Spectrum);
}

}  // namespace ropekit

/// The module's one exported symbol.
extern "C" const ropekit::ParamFitModule* ropekit_param_fit_module();
