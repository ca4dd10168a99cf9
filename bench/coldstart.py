"""Cold-start bench: how long each Lambda entry module takes to import in a fresh interpreter
with the environment of a deployed function (``AWS_LAMBDA_FUNCTION_NAME`` set, so Powertools and
the project's own observability behave as on Lambda), beside "hello" handlers measured in the
same run, interleaved, with and without precompiled bytecode:

* ``hello``: a bare FastAPI + Mangum handler; ``hello_mcp``: a bare MCP SDK stateless
  Streamable HTTP app with one trivial tool under Mangum;
* ``hello_aws`` / ``hello_mcp_aws``: the same, plus what any such function on AWS builds at
  import: a boto3 DynamoDB client and a Powertools Logger and Metrics. The ratio to these is the
  project's own share.

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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

AWS_PART = '''
import boto3
from aws_lambda_powertools import Logger, Metrics

ddb = boto3.client("dynamodb")
logger = Logger(service="hello")
metrics = Metrics(namespace="hello", service="hello")
'''

HELLO_MCP = '''from mangum import Mangum
from mcp.server.mcpserver import MCPServer

server = MCPServer("hello")


@server.tool()
def ping() -> str:
    return "pong"


app = server.streamable_http_app(stateless_http=True, json_response=True)
handler = Mangum(app, lifespan="off")
'''

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
    ("hello_aws (+ boto3 client, Logger, Metrics)", "hello_aws"),
    ("hello_mcp (MCP SDK stateless + Mangum)", "hello_mcp"),
    ("hello_mcp_aws (+ boto3 client, Logger, Metrics)", "hello_mcp_aws"),
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
    (target / "hello_aws.py").write_text(HELLO + AWS_PART)
    (target / "hello_mcp.py").write_text(HELLO_MCP)
    (target / "hello_mcp_aws.py").write_text(HELLO_MCP + AWS_PART)


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
        # what the Lambda runtime sets: Powertools and countersign.observability take it as "on Lambda"
        AWS_LAMBDA_FUNCTION_NAME="countersign-bench",
        LAMBDA_TASK_ROOT=str(bundle),
        AWS_EXECUTION_ENV="AWS_Lambda_python3.12",
    )
    if not precompiled:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def once(module: str, env: dict[str, str]) -> tuple[float, float]:
    """(import ms measured inside the child, whole process ms measured outside) of one fresh interpreter."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-S", "-c", PROBE, module], env=env, capture_output=True, text=True,
                          timeout=300)
    whole = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"importing {module} failed:\n{done.stderr[-3000:]}")
    return float(done.stdout.strip().splitlines()[-1]) * 1000, whole


def measure(env: dict[str, str], runs: int) -> dict[str, tuple[float, float]]:
    """Median (import, whole process) ms per module: ``runs`` rounds, each module once per round
    (interleaved, so a busy moment of the machine touches every module alike), after one
    discarded round (OS file cache)."""
    times: dict[str, list[tuple[float, float]]] = {m: [] for _, m in MODULES}
    for attempt in range(runs + 1):
        for _, module in MODULES:
            took = once(module, env)
            if attempt:
                times[module].append(took)
    return {m: (statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts)) for m, ts in times.items()}


BASELINE = {"countersign.handlers.mcp": "hello_mcp_aws", "hello_mcp": "hello", "hello_mcp_aws": "hello_mcp"}


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
        print(f"Python {sys.version.split()[0]}, {runs} fresh interpreters per cell, interleaved; "
              f"AWS_LAMBDA_FUNCTION_NAME set; bundle: {sum(1 for _ in source.rglob('*.py'))} .py files "
              f"({pyc} precompiled)\n")
        results: dict[tuple[str, str], tuple[float, float]] = {}
        for mode, bundle, precompiled in (("precompiled", compiled, True), ("source only", source, False)):
            data = work / f"data-{mode.split()[0]}"
            for module, took in measure(function_env(bundle, data, precompiled), runs).items():
                results[(mode, module)] = took
        if any(source.rglob("*.pyc")):
            print("warning: the source-only bundle gained .pyc files; its numbers are not source-only\n")

        header = (f"{'entry module':48} {'bytecode':12} {'import ms':>9} {'process ms':>10} {'x its AWS hello':>16} "
                  f"{'x bare hello':>13}")
        print(header)
        print("-" * len(header))
        for mode in ("precompiled", "source only"):
            for label, module in MODULES:
                ms, whole = results[(mode, module)]
                aws = BASELINE.get(module, "hello_aws" if module.startswith("countersign") else "hello")
                bare = "hello_mcp" if module == "countersign.handlers.mcp" else "hello"
                print(f"{label:48} {mode:12} {ms:9.0f} {whole:10.0f} {whole / results[(mode, aws)][1]:16.2f} "
                      f"{whole / results[(mode, bare)][1]:13.2f}")
        print("\nRatios are of whole-process times. x its AWS hello: countersign's handlers against the hello that "
              "also builds a boto3 DynamoDB client, Logger and Metrics (mcp: the MCP SDK one); the hellos' rows "
              "show what each addition costs. x bare hello: against FastAPI + Mangum (mcp: the MCP SDK hello).")
        print(json.dumps({f"{mode}:{module}": [round(ms, 1), round(whole, 1)]
                          for (mode, module), (ms, whole) in results.items()}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
