#!/usr/bin/env bash
# make fuzz: runs each libFuzzer harness of BUILD_DIR (built with -DROPEKIT_FUZZ=ON) for FUZZ_SECONDS,
# starting from the committed corpus tests/fuzz/corpus/<harness>/.
#   FUZZ_SECONDS=60       time per harness
#   FUZZ_HARNESSES="..."  a subset, e.g. "spectrum method" (default: every fuzz_*.cpp)
#   FUZZ_MERGE=1          afterwards, merge the new inputs that add coverage into tests/fuzz/corpus/<harness>/
#                         (to be reviewed and committed); by default they stay in BUILD_DIR/fuzz-corpus/
#   FUZZ_FLAGS="..."      extra libFuzzer flags, e.g. "-fork=1 -ignore_crashes=1" to go on past a crash
# Crashes, sanitizer reports, timeouts (10 s per input) and out-of-memory (2 GB) are saved as
# BUILD_DIR/fuzz-artifacts/<harness>/crash-* (timeout-*, oom-*); the script exits 1 if any harness found one.
set -uo pipefail

build=${1:-build-fuzz}
here=$(cd "$(dirname "$0")" && pwd)
seconds=${FUZZ_SECONDS:-60}
harnesses=${FUZZ_HARNESSES:-$(cd "$here" && ls fuzz_*.cpp | sed 's/^fuzz_//; s/\.cpp$//')}
failed=()

for h in $harnesses; do
  exe="$build/fuzz_$h"
  [ -x "$exe" ] || { echo "error: $exe not built (make fuzz builds it)" >&2; exit 2; }
  work="$build/fuzz-corpus/$h" artifacts="$build/fuzz-artifacts/$h"
  mkdir -p "$work" "$artifacts"
  dict=()
  [ -f "$here/dict/$h.dict" ] && dict=(-dict="$here/dict/$h.dict")
  echo "== fuzz_$h: $seconds s (new inputs: $work, crashes: $artifacts/)" >&2
  # New inputs go to the first directory only: the committed corpus is read, never written, here.
  # shellcheck disable=SC2086
  if ! "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -print_funcs=0 \
       -artifact_prefix="$artifacts/" "${dict[@]}" ${FUZZ_FLAGS:-} "$work" "$here/corpus/$h" \
       2> "$build/fuzz-$h.log"; then
    failed+=("$h")
    grep -E "BUG|ERROR|SUMMARY|Test unit written" "$build/fuzz-$h.log" | head -5 >&2
  fi
  grep -E "^#[0-9]+" "$build/fuzz-$h.log" | tail -n 1 | sed 's/^/   /' >&2
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    "$exe" -merge=1 -timeout=10 -rss_limit_mb=2048 "$here/corpus/$h" "$work" 2>> "$build/fuzz-$h.log"
    echo "   merged into tests/fuzz/corpus/$h/ (review and commit)" >&2
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: found problems in: ${failed[*]}; reproducers under $build/fuzz-artifacts/, logs $build/fuzz-<harness>.log" >&2
  echo "      add each to tests/fuzz/corpus/<harness>/ as crash-<what> once fixed (docs/how-to/fuzzing-sanitizers.md)" >&2
  exit 1
fi
echo "fuzz: no problems found" >&2
