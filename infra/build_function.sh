#!/usr/bin/env bash
# Build one Lambda function's bundle: infra/build_function.sh KIND OUT_DIR (KIND: mcp | api | notifier | sweeper).
# `sam build` calls it through infra/Makefile from a scratch copy of functions/; run by hand it
# works from any folder that holds the countersign package (it looks in ./ then in functions/).
#
#   1. the function's own requirements (requirements-KIND.txt), as manylinux aarch64 wheels for
#      CPython 3.12, cross-installed (the build machine may be x86_64; no Docker needed); the few
#      pure-Python ones published only as source (source-only.txt) are made into wheels first;
#   2. the countersign package, without caches;
#   3. bytecode precompiled with python3.12 and unchecked hashes (precompile.sh): `sam build`
#      ships no .pyc and zips files dated 1980, so without this every cold start recompiles.
#
# Needs a working python3.12 (the runtime's minor version: .pyc files are version-specific).
# Set PYTHON=/path/to/python3.12 if it is not on PATH.
set -euo pipefail

kind=${1:?usage: build_function.sh mcp|api|notifier|sweeper OUT_DIR}
out=${2:?usage: build_function.sh mcp|api|notifier|sweeper OUT_DIR}
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
requirements="$here/requirements-$kind.txt"
[ -f "$requirements" ] || { echo "build_function.sh: no $requirements" >&2; exit 2; }

PYTHON=${PYTHON:-python3.12}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' >/dev/null 2>&1; then
  echo "build_function.sh: '$PYTHON' is not a working Python 3.12, the Lambda runtime's version." >&2
  echo "  It compiles the bytecode the functions ship. Put python3.12 on PATH or set PYTHON=..." >&2
  exit 1
fi

if [ -d countersign ]; then src=countersign; else src="$here/../functions/countersign"; fi
[ -f "$src/__init__.py" ] || { echo "build_function.sh: cannot find the countersign package" >&2; exit 2; }

mkdir -p "$out"
# Pure-Python packages published only as source (source-only.txt): their wheels made here first,
# for any platform, so the cross-install below (wheels only) finds them.
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
names=$(grep -v '^#' "$here/source-only.txt" | paste -sd'|' -)
source_only=$(grep -iE "^(${names})==" "$requirements" || true)
if [ -n "$source_only" ]; then
  # shellcheck disable=SC2086  # one pin per word
  "$PYTHON" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$wheels" $source_only
fi
# Lambda's python3.12 runs on Amazon Linux 2023 (glibc 2.34): any manylinux wheel up to 2_34.
"$PYTHON" -m pip install --quiet --disable-pip-version-check --no-compile --upgrade \
  --target "$out" --implementation cp --python-version 3.12 --only-binary=:all: --find-links "$wheels" \
  --platform manylinux_2_34_aarch64 --platform manylinux_2_28_aarch64 \
  --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 \
  -r "$requirements"

"$PYTHON" - "$src" "$out/countersign" <<'PY'
import shutil, sys
shutil.rmtree(sys.argv[2], ignore_errors=True)
shutil.copytree(sys.argv[1], sys.argv[2], ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
PY

# Nothing the function runs: pip's scripts and test suites some wheels carry.
rm -rf "$out/bin"

PYTHON="$PYTHON" bash "$here/precompile.sh" "$out"
