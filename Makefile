# One-command entry points. `make run` and `make test` work on a fresh Debian machine
# (root, or with sudo): they install what is missing, build in Release, then run.
BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
ROPEKIT = $(BUILD)/ropekit

.PHONY: all deps configure build build-cli run test bench clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release > /dev/null

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

bench:
	@ROPEKIT_BENCH_DEPS=1 bash scripts/install-deps.sh
	@$(MAKE) --no-print-directory build
	@bash bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD)
