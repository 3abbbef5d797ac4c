#include "ropekit/core/trig_integrals.hpp"

#include <cfloat>
#include <cmath>
#include <complex>
#include <limits>

namespace ropekit {

namespace {

constexpr double kEulerGamma = 0.57721566490153286060651209008240243;
constexpr double kSeriesMax = 2.0;

// Series: Cin(x) = sum_{k>=1} (-1)^{k+1} x^{2k} / (2k (2k)!), Si(x) = sum_{k>=0} (-1)^k x^{2k+1} / ((2k+1)(2k+1)!).
double cin_series(double x) {
  const double x2 = x * x;
  double term = x2 / 2, sum = 0;  // term = (-1)^{k+1} x^{2k}/(2k)!
  for (int k = 1; k < 40; ++k) {
    const double add = term / (2 * k);
    sum += add;
    if (std::abs(add) <= DBL_EPSILON * std::abs(sum) * 0.25) break;
    term *= -x2 / ((2.0 * k + 1) * (2.0 * k + 2));
  }
  return sum;
}

double si_series(double x) {
  const double x2 = x * x;
  double term = x, sum = 0;  // term = (-1)^k x^{2k+1}/(2k+1)!
  for (int k = 0; k < 40; ++k) {
    const double add = term / (2 * k + 1);
    sum += add;
    if (std::abs(add) <= DBL_EPSILON * std::abs(sum) * 0.25) break;
    term *= -x2 / ((2.0 * k + 2) * (2.0 * k + 3));
  }
  return sum;
}

// E1(ix) for x >= 2 by its continued fraction (A&S 5.1.22), modified Lentz.
std::complex<double> e1_imaginary(double x) {
  const double tiny = 1e-300;
  std::complex<double> b(1.0, x), c(1.0 / tiny, 0.0), d = 1.0 / b, h = d;
  for (int i = 2; i < 1000; ++i) {
    const double a = -static_cast<double>(i - 1) * (i - 1);
    b += 2.0;
    d = 1.0 / (a * d + b);
    c = b + a / c;
    const std::complex<double> del = c * d;
    h *= del;
    if (std::abs(del.real() - 1) + std::abs(del.imag()) < DBL_EPSILON) break;
  }
  return h * std::complex<double>(std::cos(x), -std::sin(x));
}

}  // namespace

double cin(double x) {
  x = std::abs(x);
  if (std::isnan(x)) return x;
  if (x < kSeriesMax) return cin_series(x);
  if (std::isinf(x)) return std::numeric_limits<double>::infinity();
  return kEulerGamma + std::log(x) + e1_imaginary(x).real();  // Ci = -Re E1(ix)
}

double ci(double x) {
  if (std::isnan(x) || x < 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return 0;
  if (x < kSeriesMax) return kEulerGamma + std::log(x) - cin_series(x);
  return -e1_imaginary(x).real();
}

double si(double x) {
  if (std::isnan(x)) return x;
  const double a = std::abs(x);
  double v;
  if (a < kSeriesMax) v = si_series(a);
  else if (std::isinf(a)) v = M_PI / 2;
  else v = M_PI / 2 + e1_imaginary(a).imag();
  return std::copysign(v, x);
}

}  // namespace ropekit
