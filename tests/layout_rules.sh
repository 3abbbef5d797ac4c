#!/usr/bin/env bash
# The layout's dependency rule (README.md, Layout), as a CTest entry: lib/ includes neither reports/, probes/,
# cli/ nor yaml-cpp or CLI11; reports/ and targets/ include neither probes/ nor cli/; config/ no reports/, probes/
# or cli/; probes/ no cli/; only
# lib/ropekit/fit/param_fit.cpp includes Ceres. Prints each offending
# line as file:line:text and fails if there is one.
# Usage: tests/layout_rules.sh [repository root]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

sources=(--include='*.hpp' --include='*.cpp' --include='*.h' --include='*.hh' --include='*.cc' --include='*.ipp'
         --include='*.inl')
include='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]'
status=0

# check <directory> <what it may not include> <included path pattern>
check() {
  local hits
  hits=$(grep -rnE "${sources[@]}" "${include}($3)" "$1" || true)
  if [[ -n $hits ]]; then
    echo "layout rule broken: $1 includes $2:"
    echo "$hits"
    status=1
  fi
}

check lib 'reports/, probes/, cli/, config/, yaml-cpp or CLI11' 'reports/|probes/|cli/|config/|yaml-cpp/|CLI/'
check reports 'probes/ or cli/' 'probes/|cli/'
check targets 'probes/ or cli/' 'probes/|cli/'
# The YAML run-config reader (config/) sits on the library only; the probes use it, never the command line.
check config 'reports/, probes/, cli/ or CLI11' 'reports/|probes/|cli/|CLI/'
check probes 'cli/ or CLI11' 'cli/|CLI/'
# The Python module binds the library, never the command line (issue 10) nor the YAML reader.
check python 'reports/, probes/, cli/ or config/' 'reports/|probes/|cli/|config/'

# Ceres stays inside one source file (issue 8: inputs are validated there before Ceres, which aborts on misuse).
ceres_hits=$(grep -rlE "${sources[@]}" "${include}ceres/" lib reports targets cli probes tests | grep -v '^lib/ropekit/fit/param_fit.cpp$' || true)
if [[ -n $ceres_hits ]]; then
  echo "layout rule broken: only lib/ropekit/fit/param_fit.cpp may include ceres/:"
  echo "$ceres_hits"
  status=1
fi

[[ $status == 0 ]] && echo "layout rules hold"
exit $status
