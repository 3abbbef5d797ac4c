#!/usr/bin/env bash
# make bench: in-process phase timings (ropekit_bench), then whole-process wall times of the
# fixed-basis suites (hyperfine), compared with the reference implementation's published times.
set -euo pipefail
build=${1:-build}
ropekit=$build/ropekit
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "# ropekit benchmarks ($(date -u +%Y-%m-%d), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'))"
echo
"$build/ropekit_bench"

echo "## whole process, wall time (hyperfine: 5 warm-up runs, 40 timed runs)"
echo
declare -a names=(table3 table11 tables6-16 jordan-probes)
declare -a cmds=(
  "$ropekit fit --config configs/paper-table3-toy.yaml --format csv --out $out/t3.csv"
  "$ropekit fit --config configs/paper-table11-structured.yaml --format csv --out $out/t11.csv"
  "$ropekit fit --config configs/paper-tables6-16-highjet.yaml --format csv --out $out/t6.csv"
  "$ropekit probe jordan-table3 jordan-table11 jordan-tables6-16 --out-dir $out/reports"
)
if command -v hyperfine >/dev/null; then
  args=()
  for i in "${!cmds[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
  hyperfine -N --warmup 5 --runs 40 --style none --export-markdown "$out/h.md" "${args[@]}" >/dev/null
  cat "$out/h.md"
  mean() { awk -F'|' -v n="\`$1\`" '$2 ~ n {gsub(/ /,"",$3); split($3,a,"±"); print a[1]}' "$out/h.md"; }
else
  echo "(hyperfine not installed: mean of 20 runs by date +%s%N)"
  declare -A ms
  for i in "${!cmds[@]}"; do
    t0=$(date +%s%N); for _ in $(seq 20); do ${cmds[$i]} >/dev/null; done; t1=$(date +%s%N)
    ms[${names[$i]}]=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", (b-a)/20/1e6}')
    echo "| ${names[$i]} | ${ms[${names[$i]}]} ms |"
  done
  mean() { echo "${ms[$1]}"; }
fi
echo
t0=$(date +%s%N); "$ropekit" probe rf-rope nd-rope jordan-positionwise --out-dir "$out/reports" >/dev/null; t1=$(date +%s%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "Monte Carlo and Lie probes (rf-rope, nd-rope, jordan-positionwise), one run: %.2f s\n", (b-a)/1e9 }'
echo
echo "Reference implementation (PyTorch, float32, plots off; times from the issue): Table 3 suite 2.5 s, Table 11 suite 3.4 s."
awk -v a="$(mean table3)" -v b="$(mean table11)" 'BEGIN {
  printf "Speed-up, whole process: Table 3 %.0fx (%.1f ms), Table 11 %.0fx (%.1f ms); the target is >= 50x.\n", 2500/a, a, 3400/b, b }'
