// Fuzz harness: generator JSON (parse_generator_json, what `ropekit lie check` reads), then the writer's
// round trip (to_generator_json parses back to the same numbers) and, for small sets, the induced kernel.

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "fuzz_support.hpp"
#include "ropekit/lie/generator_io.hpp"
#include "ropekit/lie/lie.hpp"

using namespace ropekit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz::run([&] {
    const GeneratorSet set = parse_generator_json(fuzz::as_text(data, size), "fuzz.json");
    fuzz::require(set.dim >= 1 && set.dim <= kMaxLieDim && set.axes() >= 1, "parsed an invalid set");
    const std::string text = to_generator_json(set);
    const GeneratorSet back = fuzz::must("parse_generator_json(to_generator_json(set))",
                                         [&] { return parse_generator_json(text, "round trip"); });
    // Shortest round-trip numbers: the same matrices to the bit.
    fuzz::require(back.dim == set.dim && back.axes() == set.axes() && back.mixing.has_value() == set.mixing.has_value() &&
                      back.description == set.description,
                  "round trip changed the set's shape or description");
    for (int i = 0; i < set.axes(); ++i)
      fuzz::require(back.base[static_cast<std::size_t>(i)] == set.base[static_cast<std::size_t>(i)],
                    fmt::format("round trip changed generators[{}]", i));
    if (set.mixing) fuzz::require(*back.mixing == *set.mixing, "round trip changed Q");

    // The induced kernel at offset 0 and one small offset (matrix exponential or closed form).
    if (set.dim > 8 || set.axes() > 4) return;  // cost grows as n^3 per exponential; small sets cover the paths
    Eigen::MatrixXd offsets = Eigen::MatrixXd::Zero(2, set.axes());
    offsets.row(1).setConstant(0.5);
    const Eigen::VectorXd phi = induced_kernel(set, offsets);
    fuzz::require(phi.size() == 2, "induced_kernel size");
    // R(0) = exp(0) = I, so Phi(0) = tr(I)/n = 1 up to the rounding of n ones (the closed form is used only
    // for an orthogonal Q); Phi(0.5) = tr R / n must be a number.
    fuzz::require(std::fabs(phi[0] - 1) <= 1e-12 && !std::isnan(phi[1]),
                  fmt::format("induced kernel Phi(0) = {}, Phi(0.5) = {}", phi[0], phi[1]));
  });
}
