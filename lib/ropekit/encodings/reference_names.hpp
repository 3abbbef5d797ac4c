#pragma once
// The fixed-basis reference names (fixed-basis.md section 2) as the encoding family values they name, so that
// `jordan_rope` and `jordan:m=2,...` are one encoding.

#include "ropekit/encodings/types.hpp"
#include "ropekit/encodings/method.hpp"

namespace ropekit {

/// The family value of a reference method; the run's defaults fill what the name leaves unset.
Encoding from_method(const Method& method, const EncodingDefaults& defaults);

}  // namespace ropekit
