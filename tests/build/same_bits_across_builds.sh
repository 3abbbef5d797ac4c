#!/usr/bin/env bash
# Emulated float32/bf16/fp16 arithmetic gives the same bits whatever the build flags and vector path (issue 32): the
# same float32 tables from two builds (make test-portable: the native build and the portable one) and from each of
# vecmath's paths, compared byte for byte. Usage: same_bits_across_builds.sh <ropekit A> <ropekit B>
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
for c in "${commands[@]}"; do
  read -r -a args <<<"$c"
  ref=$(ROPEKIT_SIMD=scalar "$a" "${args[@]}")
  for run in "$a avx2" "$a avx512" "$b scalar" "$b avx2" "$b avx512"; do
    read -r bin path <<<"$run"
    # a path the CPU lacks (vecmath's run-time check: avx2 with fma, avx512 with f and dq) is skipped
    case $path in
      avx2) grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo || continue ;;
      avx512) grep -qw avx512f /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo || continue ;;
    esac
    out=$(ROPEKIT_SIMD=$path "$bin" "${args[@]}")
    if [ "$out" != "$ref" ]; then
      echo "differs ($bin, ROPEKIT_SIMD=$path; reference: $a scalar): ropekit $c"
      diff <(echo "$ref") <(echo "$out") | head -n 6
      status=1
    fi
  done
done
[ $status -eq 0 ] && echo "${#commands[@]} float32 tables: the same bytes from both builds on every vector path"
exit $status
