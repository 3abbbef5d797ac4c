// `ropekit design` as a user meets it: spectral-family designs equal the library's rf-rope draws (`ropekit
// frequencies`), the kernel:ENCODING route's tuned spelling read back by `ropekit kernel`, a box table refuted with exit
// code 3 and complete output, a slowly decaying PD table accepted, the JSON fields and their types, the .txt/.json/.npy
// exports read back bit for bit (the .npy header parsed here), and bad input (exit 2, one line, no output file).
// The lines route of rope kernels: YaRN's design is YaRN's own frequencies (`ropekit frequencies`) with a realised
// kernel equal to the target to rounding, partial rope's atom at 0, the table route kept by --spectrum-route table
// (the old expectations) and by the families without a line spectrum (damped, jordan, xpos, alibi).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/npy.hpp"
#include "reports/table.hpp"
#include "ropekit/core/spelling.hpp"
#include "tests/support.hpp"

using ropekit::test::check_rejected;
using ropekit::test::run_ropekit;
using ropekit::test::ScratchDir;
using ropekit::test::slurp;
using json = nlohmann::json;

namespace {

double num(const std::string& s) { return ropekit::parse_double(s).value(); }

// A lag,value table of phi on 0, h, ..., (n-1) h, every number at full precision.
std::string table_csv(double h, int n, double (*phi)(double)) {
  std::string out = "lag,value\n";
  for (int k = 0; k < n; ++k) out += fmt::format("{:.17g},{:.17g}\n", k * h, phi(k * h));
  return out;
}

double box(double x) { return x <= 10 ? 1.0 : 0.0; }
double cauchy(double x) { return 1 / (1 + x * x); }

// The theta column of `ropekit frequencies` (csv: i,theta,wavelength,attention_factor).
std::vector<double> library_frequencies(const std::string& encoding) {
  const auto r = run_ropekit("frequencies --encoding '" + encoding + "'");
  REQUIRE(r.exit_code == 0);
  const auto t = ropekit::parse_csv(r.out, "stdout");
  std::vector<double> w;
  for (const auto& row : t.rows) w.push_back(num(row[1]));
  return w;
}

json run_json(const std::string& args, int expect_exit = 0) {
  const auto r = run_ropekit("design " + args + " --format json");
  CAPTURE(args);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == expect_exit);
  return json::parse(r.out);
}

std::vector<double> doubles(const json& a) {
  std::vector<double> v;
  for (const auto& x : a) v.push_back(x.get<double>());
  return v;
}

}  // namespace

TEST_CASE("design of a spectral family: the library's rf-rope draw, the rf-rope spelling, the closed-form density") {
  for (const std::string sampling : {"iid", "antithetic"}) {
    CAPTURE(sampling);
    const json j = run_json("--kernel gaussian:sigma=2 --blocks 8 --seed 11 --sampling " + sampling + " --lags 0:50");
    const std::string rf = "rf-rope:spectrum=gaussian(sigma=2),blocks=8,seed=11,sampling=" + sampling;
    CHECK(j["tuned_encoding"] == rf);
    CHECK(doubles(j["frequencies"]) == library_frequencies(rf));  // exactly: the same sampler, shortest round trip
    CHECK(j["positive_definite"] == true);
    CHECK(j["negative_mass"] == 0);
    CHECK(j["seed"] == 11);
  }
  const json q = run_json("--kernel gaussian:sigma=2 --blocks 8 --lags 0:50");
  CHECK(q["tuned_encoding"] == "rf-rope:spectrum=gaussian(sigma=2),blocks=8");  // quantile: the seedless grid
  CHECK(doubles(q["frequencies"]) == library_frequencies("rf-rope:spectrum=gaussian(sigma=2),blocks=8"));
  CHECK(q["seed"].is_null());
  // p = p_closed_form = sigma/sqrt(2 pi) e^{-sigma^2 w^2/2}, written here.
  const auto w = doubles(q["density"]["w"]), p = doubles(q["density"]["p_closed_form"]);
  REQUIRE(w.size() == 4097);
  for (std::size_t i = 0; i < w.size(); i += 512)
    CHECK(p[i] == doctest::Approx(2 / std::sqrt(2 * std::numbers::pi) * std::exp(-2 * w[i] * w[i])).epsilon(1e-13));
  // Rows: target e^{-x^2/8}; realised (1/8) sum cos(w_i x) recomputed here; quantile variance 0, iid Prop 4 reference.
  const auto f = doubles(q["frequencies"]);
  for (const auto& row : q["rows"]) {
    const double x = row["lag"].get<double>();
    double s = 0;
    for (double wi : f) s += std::cos(wi * x);
    CAPTURE(x);
    CHECK(row["target"].get<double>() == doctest::Approx(std::exp(-x * x / 8)).epsilon(1e-14));
    CHECK(row["realised"].get<double>() == doctest::Approx(s / 8).epsilon(1e-12));
    CHECK(row["prop4_variance"] == 0);
    const double phi = std::exp(-x * x / 8), phi2 = std::exp(-x * x / 2);
    CHECK(row["prop4_variance_iid"].get<double>() ==
          doctest::Approx(((1 + phi2) / 2 - phi * phi) / 8).epsilon(1e-9).scale(1e-300));
  }
}

