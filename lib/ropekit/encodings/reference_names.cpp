#include "ropekit/encodings/reference_names.hpp"

#include "ropekit/encoding.hpp"
#include "ropekit/core/overloaded.hpp"

namespace ropekit {

Encoding from_method(const Method& method, const EncodingDefaults& d) {
  using namespace method;
  Geometric g;
  g.dim = d.dim;
  g.base = d.base;
  g.count = d.count.value_or(d.dim / 2);
  const FrequencySchedule fs{g, scaling::None{}};
  const int L = d.L;
  auto rope = [&] { return Encoding{enc::Rope{fs}}; };
  auto alibi = [&] { return Encoding{enc::Alibi{1.0, L}}; };
  return std::visit(
      Overloaded{
          [&](const Nope&) { return Encoding{enc::Nope{}}; },
          [&](const Rope&) { return rope(); },
          [&](const RopeMatched& m) { return Encoding{enc::RopeMatched{fs, m.k}}; },
          [&](const Alibi&) { return alibi(); },
          [&](const RopeAlibi&) { return Encoding{enc::DirectSum{{rope(), alibi()}}}; },
          [&](const DampedRope& m) { return Encoding{enc::Damped{fs, m.gamma.value_or(d.gamma)}}; },
          [&](const RealJordan& m) {
            return Encoding{enc::RealJordan{m.gamma.value_or(d.gamma), m.bounded_tau.value_or(d.bounded_tau), L}};
          },
          [&](const DirectSum& m) {
            Encoding j{enc::RealJordan{m.gamma.value_or(d.gamma), m.bounded_tau.value_or(d.bounded_tau), L}};
            return Encoding{enc::DirectSum{{rope(), alibi(), j}}};
          },
          [&](const DirectSumPoly& m) {
            Encoding p{enc::Poly{m.k, m.bounded_tau.value_or(d.bounded_tau), L}};
            return Encoding{enc::DirectSum{{rope(), p}}};
          },
          [&](const Jordan& m) {
            return Encoding{
                enc::Jordan{fs, m.m, m.gamma.value_or(d.gamma), m.bounded_tau.value_or(d.bounded_tau), L}};
          },
          [&](const JordanScaled& m) { return Encoding{enc::JordanScaled{fs, m.m, m.c, L}}; },
      },
      method);
}

}  // namespace ropekit
