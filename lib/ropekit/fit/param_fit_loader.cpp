// The param_fit.hpp functions in every ropekit binary: each forwards to libropekit_ceres.so (param_fit_module.hpp),
// loaded with dlopen on the first call from the real directory of the binary that contains this code (the ropekit
// executable, the test runner, the Python extension), or from the library search path.
#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "ropekit/core/cancel.hpp"
#include "ropekit/fit/param_fit_module.hpp"

namespace ropekit {

namespace {

constexpr const char* kModuleName = "libropekit_ceres.so";

const ParamFitModule& load_module();

// Whether `address` lies in a loaded segment of the main program (dl_iterate_phdr lists it first).
bool in_main_program(const void* address) {
  struct Query {
    std::uintptr_t address;
    bool found = false;
  } q{reinterpret_cast<std::uintptr_t>(address)};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && q->address >= start && q->address < start + ph.p_memsz) q->found = true;
        }
        return 1;  // the first entry is the main program: stop after it
      },
      &q);
  return q.found;
}

// The real directory of the binary holding this code: the executable through /proc/self/exe (dladdr names it as
// argv[0] spelled it: a bare name found through PATH, or a symlink), a shared object (the Python extension) by
// its own path with links resolved (issue 20 item 10).
std::string binary_directory() {
  std::error_code ec;
  std::filesystem::path file;
  Dl_info info{};
  const void* self = reinterpret_cast<const void*>(&load_module);
  if (in_main_program(self))
    file = std::filesystem::read_symlink("/proc/self/exe", ec);
  else if (dladdr(self, &info) != 0 && info.dli_fname != nullptr)
    file = std::filesystem::canonical(info.dli_fname, ec);
  if (ec || file.empty()) return ".";
  const std::string dir = file.parent_path().string();
  return dir.empty() ? "." : dir;
}

const ParamFitModule& load_module() {
  static const ParamFitModule* module = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string dir = binary_directory();
    const std::string beside = dir + "/" + kModuleName;
    void* handle = dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string error = handle != nullptr ? "" : std::string(dlerror());
#ifdef ROPEKIT_MODULE_FROM_BIN
    // An installed command: <prefix>/bin/ropekit and <prefix>/lib/ropekit/libropekit_ceres.so (cmake --install).
    if (handle == nullptr)
      handle = dlopen((dir + "/" + ROPEKIT_MODULE_FROM_BIN + "/" + kModuleName).c_str(), RTLD_NOW | RTLD_LOCAL);
#endif
    if (handle == nullptr) handle = dlopen(kModuleName, RTLD_NOW | RTLD_LOCAL);  // on the library search path
    if (handle == nullptr)
      throw std::runtime_error(fmt::format("cannot load the Ceres module {} (needed by fit-params and the tuning "
                                           "probe; it is built beside the ropekit executable): {}",
                                           kModuleName, error));
    using Entry = const ParamFitModule* (*)();
    const auto entry = reinterpret_cast<Entry>(dlsym(handle, "ropekit_param_fit_module"));
    const ParamFitModule* m = entry != nullptr ? entry() : nullptr;
    if (m == nullptr || m->abi != kParamFitModuleAbi || m->sizes != param_fit_struct_sizes())
      throw std::runtime_error(fmt::format("the Ceres module {} was built from other sources than this binary "
                                           "(rebuild both)", beside));
    module = m;
  });
  return *module;
}

// Calls f(module) with this thread's cancel flag handed to the module (param_fit_module.hpp with_cancel_flag).
// Exceptions (InputError, Cancelled) unwind through the module's frames back to the caller.
template <class F>
auto forward(F&& f) {
  const ParamFitModule& m = load_module();
  std::optional<decltype(f(m))> result;
  auto call = [&] { result.emplace(f(m)); };
  m.with_cancel_flag(current_cancel_flag(), [](void* c) { (*static_cast<decltype(call)*>(c))(); }, &call);
  return std::move(*result);
}

}  // namespace

Eigen::MatrixXd tunable_features(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& p) {
  return forward([&](const ParamFitModule& m) { return m.tunable_features_fn(t, lags, p); });
}

VarProEvaluation varpro_evaluate(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& y,
                                 double ridge, const Eigen::VectorXd& p, bool with_jacobian) {
  return forward([&](const ParamFitModule& m) { return m.varpro_evaluate_fn(t, lags, y, ridge, p, with_jacobian); });
}

TuneResult tune_encoding(const TunableEncoding& t, const Eigen::VectorXd& lags, const Eigen::VectorXd& y,
                         const TuneOptions& options) {
  return forward([&](const ParamFitModule& m) { return m.tune_encoding_fn(t, lags, y, options); });
}

SpectralFitResult fit_spectrum(std::string_view spelling, const KernelTable& data, std::string_view where,
                               int max_iterations, const std::function<void(const std::string&, double)>& announce) {
  return forward(
      [&](const ParamFitModule& m) { return m.fit_spectrum_fn(spelling, data, where, max_iterations, announce); });
}

}  // namespace ropekit
