#pragma once
// Overloaded{lambdas...}: visit a closed std::variant family with one lambda per alternative.

namespace ropekit {
template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;
}  // namespace ropekit
