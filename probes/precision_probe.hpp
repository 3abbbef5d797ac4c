#pragma once
// Built-in probe `precision`: RoPE as frameworks compute it, phase and score error against the position.

#include "probes/probe.hpp"

namespace ropekit {

ProbeResult run_precision_probe(const ProbeContext& ctx);

}  // namespace ropekit
