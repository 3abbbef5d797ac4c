// Reading the reference's YAML run configs (spec fixed-basis.md section 5), and rejecting bad ones
// with a message that names the key, the value and the constraint.
#include <doctest/doctest.h>

#include <string>

#include "config/fit_config_yaml.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/encoding.hpp"
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
      {replace(kToy, "  num_freqs: 8\n", ""), "toy.num_freqs = none (must be set: "},
      {replace(kToy, "jordan_rope]", "jordan_exact_m4_c010]"), "jordan_scaled_m4_c010"},
      {replace(kToy, "jordan_rope]", "wavelets]"), "method = 'wavelets' (must be one of nope, rope, "},
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

TEST_CASE("a key given twice in one mapping is refused, naming both places (yaml-cpp would keep the first)") {
  const std::string twice = replace(kToy, "  num_freqs: 8\n", "  num_freqs: 8\n  num_freqs: 16\n");
  CHECK(error_of(twice) ==
        "config test.yaml: toy.num_freqs = given twice (line 12, column 3 and line 13, column 3) (must be given once: "
        "YAML readers disagree on which one counts (yaml-cpp keeps the first, PyYAML the last))");
  CHECK(error_of(replace(kToy, "seeds: [0, 1]\n", "seeds: [0, 1]\nseeds: [2]\n")).find("seeds = given twice") !=
        std::string::npos);
  // Nested in a flow mapping, and inside a section that is otherwise ignored.
  CHECK(error_of(replace(kToy, "  anything: [ignored]", "  anything: {a: 1, a: 2}")).find("lm.anything.a = given twice") !=
        std::string::npos);
}

TEST_CASE("sizes beyond the memory budget are refused up front, naming the key and the largest value that fits") {
  // 4000 frequencies of jordan:m=32 on 512 training lags: 256001 columns, a p x p ridge system of 5e11 bytes.
  const std::string big = replace(replace(kToy, "num_freqs: 8", "num_freqs: 4000"), "methods: [rope, jordan_rope]",
                                  "methods: [jordan:m=32]");
  const std::string e = error_of(big);
  CAPTURE(e);
  CHECK(e.rfind("config test.yaml: toy.num_freqs = 4000 (must be at most ", 0) == 0);
  CHECK(e.find("of memory, over the budget of") != std::string::npos);
  // The limit it names fits, and one more does not.
  const long limit = std::stol(e.substr(e.find("at most ") + 8));
  CHECK(limit >= 1);
  CHECK_NOTHROW(parse_fit_config(replace(big, "num_freqs: 4000", "num_freqs: " + std::to_string(limit)), "t.yaml"));
  CHECK_THROWS_AS(parse_fit_config(replace(big, "num_freqs: 4000", "num_freqs: " + std::to_string(limit + 1)), "t.yaml"),
                  InputError);
}

TEST_CASE("targets that would leave float64 on the scored lags are refused with the lag bound") {
  // high_jet_r64 with L = 1 scored to lag 2^20 - 1: x^64 = (2^20)^64 = 2^1280 is not a float64; the bound is
  // x <= DBL_MAX^(1/64) = 2^16 (with the code's margin of e^-2.78 on the value: x <= 2^16 e^(-2.78/64) = 62747.6).
  std::string yaml = replace(replace(kToy, "train_context: 512", "train_context: 1"), "eval_contexts: [512, 4096]",
                             "eval_contexts: [1048576]");
  yaml = replace(yaml, "ridge: 0.001", "ridge: 0.001\n  train_points: 1");
  ConfigOverrides o;
  o.targets = std::vector<std::string>{"high_jet_r64"};
  try {
    parse_fit_config(yaml, "t.yaml", o);
    FAIL("accepted");
  } catch (const InputError& e) {
    const std::string m = e.what();
    CAPTURE(m);
    CHECK(m.find("target 'high_jet_r64': lag = 1048575 (must be at most 62747.5") != std::string::npos);
  }
  // Where e^{-x} tames x^64 every lag is fine (the scaled jet peaks at 64^64 e^-64 = 10^87.8).
  o.targets = std::vector<std::string>{"scaled-high-jet:r=64,c=1"};
  CHECK_NOTHROW(parse_fit_config(yaml, "t.yaml", o));
}

