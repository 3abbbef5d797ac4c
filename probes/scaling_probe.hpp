#pragma once
#include "probes/probe.hpp"

namespace ropekit {

/// Writes scaling.md, scaling-kernels.csv, scaling-fit.csv and scaling-kernels-s{8,32}.svg into ctx.out_dir.
ProbeResult run_scaling_probe(const ProbeContext& ctx);

}  // namespace ropekit
