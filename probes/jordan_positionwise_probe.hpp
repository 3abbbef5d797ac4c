#pragma once
// The jordan-positionwise probe (spec nd-rope.md section 2; Jordan-RoPE paper Prop. 1 and appendix A):
// dynamic range and float32 score error of the position-wise factorization, plain and centred, for the
// raw, scaled-exact and stabilized blocks, and the stabilized block's relativity defect.

#include "probes/probe.hpp"

namespace ropekit {

/// The built-in probe `jordan-positionwise`: writes jordan-positionwise.md and .csv into ctx.out_dir.
ProbeResult run_jordan_positionwise_probe(const ProbeContext& ctx);

}  // namespace ropekit
