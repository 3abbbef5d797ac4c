#!/usr/bin/env bash
# `make install` builds what it installs (issue 32: it built the whole test suite first, most of an hour on two
# cores). Configures a scratch build directory, takes the build command the Makefile's install recipe runs, and
# asks the generated build system what it would compile for it (make -n): the command's and the library's
# sources (the command's own main.cpp is not listed: a dry run cannot link the libraries it needs), and no test
# source. Usage: install_builds_what_it_installs.sh <source dir> <scratch dir>
set -euo pipefail
src=$1 scratch=$2
rm -rf "$scratch"
cmake -S "$src" -B "$scratch" -DCMAKE_BUILD_TYPE=Release > /dev/null
# The recipe as make would run it (make -n prints the recipes of install and of what it depends on).
build_line=$(make -s -n -C "$src" install BUILD="$scratch" PREFIX="$scratch/prefix" | grep -E '^cmake --build ' | head -n 1)
[ -n "$build_line" ] || { echo "make install runs no 'cmake --build' command"; exit 1; }
echo "install's build: $build_line"
# -n -k after the recipe's '--': the underlying make's dry run, going on past the links a dry run cannot make.
plan=$(cd "$src" && eval "$build_line -n -k" 2>&1 || true)
compiled=$(grep -oE '[^ ]+\.cpp\.o' <<<"$plan" | sort -u)
status=0
for must in cli/cli.cpp lib/ropekit/encoding.cpp lib/ropekit/fit/param_fit.cpp; do
  grep -qF "$must.o" <<<"$compiled" || { echo "install would not build $must"; status=1; }
done
if grep -E '(^|/)tests/' <<<"$compiled" | head -n 3 | grep .; then
  echo "install would build the test suite (above)"; status=1
fi
rm -rf "$scratch"
exit $status