TEST_CASE("encodings: a list beside methods (either or both), parsed with the run's defaults") {
  const std::string both = replace(kToy, "ablation_methods:", "encodings: [rope, \"direct-sum:[rope,alibi]\", jordan:m=3]\nablation_methods:");
  const FitConfig c = parse_fit_config(both, "e.yaml");
  CHECK(c.methods.size() == 4);
  CHECK(c.encodings == std::vector<std::string>{"rope", "direct-sum:[rope,alibi]", "jordan:m=3"});
  // `rope` here is the method rope of this run: dim = head_dim, base = theta, F = num_freqs.
  CHECK(spelling(fit_encoding(c, 0)) == "rope:dim=32,base=10000,F=8");
  const EncodingDefaults d = c.encoding_defaults();
  CHECK(d.dim == 32);
  CHECK(d.count == 8);
  CHECK(d.L == 512);
  CHECK(d.gamma == 0.0002);
  CHECK(spelling(fit_encoding(c, 2)) == spelling(parse_encoding("jordan:m=3,dim=32,F=8,gamma=0.0002,L=512,tau=bounded")));

  // Only encodings: fine. Neither: refused.
  std::string only = replace(replace(replace(kToy, "methods: [rope, jordan_rope]", "encodings: [alibi]"),
                                     "ablation_methods: [jordan_raw_tau]\n", ""),
                             "toy_extra_methods: [jordan_m3]\n", "");
  const FitConfig o = parse_fit_config(only, "o.yaml");
  CHECK(o.methods.empty());
  CHECK(o.encodings == std::vector<std::string>{"alibi"});
  CHECK(error_of(replace(only, "encodings: [alibi]", "encodings: []")).find("no methods") != std::string::npos);

  // --encoding replaces the config's encodings (as --methods replaces its methods); messages then name it.
  ConfigOverrides ov;
  ov.encodings = std::vector<std::string>{"nope"};
  CHECK(parse_fit_config(both, "e.yaml", ov).encodings == std::vector<std::string>{"nope"});
  ov.encodings = std::vector<std::string>{"rope:dim=7"};
  CHECK_THROWS_WITH_AS(parse_fit_config(both, "e.yaml", ov),
                       doctest::Contains("config e.yaml: --encoding: encoding 'rope:dim=7': dim = 7"), InputError);
}

TEST_CASE("bad encodings are refused naming encodings[i], the spelling and the constraint") {
  const std::string base = replace(kToy, "ablation_methods:", "encodings: [rope, ENC]\nablation_methods:");
  struct Case {
    std::string enc, expect;
  };
  const std::vector<Case> cases = {
      {"rope:dim=63", "config test.yaml: encodings[1]: encoding 'rope:dim=63': dim = 63 (must be a positive even integer)"},
      {"warp", "config test.yaml: encodings[1]: encoding 'warp': encoding family = 'warp' (must be one of rope, "},
      {"jordan_exact_m4_c010", "jordan_scaled_m4_c010"},
      {"\"nd:family=axial,dim=8,axes=2\"",
       "config test.yaml: encodings[1] = 'nd:family=axial,dim=8,axes=2' (must be an encoding of 1-D lags"},
      {"sinusoidal:dim=8", "config test.yaml: encodings[1] = 'sinusoidal:dim=8' (must be a relative encoding"},
      {"\"rope:dim=32,scaling=dynamic(factor=4,orig=64)\"", "encodings[1] = 'rope:dim=32,scaling=dynamic(factor=4,orig=64)' "
                                                             "(must be an encoding with a fixed feature basis"},
      {"[rope]", "encodings[1] = a list (must be a name)"},
  };
  for (const auto& c : cases) {
    const std::string err = error_of(replace(base, "ENC", c.enc));
    CAPTURE(c.enc);
    CAPTURE(err);
    CHECK(err.find(c.expect) != std::string::npos);
    CHECK(err.find('\n') == std::string::npos);
  }
  // Sizes: an encoding whose own spelling is too large is named.
  const std::string big = error_of(replace(base, "ENC", "\"jordan:m=32,F=16000000\""));
  CAPTURE(big);
  CHECK(big.find("config test.yaml: encodings[1] = 'jordan:m=32,F=16000000' (must be an encoding with fewer than its "
                 "1024000001 feature columns") != std::string::npos);
}

