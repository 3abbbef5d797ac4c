#include "ropekit/fit/fit_summary.hpp"

#include <limits>
#include <map>
#include <set>
#include <utility>

namespace ropekit {

std::vector<FitSummaryRow> summarize_fit(const std::vector<FitRow>& rows) {
  // (target, context) in order of appearance; per key the methods in order, each with its MSE sum and count.
  struct Mean {
    double sum = 0;
    int count = 0;
  };
  std::vector<std::pair<std::string, int>> keys;
  std::map<std::pair<std::string, int>, std::vector<std::pair<std::string, Mean>>> by_key;
  std::map<std::pair<std::string, int>, std::set<std::int64_t>> seeds;
  for (const FitRow& r : rows) {
    if (r.split != "eval") continue;
    const auto key = std::make_pair(r.target, r.context);
    auto [it, added] = by_key.try_emplace(key);
    if (added) keys.push_back(key);
    auto& methods = it->second;
    auto m = methods.begin();
    // A model's layer types are bases of their own, named "<layer type>: <method>" (two may share an encoding).
    const std::string name = r.layer_type.empty() ? r.method : r.layer_type + ": " + r.method;
    while (m != methods.end() && m->first != name) ++m;
    if (m == methods.end()) m = methods.insert(methods.end(), {name, Mean{}});
    m->second.sum += r.mse;
    ++m->second.count;
    seeds[key].insert(r.seed);
  }
  std::vector<FitSummaryRow> out;
  for (const auto& key : keys) {
    FitSummaryRow s;
    s.target = key.first;
    s.context = key.second;
    s.runner_up_mse = std::numeric_limits<double>::quiet_NaN();
    const auto& methods = by_key.at(key);
    s.methods = static_cast<int>(methods.size());
    s.seeds = static_cast<int>(seeds.at(key).size());
    double best = std::numeric_limits<double>::infinity(), second = best;
    for (const auto& [name, mean] : methods) {
      const double v = mean.sum / mean.count;
      if (v < best) {
        s.runner_up = s.best, second = best;
        s.best = name, best = v;
      } else if (v < second) {
        s.runner_up = name, second = v;
      }
    }
    s.best_mse = best;
    if (!s.runner_up.empty()) s.runner_up_mse = second;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace ropekit
