#pragma once
// What an encoding's kernel costs (core/budget.hpp's Cost): the closed-form blocks held at one lag and the seconds
// of one lag, per family kind; the kernel request, design's and fit-params' kernel:ENCODING inputs size by it.

#include <string>
#include <string_view>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/encodings/types.hpp"

namespace ropekit {

/// Bytes of G's closed-form blocks held at one lag (a dense n x n operator and its exponential's workspace for nd).
double kernel_block_bytes(const Encoding& e, const EncodingSize& z);
/// Seconds of one lag of `e` with `columns` printed cells.
double kernel_lag_seconds(const Encoding& e, const EncodingSize& z, double columns);

/// The estimated cost of kernel(e, lags) as a function of the number of lags (design's and fit-params'
/// kernel:ENCODING inputs; issue 20 item 11: they were sized as if n = 128). The encoding is read once: reading a
/// large one's spectrum takes seconds, which a search over lag counts would repeat.
struct EncodingKernelCost {
  double fixed_bytes = 0, bytes_per_lag = 0, seconds_per_lag = 0;
  Cost at(double rows) const { return Cost{fixed_bytes + rows * bytes_per_lag, rows * seconds_per_lag}; }
};
EncodingKernelCost encoding_kernel_cost(const Encoding& e);
/// @throws InputError "<where>: <name> = '<text>' (n = ...) (must be an encoding whose blocks at one lag fit in
///         memory: ...)" for an encoding whose blocks at one lag exceed the memory budget.
void check_encoding_blocks(const Where& where, std::string_view name, const std::string& text, const Encoding& e);

}  // namespace ropekit