TEST_CASE("the example config with encodings loads") {
  const FitConfig c = load_fit_config(test::source_path("configs/encodings-toy.yaml"));
  CHECK(c.methods == std::vector<std::string>{"rope", "rope_alibi", "jordan_rope"});
  REQUIRE(c.encodings.size() == 5);
  CHECK(c.encodings[0] == "direct-sum:[rope,alibi]");
  for (std::size_t i = 0; i < c.encodings.size(); ++i) CHECK(n_features(fit_encoding(c, i)) >= 2);
}

TEST_CASE("configs/long-context.yaml: scored to 2^27 lags within a bounded memory estimate (issue 9)") {
  // The run streams evaluation (fit_run.cpp): its memory model counts the training design of 4096 lags and one
  // window per basis, not the 2^27 evaluation lags; the issue's bound is 256 MB whatever the length. The same run
  // at 2^20 lags must have the same memory estimate (it does not grow with the length) and a shorter time.
  FitConfig c = load_fit_config(test::source_path("configs/long-context.yaml"));
  CHECK(c.max_length() == (1 << 27));
  CHECK(c.encodings.size() == 4);
  c.validate();
  const Cost full = c.cost();
  CHECK(full.bytes < 256e6);
  CHECK(full.fits());
  FitConfig shorter = c;
  shorter.eval_contexts = {4096, 32768, 131072, 1 << 18, 1 << 19, 1 << 20};  // as many rows as the full run
  CHECK(shorter.cost().bytes == doctest::Approx(full.bytes).epsilon(1e-9));
  CHECK(shorter.cost().seconds < full.seconds / 64);  // time grows linearly: 2^7 = 128 times the lags
}

TEST_CASE("aliases that refer to themselves or expand exponentially are refused in one line, not a stack overflow") {
  // `a: &b {x: *b}` made yaml-cpp's node graph cyclic and the duplicate-key walk overflowed the stack (SIGSEGV).
  auto message = [](const std::string& yaml) {
    try {
      parse_fit_config(yaml, "c.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  const std::string self = message("a: &b {x: *b}\nmethods: [rope]\ntoy: {}\n");
  CAPTURE(self);
  CHECK(self.find("config c.yaml: a.x.x.") == 0);
  CHECK(self.find("= nested deeper than 64 levels (must be a run config without self-referring") != std::string::npos);
  // Seven levels of ten-fold aliases: 10^7 nodes once expanded.
  std::string lol = "l0: &l0 [1,1,1,1,1,1,1,1,1,1]\n";
  for (int i = 1; i <= 6; ++i) {
    lol += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) lol += (j ? ",*l" : "*l") + std::to_string(i - 1);
    lol += "]\n";
  }
  lol += "methods: [rope]\ntoy: {}\n";
  const std::string big = message(lol);
  CAPTURE(big);
  CHECK(big.find("= more than 1048576 nodes once its aliases are expanded") != std::string::npos);
  // A plain anchor reused once stays fine (the paper's configs use none, but YAML users do).
  CHECK(message("d: &d {ridge: 0.0001}\nmethods: [rope]\ntoy: {train_context: 64, eval_contexts: [64]}\ne: *d\n").find("alias") ==
        std::string::npos);
}

TEST_CASE("FitOptions: the options' own checks are the library's (the command line and Python only bind them)") {
  auto refusal = [](const FitOptions& o) {
    try {
      (void)fit_config(o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  FitOptions o;
  o.basis.train_context = 8;
  o.eval_contexts = {8};
  o.freq_index = 3;
  o.second_freq_index = 5;
  o.encodings_key = "--encodings";
  CHECK(refusal(o) == "ropekit fit: --encodings = none (must list at least one encoding, or give methods)");
  o.encodings = {"rope:dim=8"};
  o.tau = "sideways";
  CHECK(refusal(o) == "ropekit fit: --tau = 'sideways' (must be bounded or raw)");
  o.tau = "raw";
  o.threads = -1;
  CHECK(refusal(o) == "ropekit fit: --threads = -1 (must be an integer >= 0 (0: all cores))");
  o.threads = 0;
  CHECK(refusal(o).empty());
  CHECK_FALSE(fit_config(o).basis.bounded_tau);  // tau = raw reached the basis
}