TEST_CASE("design from kernel:ENCODING: the tuned rope:freqs=[...] reads back in `ropekit kernel` with the realised kernel") {
  const json j = run_json("--kernel kernel:rope:dim=8,base=1e4 --blocks 16 --lags 0:2049 --spectrum-route table");
  CHECK(j["spectrum_route"] == "table");
  CHECK(j["spectrum_route_reason"] == "--spectrum-route table");
  CHECK(j["density"]["kind"] == "density");
  const std::string tuned = j["tuned_encoding"];
  CHECK(tuned.rfind("rope:freqs=[", 0) == 0);
  CHECK(j["positive_definite"] == true);
  CHECK(j["lag_step"] == 1);
  const auto r = run_ropekit("kernel --encoding '" + tuned + "' --lags 0,1,10,100,1000,2048");
  REQUIRE(r.exit_code == 0);
  const auto t = ropekit::parse_csv(r.out, "stdout");
  for (const auto& row : t.rows) {
    const double x = num(row[1]);
    CAPTURE(x);
    CHECK(num(row[2]) == doctest::Approx(j["rows"][static_cast<std::size_t>(x)]["realised"].get<double>()).epsilon(1e-12));
  }
}

TEST_CASE("a box kernel is refuted: exit 3, the complete report and export written, positive_definite false") {
  ScratchDir dir("design-box");
  const std::string data = dir.write("box.csv", table_csv(0.5, 81, box));
  const std::string out = dir.file("r.json"), npy = dir.file("w.npy");
  const auto r = run_ropekit("design --kernel data:" + data + " --blocks 32 --format json --out " + out + " --export " + npy);
  CAPTURE(r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find("NOT positive definite") != std::string::npos);
  const json j = json::parse(slurp(out));  // complete: parses, every section present
  CHECK(j["positive_definite"] == false);
  CHECK(j["negative_mass"].get<double>() > 1e-2);
  CHECK(j["negative_mass"].get<double>() > 1e6 * j["tolerance"].get<double>());
  CHECK(j["rows"].size() == 81);
  CHECK(j["frequencies"].size() == 32);
  CHECK(j["rows"][40]["prop4_variance_iid"].is_number());  // Phi(2 Dp) = Phi(40): the table's last row
  CHECK(j["rows"][41]["prop4_variance_iid"].is_null());    // Phi(41) is beyond the table: NaN -> null
  CHECK(std::filesystem::file_size(npy) == 128 + 8 * 32);
}

