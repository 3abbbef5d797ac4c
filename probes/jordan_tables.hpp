#pragma once
// Built-in probes regenerating the Jordan-RoPE paper's fixed-basis tables in float64:
// Table 3 (section 5.2), Tables 11 and 4 (section 5.3, appendix C), Tables 6 and 16 (section 5.5,
// appendix E). Each report puts ropekit's value beside the printed one and marks every printed
// cell that is a float32 artefact of the reference implementation.

#include "probes/probe.hpp"

namespace ropekit {

ProbeResult run_jordan_table3(const ProbeContext& ctx);
ProbeResult run_jordan_table11(const ProbeContext& ctx);
ProbeResult run_jordan_tables6_16(const ProbeContext& ctx);

}  // namespace ropekit
