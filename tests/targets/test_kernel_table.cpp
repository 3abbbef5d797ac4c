// Kernel tables (targets/kernel_table.hpp): lag,value files, and ropekit's own kernel CSV read back through a
// selection of its column and rows (issue 24: design --kernel data: and fit-params --kernel-data refused it).
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "ropekit/core/error.hpp"
#include "targets/kernel_table.hpp"

using namespace ropekit;

namespace {

// Two encodings' rows as `ropekit kernel --model` writes them: quoted spellings with commas, a masked lag (empty
// cells) in the second.
const char* kKernelCsv =
    "encoding,lag,kernel,content_variance\n"
    "\"rope:dim=8,base=100,F=4\",0,1,16\n"
    "\"rope:dim=8,base=100,F=4\",1,0.8713054482666567,12.73699763551392\n"
    "\"rope:dim=8,base=100,F=4\",10,-0.08703500395811398,11.59531603639651\n"
    "\"jordan:m=2,dim=8\",0,1,32\n"
    "\"jordan:m=2,dim=8\",1,,\n"
    "\"jordan:m=2,dim=8\",10,0.42,23.8\n";

std::string refusal(const std::string& text, const TableSelect& s) {
  try {
    (void)parse_kernel_table(text, "k.csv", "ropekit design: --kernel", s);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("ropekit's kernel CSV: one encoding's rows and a column, picked; masked lags left out") {
  const KernelTable rope = parse_kernel_table(kKernelCsv, "k.csv", "w", {"kernel", "rope:dim=8,base=100,F=4"});
  REQUIRE(rope.lag.size() == 3);
  CHECK(rope.lag[2] == 10);
  CHECK(rope.value[1] == 0.8713054482666567);  // the CSV's shortest round-trip text reads back to its double
  const KernelTable var = parse_kernel_table(kKernelCsv, "k.csv", "w", {"content_variance", "jordan:m=2,dim=8"});
  REQUIRE(var.lag.size() == 2);  // lag 1's cells are empty (masked): not a value
  CHECK(var.value[0] == 32);
  CHECK(var.value[1] == 23.8);
  // Without a column: value, else kernel.
  CHECK(parse_kernel_table(kKernelCsv, "k.csv", "w", {"", "jordan:m=2,dim=8"}).value[1] == 0.42);
  // The plain lag,value form is unchanged.
  CHECK(parse_kernel_table("lag,value\n0,1\n2,0.5\n", "t.csv", "w").value[1] == 0.5);
}

TEST_CASE("ropekit's kernel CSV: refusals name the value and what to do") {
  CHECK(refusal(kKernelCsv, {}) ==
        "ropekit design: --kernel: k.csv line 5: encoding = 'jordan:m=2,dim=8' after 'rope:dim=8,base=100,F=4' "
        "(must be one encoding's rows: FILE#encoding=SPELLING picks them)");
  CHECK(refusal(kKernelCsv, {"kernal", "jordan:m=2,dim=8"}) ==
        "ropekit design: --kernel: k.csv line 1: header = 'encoding,lag,kernel,content_variance' (must have the "
        "column 'kernal')");
  CHECK(refusal(kKernelCsv, {"kernel", "alibi"}) ==
        "ropekit design: --kernel: k.csv: rows = 0 (must be at least one after the header with encoding alibi)");
  CHECK(refusal("encoding,kernel\nx,1\n", {}).find("(must be lag,value, or a table with a lag column") !=
        std::string::npos);
  CHECK(refusal("lag,value\n0,1,2\n", {}) ==
        "ropekit design: --kernel: k.csv line 2: '0,1,2' (must be 2 comma-separated fields, as the header: lag,value)");
}

TEST_CASE("read_kernel_table: FILE#column=NAME,encoding=SPELLING (the spelling takes the rest, commas and all)") {
  const std::string path = "test_kernel_table_k.csv";
  {
    std::ofstream f(path);
    f << kKernelCsv;
  }
  const KernelTable t = read_kernel_table(path + "#column=kernel,encoding=rope:dim=8,base=100,F=4", "w");
  CHECK(t.lag.size() == 3);
  CHECK(t.source == path);
  CHECK(read_kernel_table(path + "#encoding=jordan:m=2,dim=8", "w").value.size() == 2);
  CHECK_THROWS_WITH_AS(read_kernel_table(path + "#column=kernel,bogus=1", "w"),
                       ("w: selector = 'bogus' in '" + path + "#column=kernel,bogus=1' (must be column or encoding, as "
                        "in FILE#column=NAME[,encoding=SPELLING])").c_str(), InputError);
  // An unknown first key: named as the selector (it was taken for part of the file name: "no such file")
  CHECK_THROWS_WITH_AS(read_kernel_table(path + "#bogus=1", "w"),
                       ("w: selector = 'bogus' in '" + path + "#bogus=1' (must be column or encoding, as in "
                        "FILE#column=NAME[,encoding=SPELLING])").c_str(), InputError);
  std::remove(path.c_str());
}
