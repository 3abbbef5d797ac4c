#!/usr/bin/env bash
# The layout's rules (docs/dev/architecture.md), as a CTest entry: lib/ includes neither reports/, probes/,
# cli/, config/ nor yaml-cpp or CLI11; reports/ and targets/ include neither probes/ nor cli/; config/ no reports/,
# probes/ or cli/; probes/ no cli/; only lib/ropekit/fit/param_fit.cpp includes Ceres; no library source file over
# 700 lines and encoding.cpp (the families' dispatch) at most 500; no std::visit over the encoding variant with a
# generic (auto) overload, so a new family without its overload is a compile error (issue 19), and visits over the
# scheme and spectrum variants go through their concept-constrained lambdas; library folders include only lower
# floors (core, spectral, encodings, lie and models, then mc fit precision design frameworks, then commands), nd -> lie the
# one exception. Prints each offence
# and fails if there is one.
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
# The Python module binds the library, never the command line (issue 10) nor the YAML reader; it renders with
# reports/ as the command line does (ropekit.report's page).
check python 'probes/, cli/ or config/' 'probes/|cli/|config/'

# Ceres stays inside one source file (issue 8: inputs are validated there before Ceres, which aborts on misuse).
ceres_hits=$(grep -rlE "${sources[@]}" "${include}ceres/" lib reports targets cli probes tests | grep -v '^lib/ropekit/fit/param_fit.cpp$' || true)
if [[ -n $ceres_hits ]]; then
  echo "layout rule broken: only lib/ropekit/fit/param_fit.cpp may include ceres/:"
  echo "$ceres_hits"
  status=1
fi

# File sizes (issue 19): one concept per file.
while IFS= read -r file; do
  lines=$(wc -l < "$file")
  limit=700
  [[ $file == lib/ropekit/encoding.cpp ]] && limit=500
  if (( lines > limit )); then
    echo "layout rule broken: $file has $lines lines (at most $limit)"
    status=1
  fi
done < <(find lib -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.inl' \) | sort)

# No catch-all over the encoding variant: a std::visit whose variant argument is an encoding's `.value` (or whose
# overloads name enc:: families) has one overload per family and none taking `auto` (nested visits over other
# variants are judged on their own).
if ! visit_hits=$(python3 - lib cli probes reports targets python/src <<'PY'
import pathlib, re, sys
generic = re.compile(r"\]\s*(\([^()]*\)\s*)?\(\s*(const\s+)?auto\b[^)]*\)")
found = False
for root in sys.argv[1:]:
    for path in sorted(pathlib.Path(root).rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".h", ".inl") or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        calls = []
        for m in re.finditer(r"std::visit\s*\(", text):
            depth, i = 1, m.end()
            while i < len(text) and depth:
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
            calls.append((m.start(), i))
        for start, end in calls:
            body = text[start:end]
            for s2, e2 in calls:  # drop nested visits: they are checked themselves
                if start < s2 and e2 <= end:
                    body = body.replace(text[s2:e2], "")
            last = body[:-1].rsplit(",", 1)[-1].strip()
            over_encoding = re.search(r"(\.|->)value$", last) or "enc::" in body
            if over_encoding and generic.search(body):
                line = text.count("\n", 0, start) + 1
                print(f"{path}:{line}: std::visit over the encoding variant with a generic (auto) overload")
                found = True
            # Scheme and spectrum visits forward to each alternative's own function through a lambda constrained
            # by the ScalingScheme / SpectralFamily concept (a scheme lacking a function fails to compile); a
            # plain auto lambda there could hide a default.
            elif ("scaling::" in body or "spectral::" in body) and generic.search(body):
                line = text.count("\n", 0, start) + 1
                print(f"{path}:{line}: std::visit over a scheme or spectrum with an unconstrained (auto) overload")
                found = True
sys.exit(1 if found else 0)
PY
); then
  echo "layout rule broken: every visit over the encoding variant names each family, and scheme and spectrum visits are concept-constrained (no auto overload):"
  echo "$visit_hits"
  status=1
fi

# Floors of the library's folders (issue 33): a folder includes only folders on lower floors (and itself). The one
# allowed arrow back up: N-D RoPE is an encoding family whose generators live in lie/ (encodings/nd.{hpp,cpp} and
# encoding.hpp, which holds the family in its variant, include lie/).
if ! floor_hits=$(python3 - <<'PY'
import pathlib, re
# encoding.{hpp,cpp} (the families' dispatch) counts with encodings/: the families still include it (issue 33).
floor = {"core": 0, "spectral": 1, "encodings": 2, "version": 0, "lie": 3, "models": 3,
         "mc": 4, "fit": 4, "precision": 4, "design": 4, "frameworks": 4, "commands": 5}
allowed_up = {("lib/ropekit/encodings/nd.hpp", "lie"), ("lib/ropekit/encodings/nd.cpp", "lie"),
              ("lib/ropekit/encoding.hpp", "lie")}
inc = re.compile(r'^\s*#\s*include\s*"ropekit/([a-z_]+)(/|\.hpp)', re.M)
found = False
for path in sorted(pathlib.Path("lib/ropekit").rglob("*")):
    if path.suffix not in (".cpp", ".hpp") or not path.is_file():
        continue
    parts = path.relative_to("lib/ropekit").parts
    own = parts[0] if len(parts) > 1 else path.stem
    own = "encodings" if own == "encoding" else own
    if own not in floor:
        print(f"{path}: folder {own}/ has no floor in tests/layout_rules.sh")
        found = True
        continue
    for m in inc.finditer(path.read_text(errors="replace")):
        other = "encodings" if m.group(1) == "encoding" else m.group(1)
        if other == own or (other in floor and floor[other] < floor[own]):
            continue
        if (str(path), other) in allowed_up:
            continue
        line = path.read_text(errors="replace").count("\n", 0, m.start()) + 1
        print(f"{path}:{line}: includes ropekit/{other} (floor {floor.get(other, '?')}) from {own}/ (floor {floor[own]})")
        found = True
raise SystemExit(1 if found else 0)
PY
); then
  echo "layout rule broken: a library folder includes one on its own floor or above (floors: core, spectral, encodings, lie and models, then mc fit precision design frameworks, then commands):"
  echo "$floor_hits"
  status=1
fi

[[ $status == 0 ]] && echo "layout rules hold"
exit $status
