#pragma once
// Boost.Math error policy for callers that check results themselves: overflow, underflow, denormal and evaluation
// errors come back as inf, 0 or NaN instead of exceptions (which would escape as internal errors), and the caller
// switches route or refuses the input.

#include <boost/math/policies/policy.hpp>

namespace ropekit {

using QuietPolicy = boost::math::policies::policy<
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::underflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::denorm_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>>;

}  // namespace ropekit
