// Fuzz harness: target names and spellings (parse_target), then y(d) at lags 0..3 under small run parameters
// (with the frequency indices set, so every target can be evaluated).

#include <string>

#include <fmt/format.h>

#include "fuzz_support.hpp"
#include "targets/target.hpp"

using namespace ropekit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz::run([&] {
    const std::string_view text = fuzz::as_text(data, size);
    const Target t = parse_target(text);
    TargetParams p;
    p.head_dim = 8;
    p.train_context = 4;
    p.freq_index = 1;
    p.second_freq_index = 2;
    check_target_params(t, p, text);
    Eigen::VectorXd lags(4);
    lags << 0, 1, 2, 3;
    const Eigen::VectorXd y = target_values(t, p, lags);
    fuzz::require(y.size() == 4 && y.allFinite(), fmt::format("target '{}': y = {}", text, fmt::join(y, ", ")));
  });
}
