#pragma once
// The cosine and sine integrals (Abramowitz and Stegun 5.2.1-5.2.2, 5.2.16):
//   Si(x) = int_0^x sin t / t dt,   Cin(x) = int_0^x (1 - cos t)/t dt,   Ci(x) = gamma + ln x - Cin(x).
// Power series below x = 2 (Cin has no cancellation against ln x there), and above it the
// continued fraction of E1(ix) = -Ci(x) + i (Si(x) - pi/2) evaluated by the modified Lentz method
// (as in Numerical Recipes' cisi), to a relative change below eps.

namespace ropekit {

/// Cin(x) = int_0^x (1 - cos t)/t dt, an even entire function; accurate relative to itself near 0 (~x^2/4).
double cin(double x);
/// Ci(x) for x > 0 (-inf at 0; NaN for x < 0 or NaN).
double ci(double x);
/// Si(x), odd.
double si(double x);

}  // namespace ropekit
