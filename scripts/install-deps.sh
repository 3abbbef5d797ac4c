#!/usr/bin/env bash
# Installs the Debian packages ropekit builds against, if any is missing.
# Runs as root, or through sudo. Quiet when everything is already there.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libeigen3-dev libboost-math-dev libceres-dev libfmt-dev doctest-dev
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libsleef-dev
  # The Python module (pybind11), its tests (pytest, pandas, Dask's distributed) and pip install from the checkout.
  python3-dev pybind11-dev python3-numpy python3-pytest python3-pandas python3-distributed python3-setuptools
  python3-pip
  # Figures: ropekit.plot draws on matplotlib; the tests render the command line's SVG to PNG with rsvg-convert.
  python3-matplotlib librsvg2-bin
  # The tests open `ropekit report --format html`'s page in a headless browser (python/tests/test_report.py).
  chromium
  # The locale sources, from which a test compiles de_DE (a decimal comma) to check numbers ignore LC_NUMERIC.
  locales
)
[ "${ROPEKIT_BENCH_DEPS:-0}" = 1 ] && packages+=(hyperfine python3-numpy python3-torch)
# make fuzz: clang++ with libFuzzer and the sanitizer runtimes (Debian 12's clang 14).
[ "${ROPEKIT_FUZZ_DEPS:-0}" = 1 ] && packages+=(clang libclang-rt-14-dev)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
  echo "error: missing Debian packages: ${missing[*]} (run as root, or install sudo)" >&2; exit 2
fi
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >&2
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
