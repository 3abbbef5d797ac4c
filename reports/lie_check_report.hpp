#pragma once
// A Lie check (spec nd-rope.md section 1) rendered: JSON and Markdown for `ropekit lie check`, and the short number,
// verdict and point texts the nd-rope probe's table shares.

#include <string>
#include <vector>

#include "ropekit/lie/lie.hpp"

namespace ropekit {

/// Every number of the check, the tolerances and the verdicts (top-level booleans skew, commuting,
/// independent, relativity, reversibility; orthogonal when there is a Q). Non-finite numbers are null.
std::string lie_check_json(const LieCheck& c, const std::string& source);

/// A Markdown report: the verdict table (property, verdict, measured, threshold) and how it was measured.
std::string lie_check_markdown(const LieCheck& c, const std::string& source);

/// "1.23e-04" (non-finite values as format_number), "yes" / "**no**", "(1, 2)".
std::string lie_sci(double v);
std::string lie_verdict(bool b);
std::string lie_point(const std::vector<int>& x);

}  // namespace ropekit
