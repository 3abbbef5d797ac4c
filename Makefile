# One-command entry points. `make run` and `make test` work on a fresh Debian machine
# (root, or with sudo): they install what is missing, build in Release, then run.
BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
ROPEKIT = $(BUILD)/ropekit

# Robustness builds, each in its own directory: sanitizers (g++) and libFuzzer (clang++).
ASAN_BUILD   ?= build-asan
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
export FUZZ_SECONDS

.PHONY: all deps configure build build-cli build-install run test test-portable bench install sanitize fuzz clean

all: build

deps:
	@bash scripts/install-deps.sh

# CMAKE_ARGS: more options for a new build directory (test-portable passes -DROPEKIT_NATIVE=OFF).
$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) > /dev/null

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory

build-cli: configure
	@cmake --build $(BUILD) -j $(JOBS) --target ropekit -- --no-print-directory

# The main job: every built-in probe, reports under reports/out/.
run: build-cli
	@$(ROPEKIT) probe --all --out-dir reports/out

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The suite again on a portable build (no -march=native: SSE2 code outside vecmath's per-ISA files) in its own
# directory, with vecmath's kernels forced to the AVX2 path (a CPU without AVX-512, as users' AMD machines), then the
# Python suite on the scalar path: what holds on the build machine's CPU must hold on every x86-64 (CI runs both).
# Last, the float32 emulations' tables from both builds, compared byte for byte. On a CPU without AVX2 the first
# run takes the scalar path too.
PORTABLE_BUILD ?= build-portable
PORTABLE_SIMD ?= $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && echo avx2 || echo scalar)
test-portable: deps
	@$(MAKE) --no-print-directory build BUILD=$(PORTABLE_BUILD) CMAKE_ARGS=-DROPEKIT_NATIVE=OFF
	@cd $(PORTABLE_BUILD) && ROPEKIT_SIMD=$(PORTABLE_SIMD) ctest --output-on-failure -j $(JOBS)
	@cd $(PORTABLE_BUILD) && ROPEKIT_SIMD=scalar ctest --output-on-failure -R '^python_tests$$'
	@$(MAKE) --no-print-directory build-cli
	@bash tests/make/same_bits_across_builds.sh $(BUILD)/ropekit $(PORTABLE_BUILD)/ropekit

# The command, its Ceres module, the library, headers and CMake package under PREFIX (default /usr/local): builds
# what it installs (INSTALL_TARGETS), not the test suite.
PREFIX ?= /usr/local
INSTALL_TARGETS = ropekit ropekit_ceres ropekit_lib
build-install: configure
	@cmake --build $(BUILD) -j $(JOBS) --target $(INSTALL_TARGETS) -- --no-print-directory
install: build-install
	@cmake --install $(BUILD) --prefix $(PREFIX)

bench:
	@ROPEKIT_BENCH_DEPS=1 bash scripts/install-deps.sh
	@$(MAKE) --no-print-directory build
	@bash bench/run.sh $(BUILD)

# The whole test suite (doctest files and the fuzz corpus replays) under ASan + UBSan.
sanitize: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROPEKIT_SANITIZE=ON > /dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS) -- --no-print-directory
	@cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

# Each fuzz harness for FUZZ_SECONDS (FUZZ_MERGE=1 keeps new coverage in the corpus; see tests/fuzz/run.sh).
fuzz:
	@ROPEKIT_FUZZ_DEPS=1 bash scripts/install-deps.sh
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DROPEKIT_FUZZ=ON > /dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(patsubst tests/fuzz/%.cpp,%,$(wildcard tests/fuzz/fuzz_*.cpp)) -- --no-print-directory
	@bash tests/fuzz/run.sh $(FUZZ_BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
