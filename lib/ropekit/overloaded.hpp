#pragma once
// The overload-set idiom for visiting the families' std::variants:
//   std::visit(Overloaded{[](const A&) {...}, [](const B&) {...}}, v);

namespace ropekit {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace ropekit
