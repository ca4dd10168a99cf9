"""Cold-start bench: how long each Lambda entry module takes to import in a fresh interpreter,
beside a bare FastAPI + Mangum "hello" handler measured in the same run, with and without
precompiled bytecode.

    .venv/bin/python bench/coldstart.py [RUNS]        (default 5)

It lays out two bundles in a temporary folder, the way infra/build_function.sh does for Lambda
but from this virtualenv's installed files (this machine's wheels, not arm64 ones): the
countersign package plus every distribution infra/requirements-*.txt brings in, plus
``hello.py``.

* **precompiled**: ``compileall --invalidation-mode unchecked-hash`` over the bundle (what the
  build ships);
* **source only**: no ``.pyc`` at all and ``PYTHONDONTWRITEBYTECODE=1`` (what ``sam build``
  alone ships: Lambda's code folder is read-only, so every cold start compiles again).

Each import runs in a fresh ``python -S`` whose only path to third-party code is the bundle, with
the environment of a deployed function: a DynamoDB store (the boto3 client is built at import,
which makes no request; the endpoint points at a closed local port to be sure), keys given in
the environment rather than by Secrets Manager ARN, SES mail. The time is measured inside the
child around the ``import`` statement; the median of RUNS is shown, and its ratio to the hello
handler's. Absolute numbers depend on the machine; the ratios travel better. It asserts nothing.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HELLO = '''from fastapi import FastAPI
from mangum import Mangum

app = FastAPI()


@app.get("/hello")
def hello() -> dict:
    return {"hello": "world"}


handler = Mangum(app, lifespan="off")
'''

MODULES = [
    ("hello (FastAPI + Mangum)", "hello"),
    ("api  countersign.handlers.api", "countersign.handlers.api"),
    ("mcp  countersign.handlers.mcp", "countersign.handlers.mcp"),
    ("notifier  countersign.handlers.notifier", "countersign.handlers.notifier"),
    ("sweeper  countersign.handlers.sweeper", "countersign.handlers.sweeper"),
]

PROBE = """
import sys, time
started = time.perf_counter()
module = __import__(sys.argv[1], fromlist=["handler"])
took = time.perf_counter() - started
assert callable(module.handler)
print(took)
"""


def closure(requirement_files: list[Path]) -> set[str]:
    """Every installed distribution the requirement files bring in."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    todo = [Requirement(line.split("#")[0].strip()) for path in requirement_files
            for line in path.read_text().splitlines() if line.split("#")[0].strip()]
    seen: set[str] = set()
    names: set[str] = set()
    while todo:
        req = todo.pop()
        key = f"{canonicalize_name(req.name)}{sorted(req.extras)}"
        if key in seen:
            continue
        seen.add(key)
        names.add(req.name)
        for raw in md.requires(req.name) or []:
            dep = Requirement(raw)
            if dep.marker is None or any(dep.marker.evaluate({"extra": e}) for e in (req.extras or {""})):
                todo.append(dep)
    return names


def lay_out(target: Path) -> None:
    """countersign + the functions' dependencies + hello.py, without any .pyc."""
    target.mkdir(parents=True)
    for name in sorted(closure(sorted((ROOT / "infra").glob("requirements-*.txt")))):
        dist = md.distribution(name)
        for file in dist.files or []:
            if "__pycache__" in file.parts or file.suffix == ".pyc" or ".." in file.parts:
                continue
            source = Path(dist.locate_file(file))
            if source.is_file():
                dest = target / file
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest)
    shutil.copytree(ROOT / "functions" / "countersign", target / "countersign",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (target / "hello.py").write_text(HELLO)


def function_env(bundle: Path, data: Path, precompiled: bool) -> dict[str, str]:
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}
    env.update(
        PYTHONPATH=str(bundle),
        COUNTERSIGN_STORE="dynamodb://countersign-bench",
        COUNTERSIGN_PUBLIC_URL="https://d111111abcdef8.cloudfront.net",
        COUNTERSIGN_MAIL="ses:countersign@example.com",
        COUNTERSIGN_SIGNING_KEY=secrets.token_urlsafe(48),
        COUNTERSIGN_STATE_KEYS=secrets.token_urlsafe(48),
        COUNTERSIGN_DATA=str(data),
        COUNTERSIGN_BASE_PATH="/",
        POWERTOOLS_SERVICE_NAME="countersign",
        POWERTOOLS_METRICS_NAMESPACE="countersign",
        POWERTOOLS_LOG_LEVEL="WARNING",
        AWS_DEFAULT_REGION="eu-west-1",
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_ENDPOINT_URL="http://127.0.0.1:9",  # nothing is called at import; if it were, it fails here
        AWS_EC2_METADATA_DISABLED="true",
    )
    if not precompiled:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def measure(module: str, env: dict[str, str], runs: int) -> list[float]:
    """Import times (ms) of ``runs`` fresh interpreters, after one discarded warm-up (OS file cache)."""
    times = []
    for attempt in range(runs + 1):
        done = subprocess.run([sys.executable, "-S", "-c", PROBE, module], env=env, capture_output=True, text=True,
                              timeout=300)
        if done.returncode != 0:
            raise SystemExit(f"importing {module} failed:\n{done.stderr[-3000:]}")
        if attempt:
            times.append(float(done.stdout.strip().splitlines()[-1]) * 1000)
    return times


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    work = Path(tempfile.mkdtemp(prefix="countersign-coldstart-"))
    try:
        source, compiled = work / "source", work / "precompiled"
        lay_out(source)
        shutil.copytree(source, compiled)
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash",
                        str(compiled)], capture_output=True)
        pyc = sum(1 for _ in compiled.rglob("*.pyc"))
        print(f"Python {sys.version.split()[0]}, {runs} fresh interpreters per cell; bundle: "
              f"{sum(1 for _ in source.rglob('*.py'))} .py files ({pyc} precompiled)\n")
        results: dict[tuple[str, str], float] = {}
        for mode, bundle, precompiled in (("precompiled", compiled, True), ("source only", source, False)):
            data = work / f"data-{mode.split()[0]}"
            for _, module in MODULES:
                results[(mode, module)] = statistics.median(
                    measure(module, function_env(bundle, data, precompiled), runs)
                )
        if any(source.rglob("*.pyc")):
            print("warning: the source-only bundle gained .pyc files; its numbers are not source-only\n")

        header = f"{'entry module':40} {'bytecode':12} {'median ms':>10} {'x hello':>8} {'x precompiled':>14}"
        print(header)
        print("-" * len(header))
        for mode in ("precompiled", "source only"):
            hello = results[(mode, "hello")]
            for label, module in MODULES:
                ms = results[(mode, module)]
                own = ms / results[("precompiled", module)]
                print(f"{label:40} {mode:12} {ms:10.0f} {ms / hello:8.2f} {own:14.2f}")
        print("\nx hello: against the bare FastAPI + Mangum handler with the same bytecode; x precompiled: "
              "against the same module precompiled.")
        print(json.dumps({f"{mode}:{module}": round(ms, 1) for (mode, module), ms in results.items()}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
