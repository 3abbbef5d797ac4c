#!/usr/bin/env bash
# Emulated float32/bf16/fp16 arithmetic gives the same bits whatever the build flags (issue 32): the
# same float32 tables from two builds (make test-portable: the native build and the portable one), compared byte for
# byte on each of vecmath's paths. Usage: same_bits_across_builds.sh <ropekit A> <ropekit B>
set -euo pipefail
a=$1 b=$2
commands=(
  # jordan positionwise: float32 scores (position, parameters, exp, shear powers, cos/sin, products in float32)
  "jordan positionwise --m 3 --c 1 --eta 0.1 --window 8192 --format csv"
  # scaled frequencies as torch computes them in float32, both conventions
  "frequencies --encoding rope:dim=128,base=1e4,scaling=yarn(factor=16,orig=4096) --float32 --format csv"
  "frequencies --encoding rope:dim=128,base=1e4,scaling=yarn(factor=16,orig=4096) --float32 --convention ggml --format csv"
  "frequencies --encoding rope:dim=128,base=500000,scaling=llama3(factor=8,orig=8192) --float32 --format csv"
  # the precision pipelines' held tables and scores in fp32, bf16, fp16, tf32
  "precision --encoding rope:dim=128,base=1e4 --positions 0,4095,400000,2300000,16777215 --format csv"
  "precision --encoding rope:dim=128,base=1e4 --dtype bf16 --lags 1 --positions 0,4095,400000,16777215 --format csv"
  "precision --encoding rope:dim=128,base=1e4 --dtype fp16 --positions 0,4095,60000 --format csv"
  "precision --encoding rope:dim=8,base=1e4 --dtype tf32 --positions 2049 --table --format csv"
  "precision --encoding rope:dim=64,base=150000,scaling=yarn(factor=32,orig=4096) --pipeline ggml --positions 4095,131071,16777215 --format csv"
)
status=0
paths=(scalar)
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && paths+=(avx2)         # vecmath's run-time checks
grep -qw avx512f /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo && paths+=(avx512)
for c in "${commands[@]}"; do
  read -r -a args <<<"$c"
  # Per vecmath path (the score rows also hold float64 sums of the path's sin/cos, which move with the path, not
  # with the build): both builds' bytes must agree.
  for path in "${paths[@]}"; do
    ref=$(ROPEKIT_SIMD=$path "$a" "${args[@]}")
    out=$(ROPEKIT_SIMD=$path "$b" "${args[@]}")
    if [ "$out" != "$ref" ]; then
      echo "differs between the builds (ROPEKIT_SIMD=$path): ropekit $c"
      diff <(echo "$ref") <(echo "$out") | head -n 6
      status=1
    fi
  done
done
[ $status -eq 0 ] && echo "${#commands[@]} float32 tables: the same bytes from both builds on each vector path (${paths[*]})"
exit $status
