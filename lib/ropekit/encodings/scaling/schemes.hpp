#pragma once
// The closed set of context-scaling schemes (spec encodings.md section 3). Adding a scheme: its header (struct,
// key table, traits, arithmetic; see scheme.hpp), its line in the variant below, and its example row in
// tests/encodings/test_frequencies.cpp (kSchemeExamples); ScalingScheme rejects a scheme that misses a piece.

#include <variant>

#include "ropekit/encodings/scaling/dynamic.hpp"
#include "ropekit/encodings/scaling/linear.hpp"
#include "ropekit/encodings/scaling/llama3.hpp"
#include "ropekit/encodings/scaling/longrope.hpp"
#include "ropekit/encodings/scaling/none.hpp"
#include "ropekit/encodings/scaling/ntk.hpp"
#include "ropekit/encodings/scaling/proportional.hpp"
#include "ropekit/encodings/scaling/yarn.hpp"

namespace ropekit {

using Scaling = std::variant<scaling::None, scaling::Linear, scaling::Ntk, scaling::Dynamic, scaling::Yarn,
                             scaling::LongRope, scaling::Llama3, scaling::Proportional>;

namespace scaling {
template <class V>
inline constexpr bool kAllSchemes = false;
template <class... S>
inline constexpr bool kAllSchemes<std::variant<S...>> = (ScalingScheme<S> && ...);
static_assert(kAllSchemes<Scaling>, "every alternative of Scaling must model scaling::ScalingScheme (scheme.hpp)");
}  // namespace scaling

}  // namespace ropekit