TEST_CASE("a slowly decaying PD table passes (exit 0) and md shows the verdict; csv is the error table") {
  ScratchDir dir("design-cauchy");
  const std::string data = dir.write("c.csv", table_csv(0.5, 201, cauchy));
  const auto md = run_ropekit("design --kernel data:" + data + " --blocks 64");
  CAPTURE(md.err);
  REQUIRE(md.exit_code == 0);
  CHECK(md.err.empty());
  CHECK(md.out.find("**Verdict:** positive definite") != std::string::npos);
  CHECK(md.out.find("## Frequencies (64)") != std::string::npos);
  const auto csv = run_ropekit("design --kernel data:" + data + " --blocks 64 --format csv");
  REQUIRE(csv.exit_code == 0);
  const auto t = ropekit::parse_csv(csv.out, "stdout");
  CHECK(t.columns == std::vector<std::string>{"lag", "target", "realised", "error", "prop4_variance", "prop4_variance_iid"});
  CHECK(t.rows.size() == 200);  // 201 lags subsampled to at most 200
  CHECK(num(t.rows.front()[0]) == 0);
  CHECK(num(t.rows.back()[0]) == 100);
}

TEST_CASE("JSON fields are present and typed") {
  const json j =
      run_json("--kernel kernel:rope:dim=16 --blocks 8 --sampling antithetic --seed 3 --lags 0:513 --spectrum-route table");
  for (const char* key : {"kernel", "tuned_encoding", "sampling", "source", "command", "ropekit"}) {
    CAPTURE(key);
    CHECK(j.at(key).is_string());
  }
  CHECK(j["kernel"] == "kernel:rope:dim=16");
  CHECK(j["sampling"] == "antithetic");
  CHECK(j["positive_definite"].is_boolean());
  for (const char* key : {"negative_mass", "negative_mass_untapered", "tolerance", "w_max", "density_integral", "lag_step"}) {
    CAPTURE(key);
    CHECK(j.at(key).is_number());
  }
  CHECK(j["blocks"] == 8);
  CHECK(j["seed"] == 3);
  CHECK(j["frequencies"].is_array());
  CHECK(j["frequencies"].size() == 8);
  CHECK(j["density"]["w"].size() == j["density"]["p"].size());
  CHECK_FALSE(j["density"].contains("p_closed_form"));  // families only
  CHECK(j["error"]["max_abs"].is_number());
  CHECK(j["error"]["rms"].is_number());
  REQUIRE(j["rows"].size() == 513);
  for (const char* key : {"lag", "target", "realised", "error", "prop4_variance", "prop4_variance_iid"}) {
    CAPTURE(key);
    CHECK(j["rows"][1].at(key).is_number());
  }
  CHECK(j["rows"][400]["prop4_variance_iid"].is_number());  // kernel: evaluates Phi(2 Dp) = Phi(800) from the encoding
  CHECK(j["density_integral"].get<double>() == doctest::Approx(1).epsilon(0.05));
}

