#!/usr/bin/env bash
# Precompile bytecode into Lambda bundles: infra/precompile.sh [DIR...]
# (default: every .aws-sam/build/*Function). build_function.sh already runs it during
# `sam build`; run it again by hand only for a bundle built some other way.
#
# unchecked-hash .pyc files are used as they are, whatever the source files' dates (sam build
# zips them dated 1980): the MCP function's imports went from ~3.8 s to ~1.7 s (aws.md §9).
# Must run with the runtime's minor version (python3.12); .pyc files do not depend on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.12}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' >/dev/null 2>&1; then
  echo "precompile.sh: '$PYTHON' is not a working Python 3.12 (set PYTHON=/path/to/python3.12)" >&2
  exit 1
fi
if [ "$#" -eq 0 ]; then
  set -- .aws-sam/build/*Function
  [ -d "$1" ] || { echo "precompile.sh: nothing built yet (run sam build)" >&2; exit 1; }
fi
for dir in "$@"; do
  # A few wheels carry files that are not Python 3.12 source (templates, py2 examples):
  # compileall names them and goes on; everything importable is compiled.
  "$PYTHON" -m compileall -q -j 0 --invalidation-mode unchecked-hash "$dir" >/dev/null || \
    echo "precompile.sh: some files in $dir did not compile (not imported by the function)" >&2
  echo "precompiled $(find "$dir" -name '*.pyc' | wc -l) modules in $dir"
done
