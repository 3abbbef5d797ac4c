// Reading the reference's YAML run configs (spec fixed-basis.md section 5), and rejecting bad ones
// with a message that names the key, the value and the constraint.
#include <doctest/doctest.h>

#include <string>

#include "probes/fit_config.hpp"
#include "ropekit/error.hpp"
#include "tests/support.hpp"

using namespace ropekit;

namespace {

const char* kToy = R"(seeds: [0, 1]
methods: [rope, jordan_rope]
ablation_methods: [jordan_raw_tau]
toy_extra_methods: [jordan_m3]
position:
  theta: 10000.0
  gamma_min: 0.0002
  bounded_tau: true
toy:
  train_context: 512
  eval_contexts: [512, 4096]
  num_freqs: 8
  head_dim: 32
  target_freq_index: 2
  ridge: 0.001
lm:
  anything: [ignored]
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

std::string error_of(const std::string& yaml) {
  try {
    parse_fit_config(yaml, "test.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the three paper configs load with the values written in them") {
  const FitConfig t3 = load_fit_config(test::source_path("configs/paper-table3-toy.yaml"));
  CHECK(t3.section == "toy");
  CHECK(t3.seeds == std::vector<std::int64_t>{0, 1, 2});
  CHECK(t3.methods.size() == 8 + 2 + 1);  // methods + ablation_methods + toy_extra_methods
  CHECK(t3.methods.back() == "jordan_m3");
  CHECK(t3.targets == std::vector<std::string>{"phase", "linear", "mixed"});
  CHECK(t3.basis.head_dim == 64);
  CHECK(t3.basis.num_freqs == 16);
  CHECK(t3.basis.gamma == 1e-4);
  CHECK(t3.basis.bounded_tau);
  CHECK(t3.ridge == 1e-4);
  CHECK(t3.train_points == 1024);
  CHECK(t3.eval_contexts == std::vector<int>{1024, 2048, 4096, 8192});

  const FitConfig t6 = load_fit_config(test::source_path("configs/paper-tables6-16-highjet.yaml"));
  CHECK(t6.section == "benchmarks");
  CHECK(t6.basis.head_dim == 96);
  CHECK(t6.target.second_freq_index == 5);
  CHECK(t6.target.scaled_c == 0.1);
  CHECK(t6.targets.size() == 10);
  const FitConfig t11 = load_fit_config(test::source_path("configs/paper-table11-structured.yaml"));
  CHECK(t11.methods.size() == 11);
  CHECK(t11.target.drift_eps == 5e-5);
}

TEST_CASE("gamma falls back to position.gamma_min - unknown sections are ignored") {
  const FitConfig c = parse_fit_config(kToy, "toy.yaml");
  CHECK(c.basis.gamma == 2e-4);
  CHECK(c.basis.train_context == 512);
  CHECK(c.target.freq_index == 2);
  CHECK(c.methods == std::vector<std::string>{"rope", "jordan_rope", "jordan_raw_tau", "jordan_m3"});
}

TEST_CASE("command-line overrides replace methods and targets") {
  ConfigOverrides o;
  o.methods = std::vector<std::string>{"alibi"};
  o.targets = std::vector<std::string>{"high_jet_r5"};
  const FitConfig c = parse_fit_config(kToy, "toy.yaml", o);
  CHECK(c.methods == std::vector<std::string>{"alibi"});
  CHECK(c.targets == std::vector<std::string>{"high_jet_r5"});
}

TEST_CASE("bad configs are rejected with the key - the value and the constraint") {
  struct Case {
    std::string yaml, expect;
  };
  const std::vector<Case> cases = {
      {replace(kToy, "head_dim: 32", "head_dim: 33"), "toy.head_dim = 33 (must be a positive even integer)"},
      {replace(kToy, "head_dim: 32", "head_dim: 0"), "toy.head_dim = 0"},
      {replace(kToy, "num_freqs: 8", "num_freqs: 0"), "toy.num_freqs = 0"},
      {replace(kToy, "train_context: 512", "train_context: -5"), "toy.train_context = -5"},
      {replace(kToy, "train_context: 512", "train_context: 0"), "toy.train_context = 0"},
      {replace(kToy, "[512, 4096]", "[512, -1]"), "toy.eval_contexts[1] = -1"},
      {replace(kToy, "[512, 4096]", "[512, 0]"), "toy.eval_contexts[1] = 0"},
      {replace(kToy, "ridge: 0.001", "ridge: -0.001"), "toy.ridge = -0.001"},
      {replace(kToy, "ridge: 0.001", "ridge: .nan"), "toy.ridge = nan"},
      {replace(kToy, "theta: 10000.0", "theta: .nan"), "position.theta = nan"},
      {replace(kToy, "gamma_min: 0.0002", "gamma_min: .nan"), "position.gamma_min = nan"},
      {replace(kToy, "ridge: 0.001", "ridge: abc"), "toy.ridge = 'abc'"},
      {replace(kToy, "train_context: 512", "train_context: 512.5"), "toy.train_context = '512.5'"},
      {replace(kToy, "ridge: 0.001", "ridge: 0.001\n  train_points: 600"), "toy.train_points = 600"},
      {replace(kToy, "toy:", "other:"), "neither a 'toy' nor a 'benchmarks' section"},
      {replace(kToy, "  num_freqs: 8\n", ""), "toy.num_freqs is missing"},
      {replace(kToy, "jordan_rope]", "jordan_exact_m4_c010]"), "jordan_scaled_m4_c010"},
      {replace(kToy, "jordan_rope]", "wavelets]"), "unknown method 'wavelets'"},
      {replace(kToy, "bounded_tau: true", "bounded_tau: maybe"), "position.bounded_tau = 'maybe'"},
      {replace(kToy, "seeds: [0, 1]", "seeds: [0, x]"), "seeds[1] = 'x'"},
      {"toy: [1, 2\n", "malformed YAML at line"},
      {"", "not a YAML mapping"},
      {"- just\n- a list\n", "not a YAML mapping"},
  };
  for (const auto& c : cases) {
    const std::string err = error_of(c.yaml);
    CAPTURE(c.expect);
    CAPTURE(err);
    CHECK(err.find(c.expect) != std::string::npos);
  }
}

TEST_CASE("a missing or unreadable config file is an InputError naming the path") {
  CHECK_THROWS_WITH_AS(load_fit_config("/nonexistent/x.yaml"), doctest::Contains("/nonexistent/x.yaml"), InputError);
  test::ScratchDir dir("cfg");
  CHECK_THROWS_AS(load_fit_config(dir.path().string()), InputError);  // a directory
}