TEST_CASE("--export .txt, .json and .npy read back equal to the report's frequencies") {
  ScratchDir dir("design-export");
  const std::string args = "--kernel cauchy:b=1 --blocks 13 --sampling iid --seed 5 --lags 0:20";
  const std::string base = "design " + args + " --format json";
  const json j = run_json(args);
  const auto f = doubles(j["frequencies"]);
  for (const char* ext : {"txt", "json", "npy"}) {
    const std::string path = dir.file(std::string("w.") + ext);
    const auto r = run_ropekit(base + " --out " + dir.file("r.json") + " --export " + path);
    REQUIRE(r.exit_code == 0);
    const std::string bytes = slurp(path);
    std::vector<double> back;
    if (std::string(ext) == "txt") {
      std::istringstream in(bytes);
      for (std::string line; std::getline(in, line);) back.push_back(num(line));
    } else if (std::string(ext) == "json") {
      back = doubles(json::parse(bytes));
    } else {
      // NumPy v1.0: magic, version 1.0, little-endian header length, the dict, data at a multiple of 64.
      REQUIRE(bytes.size() >= 10);
      CHECK(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
      const std::size_t hlen = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
      const std::string header = bytes.substr(10, hlen);
      CHECK((10 + hlen) % 64 == 0);
      CHECK(header.rfind("{'descr': '<f8', 'fortran_order': False, 'shape': (13,), }", 0) == 0);
      CHECK(header.back() == '\n');
      REQUIRE(bytes.size() == 10 + hlen + 8 * 13);
      for (std::size_t i = 0; i < 13; ++i) {
        std::uint64_t bits = 0;
        for (int b = 0; b < 8; ++b) bits |= std::uint64_t{static_cast<unsigned char>(bytes[10 + hlen + 8 * i + b])} << (8 * b);
        double v;
        std::memcpy(&v, &bits, 8);
        back.push_back(v);
      }
      CHECK(ropekit::npy_bytes(Eigen::Map<const Eigen::VectorXd>(f.data(), 13)) == bytes);
    }
    CAPTURE(ext);
    CHECK(back == f);
  }
  CHECK(ropekit::npy_bytes(Eigen::VectorXd()).size() == 128);  // an empty vector: shape (0,), header only
}

TEST_CASE("design: bad input exits 2 with one line naming the value and the constraint, and writes no file") {
  ScratchDir dir("design-bad");
  const std::string empty = dir.write("empty.csv", "lag,value\n");
  const std::string nonmono = dir.write("nonmono.csv", "lag,value\n0,1\n2,0.5\n1,0.2\n");
  const std::string notone = dir.write("notone.csv", "lag,value\n0,0.5\n1,0.2\n");
  const std::string nan = dir.write("nan.csv", "lag,value\n0,1\n1,nan\n");
  const std::string uneven = dir.write("uneven.csv", "lag,value\n0,1\n1,0.5\n3,0.2\n");
  check_rejected("design --kernel foo:x=1 --blocks 4", "ropekit design: --kernel = 'foo:x=1' (must be a 1-D spectral family");
  check_rejected("design --kernel 'gaussian:sigma=1,dims=2' --blocks 4", "(must be a 1-D spectral family (this one has dims = 2))");
  check_rejected("design --kernel data:" + empty + " --blocks 4", "rows = 0 (must be at least one after the header)");
  check_rejected("design --kernel data:" + nonmono + " --blocks 4", "lags are strictly increasing)");
  check_rejected("design --kernel data:" + notone + " --blocks 4", "Phi(0) 0.5 (must be 1 to within 1e-09");
  check_rejected("design --kernel data:" + nan + " --blocks 4", "line 3: value = 'nan' (must be a finite number)");
  check_rejected("design --kernel data:" + uneven + " --blocks 4", "(must be an even grid k h");
  check_rejected("design --kernel data:" + dir.file("missing.csv") + " --blocks 4", "kernel table = '");
  check_rejected("design --kernel gaussian:sigma=1 --blocks 0", "ropekit design: --blocks = 0 (must be an integer in [1, 16777216])");
  check_rejected("design --kernel gaussian:sigma=1 --blocks 4 --sampling sobol",
                 "ropekit design: --sampling = 'sobol' (must be one of quantile, iid, antithetic)");
  check_rejected("design --kernel gaussian:sigma=1 --blocks 4 --seed 3", "--seed = 3 (must be absent with --sampling quantile");
  check_rejected("design --kernel gaussian:sigma=1 --blocks 4 --seed -1 --sampling iid", "--seed = -1");
  check_rejected("design --kernel gaussian:sigma=1 --blocks 4 --export w.csv", "--export = '");
  check_rejected("design --kernel gaussian:sigma=1 --blocks 4 --format latex", "--format = 'latex' (must be one of md, csv, json)");
  check_rejected("design --kernel kernel:rope:dim=8 --blocks 4 --lags 0,1,3", "--lags = '0,1,3' (must be an even grid k h");
  check_rejected("design --kernel kernel:rope:dim=7 --blocks 4", "--kernel = 'kernel:rope:dim=7' (must be an encoding spelling");
  check_rejected("design --kernel kernel:sinusoidal --blocks 4", "(must be a relative encoding of 1-D lags");
  check_rejected("design --kernel kernel:rope:dim=8 --blocks 4 --wmax 2", "--wmax = 2 (must be absent for kernel: and data:");
  check_rejected("design --kernel kernel:rope:dim=8 --blocks 4 --lags 0:1e6 --wpoints 65537 --spectrum-route table",
                 "(must be at most 10000000000 cosine terms");
  check_rejected("design --kernel kernel:rope:dim=8 --blocks 4 --spectrum-route exact",
                 "ropekit design: --spectrum-route = 'exact' (must be lines or table)");
  check_rejected("design --kernel kernel:alibi --blocks 4 --spectrum-route lines",
                 "--spectrum-route = 'lines' (must be table for 'alibi': alibi is not rope, rope-matched or 1-D rf-rope");
  check_rejected("design --kernel 'kernel:rope:dim=32,scaling=dynamic(factor=4,orig=64)' --blocks 4 --spectrum-route lines",
                 "its frequencies are not fixed");
  check_rejected("design --kernel gaussian:sigma=1 --blocks 4 --spectrum-route table",
                 "--spectrum-route = 'table' (must be absent except for kernel:ENCODING inputs");
  check_rejected("design --kernel kernel:rope:dim=8 --blocks 4 --taper fejer",
                 "--taper = 'fejer' (must be none on the lines route (the kernel of 'rope:dim=8' is an exact line spectrum");
  check_rejected("design --kernel kernel:rope:dim=8 --blocks 4 --wpoints 100", "--wpoints = 100 (must be absent on the lines route");
  check_rejected("design --kernel kernel:rope:dim=8 --blocks 4 --tolerance 1", "--tolerance = 1 (must be absent on the lines route");
}

namespace {

std::vector<double> sorted(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("lines route: YaRN's design is YaRN's 64 frequencies, its realised kernel the target to rounding") {
  const std::string yarn = "rope:dim=128,base=1e4,scaling=yarn(factor=32,orig=4096)";
  const std::vector<double> theta = sorted(library_frequencies(yarn));
  REQUIRE(theta.size() == 64);
  for (int D : {64, 640}) {
    CAPTURE(D);
    const json j = run_json("--kernel 'kernel:" + yarn + "' --blocks " + std::to_string(D));
    CHECK(j["spectrum_route"] == "lines");
    CHECK(j["spectrum_route_reason"].is_null());
    CHECK(j["sampling_density"] == "lines");
    CHECK(j["positive_definite"] == true);
    CHECK(j["negative_mass"] == 0);
    CHECK(j["tolerance"] == 0);
    CHECK(j["density"]["kind"] == "lines");
    CHECK_FALSE(j["density"].contains("p"));
    CHECK(doubles(j["density"]["w"]) == theta);  // exactly: the same table, shortest round trip both ways
    for (double m : doubles(j["density"]["mass"])) CHECK(m == doctest::Approx(1.0 / 64).epsilon(1e-15));
    // Quantile sampling: every frequency D/64 times, exactly (u_i = (i - 1/2)/D is half a draw from every cdf step).
    const std::vector<double> f = doubles(j["frequencies"]);
    REQUIRE(f.size() == static_cast<std::size_t>(D));
    for (int i = 0; i < D; ++i) CHECK(f[static_cast<std::size_t>(i)] == theta[static_cast<std::size_t>(i / (D / 64))]);
    // Realised (1/D) sum cos against tr G/tr G(0) on 0..4096: the same 64 cosines summed twice, ~1e-14.
    CHECK(j["error"]["lags"] == 4097);
    CHECK(j["error"]["max_abs"].get<double>() < 1e-12);
    CHECK(j["line_identity_residual"].get<double>() < 1e-12);
    for (const auto& row : j["rows"]) CHECK(row["prop4_variance"] == 0);
  }
  // md says the route and the verdict's reason.
  const auto md = run_ropekit("design --kernel 'kernel:" + yarn + "' --blocks 64 --lags 0:4097:512");
  REQUIRE(md.exit_code == 0);
  CHECK(md.out.find("| spectrum route | lines |") != std::string::npos);
  CHECK(md.out.find("**Verdict:** positive definite: Phi = sum_i m_i cos(w_i Dp) with every m_i >= 0") != std::string::npos);
}

TEST_CASE("lines route: partial rope's identity dims are an atom at 0 of mass 1/2; the tuned spelling reads back") {
  // n = 64, r = 32, F = 16, a = 1: mass (n - r)/(2 F + n - r) = 32/64 at w = 0, 1/32 at each theta_i.
  const json j = run_json("--kernel kernel:rope:dim=64,partial=0.5 --blocks 32 --lags 0:2049");
  CHECK(j["spectrum_route"] == "lines");
  const auto w = doubles(j["density"]["w"]), m = doubles(j["density"]["mass"]);
  REQUIRE(w.size() == 17);
  CHECK(w[0] == 0);
  CHECK(m[0] == 0.5);
  for (std::size_t i = 1; i < 17; ++i) CHECK(m[i] == 1.0 / 32);
  // Quantile, D = 32: 16 draws at the atom 0 (as the smallest normal double), one at each theta_i.
  const auto f = doubles(j["frequencies"]);
  for (std::size_t i = 0; i < 16; ++i) CHECK(f[i] == std::numeric_limits<double>::min());
  for (std::size_t i = 16; i < 32; ++i) CHECK(f[i] == w[i - 15]);
  CHECK(j["error"]["max_abs"].get<double>() < 1e-12);  // 1/2 + (1/32) sum of 16 cosines, both ways: ~1e-15
  const std::string tuned = j["tuned_encoding"];
  CHECK(tuned.rfind("rope:freqs=[2.2250738585072014e-308,", 0) == 0);
  const auto r = run_ropekit("kernel --encoding '" + tuned + "' --lags 0,1,10,100,1000,2048");
  REQUIRE(r.exit_code == 0);
  for (const auto& row : ropekit::parse_csv(r.out, "stdout").rows) {
    const double x = num(row[1]);
    CAPTURE(x);
    CHECK(num(row[2]) == doctest::Approx(j["rows"][static_cast<std::size_t>(x)]["target"].get<double>()).epsilon(1e-12));
  }
}

TEST_CASE("lines route, iid: the realised error RMS is Prop 4's root mean variance (within a factor 2)") {
  // YaRN 128 with D = 4096 iid draws: E[rms^2] = mean over lags of (1/D)[(1 + Phi(2x))/2 - Phi^2], which the report
  // gives per lag; one design's rms over 4097 lags is within a factor 2 of its root.
  const json j = run_json("--kernel 'kernel:rope:dim=128,base=1e4,scaling=yarn(factor=32,orig=4096)' --blocks 4096 "
                          "--sampling iid --seed 9");
  CHECK(j["spectrum_route"] == "lines");
  double v = 0;
  for (const auto& row : j["rows"]) {
    CHECK(row["prop4_variance"] == row["prop4_variance_iid"]);
    v += row["prop4_variance"].get<double>();
  }
  const double expect = std::sqrt(v / static_cast<double>(j["rows"].size())), r = j["error"]["rms"].get<double>();
  CAPTURE(r);
  CAPTURE(expect);
  CHECK(r > expect / 2);
  CHECK(r < expect * 2);
}

TEST_CASE("table route kept: damped, jordan, xpos and alibi (no line spectrum), and dynamic NTK without a length") {
  for (const std::string e : {"damped:gamma=1e-3,dim=32,F=8", "jordan:m=2,gamma=1e-3,tau=bounded,L=64,dim=16",
                              "xpos:dim=32", "alibi:slope=0.5,L=64", "rope:dim=32,scaling=dynamic(factor=4,orig=64)"}) {
    CAPTURE(e);
    const auto r = run_ropekit("design --kernel 'kernel:" + e + "' --blocks 16 --lags 0:257 --format json");
    CAPTURE(r.err);
    REQUIRE((r.exit_code == 0 || r.exit_code == 3));  // 3: refuted, with the complete report written
    const json j = json::parse(r.out);
    CHECK(j["spectrum_route"] == "table");
    CHECK(j["spectrum_route_reason"].is_string());
    CHECK(j["density"]["kind"] == "density");
    CHECK(j["positive_definite"].is_boolean());
    CHECK(j["positive_definite"] == (r.exit_code == 0));
    CHECK(j["negative_mass"].is_number());
    CHECK(j["line_identity_residual"].is_null());
  }
}

TEST_CASE("xPos is refuted: its kernel is not even (zeta^{Dp/S} decays on one side and grows on the other)") {
  // Independent route: xPos's kernel is sum_i zeta_i^{Dp/S} cos(theta_i Dp) / F with zeta_i < 1 (spec section 2), so
  // Phi(-Dp) = sum_i zeta_i^{-Dp/S} cos(theta_i Dp) / F > 1 > Phi(Dp) at Dp = S already; a real positive-definite
  // kernel is even. The evenness of the RoPE kernel keeps it certified.
  const auto r = run_ropekit("design --kernel 'kernel:xpos:dim=32,scale_base=64' --blocks 8 --lags 0:257 --format json");
  CAPTURE(r.err);
  CHECK(r.exit_code == 3);
  const json j = json::parse(r.out);
  CHECK(j["positive_definite"] == false);
  REQUIRE(j["not_even_at"].is_number());
  CHECK(j["not_even_at"].get<double>() > 0);
  const auto rope = run_ropekit("design --kernel 'kernel:rope:dim=32' --spectrum-route table --blocks 8 --lags 0:257 "
                                "--format json");
  CHECK(rope.exit_code == 0);
  CHECK(json::parse(rope.out)["not_even_at"].is_null());
}

TEST_CASE("design --kernel kernel:ENCODING is sized by the encoding's n (issue 20 item 11)") {
  // Sized as if n = 128, rope:dim=2^24 ran silently for an hour. xPos of that size (blocks built per lag; RoPE's
  // vector route, 2 x 2^23 terms a lag, now fits in 69 min estimated): its kernel at the 4097 default lags, twice
  // them and minus them: 3 x 4097 lags x 20 n elements at budget.hpp's 5e7 per second = 23 h, over the 2 h cap.
  check_rejected("design --kernel 'kernel:xpos:dim=16777216' --blocks 8",
                 "ropekit design: --lags = '0:4097' (must be at most a smaller request for 8 blocks: '0:4097' would "
                 "take about 23 h");
  // An encoding whose blocks at one lag exceed the memory (12 x 2.8 GB, as test_cli.cpp's kernel case) is refused as
  // such, before any kernel is evaluated.
  std::string parts;
  for (int i = 0; i < 12; ++i) parts += std::string(i ? "," : "") + "jordan(m=32,dim=16777216)";
  check_rejected("design --kernel 'kernel:direct-sum:[" + parts + "]' --blocks 8",
                 "(must be an encoding whose blocks at one lag fit in memory: one lag needs 33.8 GB of memory");
}

TEST_CASE("ropekit's own kernel table feeds design: one encoding's kernel column, the same as its lag,value file") {
  // Issue 24: `design --kernel data:` refused the table `ropekit kernel` writes (and its columns varied with the
  // encodings). Two encodings' rows in one table; the xpos rows' kernel column, picked by the selector, gives the
  // report a lag,value file of the same numbers gives.
  ScratchDir dir("design-own-table");
  const std::string table = dir.file("k.csv");
  REQUIRE(run_ropekit("kernel --encoding rope:dim=16 xpos:dim=16 --lags 0:64 --out " + table).exit_code == 0);
  const auto t = ropekit::parse_csv(slurp(table), "k.csv");
  const std::string xpos = "xpos:dim=16,base=10000,scale_base=512";
  std::string plain = "lag,value\n";
  for (const auto& row : t.rows)
    if (row[0] == xpos) plain += row[1] + "," + row[2] + "\n";
  const std::string two = dir.write("x.csv", plain);
  const auto a = run_ropekit("design --kernel 'data:" + table + "#column=kernel,encoding=" + xpos + "' --blocks 8 --format csv");
  const auto b = run_ropekit("design --kernel data:" + two + " --blocks 8 --format csv");
  CAPTURE(a.err);
  REQUIRE(a.exit_code == b.exit_code);
  CHECK(a.out == b.out);
  CHECK(a.out.find("lag,target,realised") == 0);
}
