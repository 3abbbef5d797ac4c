#pragma once
// Built-in probe `models`: the positional encodings of public checkpoints, layer type by layer type.

#include "probes/probe.hpp"

namespace ropekit {

ProbeResult run_models_probe(const ProbeContext& ctx);

}  // namespace ropekit
