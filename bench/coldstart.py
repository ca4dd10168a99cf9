"""Cold-start bench: how long each Lambda entry module takes to import in a fresh interpreter
with the environment of a deployed function (``AWS_LAMBDA_FUNCTION_NAME`` set, so Powertools and
the project's own telemetry behave as on Lambda), beside "hello" handlers measured in the
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

Then the first requests, so that cost moved from the import to the first request shows: the MCP
function and ``hello_mcp_aws`` (precompiled), each imported in a fresh interpreter and handed
API Gateway REST API (1.0) events at once: ``tools/list`` then ``tools/call`` twice, and ``tools/call`` first.
The function's requests carry a real connection token, looked up in DynamoDB: moto's server on a
loopback port, with the stack's table (this needs the dev dependencies, as the tests do).
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
import bench_paths  # noqa: E402, F401  (the project first on sys.path, bench/ last)

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


async def serve(scope, receive, send):
    # as countersign's StatelessMCP: the SDK's session manager runs once, so each request gets its own;
    # behind API Gateway the Host is the execute-api name (DNS-rebinding protection is for workstations)
    from mcp.server.transport_security import TransportSecuritySettings

    fresh = server.streamable_http_app(stateless_http=True, json_response=True, transport_security=(
        TransportSecuritySettings(enable_dns_rebinding_protection=False)))
    async with fresh.router.lifespan_context(fresh):
        await fresh(scope, receive, send)


handler = Mangum(serve, lifespan="off")
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


REQUESTS_PROBE = """
import base64, json, sys, time
started = time.perf_counter()
module = __import__(sys.argv[1], fromlist=["handler"])
took = [time.perf_counter() - started]
token, tool, order = sys.argv[2], sys.argv[3], sys.argv[4].split(",")
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


class Context:
    function_name = "countersign-bench"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:countersign-bench"
    aws_request_id = "bench"

    def get_remaining_time_in_millis(self):
        return 30_000


def event(method, params, name):
    headers = {"host": "abc123.execute-api.eu-west-1.amazonaws.com", "content-type": "application/json",
               "accept": "application/json, text/event-stream", "authorization": "Bearer " + token,
               "mcp-protocol-version": "2026-07-28", "mcp-method": method}
    if name:
        headers["mcp-name"] = name
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": dict(params, _meta=META)})
    # A REST API's Lambda proxy event (payload 1.0), as the deployed stack sends it.
    return {"resource": "/mcp", "path": "/mcp", "httpMethod": "POST", "headers": headers,
            "multiValueHeaders": {k: [v] for k, v in headers.items()}, "queryStringParameters": None,
            "multiValueQueryStringParameters": None, "pathParameters": None, "stageVariables": None,
            "requestContext": {"accountId": "123456789012", "apiId": "abc123", "domainName": headers["host"],
                               "domainPrefix": "abc123", "requestId": "bench", "resourcePath": "/mcp",
                               "httpMethod": "POST", "path": "/origin/mcp", "stage": "origin",
                               "protocol": "HTTP/1.1", "requestTimeEpoch": int(time.time() * 1000),
                               "identity": {"sourceIp": "198.51.100.7", "userAgent": "bench"}},
            "body": body, "isBase64Encoded": False}


REQUESTS = {"list": ("tools/list", {}, None), "call": ("tools/call", {"name": tool, "arguments": {}}, tool)}
for method, params, name in map(REQUESTS.get, order):
    started = time.perf_counter()
    got = module.handler(event(method, params, name), Context())
    took.append(time.perf_counter() - started)
    body = base64.b64decode(got["body"]) if got.get("isBase64Encoded") else got["body"].encode()
    answer = json.loads(body)
    assert got["statusCode"] == 200 and "result" in answer and not answer["result"].get("isError"), body[:2000]
print(json.dumps(took))
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
        # what the Lambda runtime sets: Powertools and countersign.platform.telemetry take it as "on Lambda"
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
                          timeout=300, cwd=env["LAMBDA_TASK_ROOT"])  # where a Lambda starts
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


def loopback_dynamodb(table: str) -> tuple[object, str, str]:
    """(moto's server on a loopback port, its endpoint, an agent connection token): DynamoDB with the
    stack's table and one workspace, so the first-request probes go through the function's whole
    path (bearer token looked up in the store, the tool's own reads) over a real socket."""
    import logging
    import socket

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # not a line per request amid the tables

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    os.environ.update(AWS_ENDPOINT_URL=endpoint, AWS_DEFAULT_REGION="eu-west-1", AWS_ACCESS_KEY_ID="bench",
                      AWS_SECRET_ACCESS_KEY="bench", AWS_EC2_METADATA_DISABLED="true")
    import boto3

    from countersign.identity import accounts
    from countersign.store.opening import open_store
    from tests.support.aws import create_table_from_template

    create_table_from_template(boto3.client("dynamodb"), table)
    store = open_store(f"dynamodb://{table}")
    workspace, person = accounts.create_workspace(store.workspaces, "Bench", "bench@example.com")
    return server, endpoint, accounts.create_connection(store.workspaces, store.connections, workspace.id, person.id,
                                                        "bench").token


FIRST = [("hello_mcp_aws", "ping"), ("countersign.handlers.mcp", "get_credits")]
ORDERS = ("list,call,call", "call,list,call")


def first_requests(env: dict[str, str], token: str, runs: int) -> dict[tuple[str, str], list[float]]:
    """Median ms per (module, order) of (import, 1st, 2nd and 3rd request, whole process), one fresh
    interpreter each, interleaved, after one discarded round."""
    times: dict[tuple[str, str], list[list[float]]] = {(m, o): [] for m, _ in FIRST for o in ORDERS}
    for attempt in range(runs + 1):
        for order in ORDERS:
            for module, tool in FIRST:
                started = time.perf_counter()
                done = subprocess.run([sys.executable, "-S", "-c", REQUESTS_PROBE, module, token, tool, order],
                                      env=env, capture_output=True, text=True, timeout=300,
                                      cwd=env["LAMBDA_TASK_ROOT"])
                whole = (time.perf_counter() - started) * 1000
                if done.returncode != 0:
                    raise SystemExit(f"first requests of {module} failed:\n{done.stderr[-3000:]}")
                if attempt:
                    took = json.loads(done.stdout.strip().splitlines()[-1])
                    times[(module, order)].append([t * 1000 for t in took] + [whole])
    return {key: [statistics.median(column) for column in zip(*rows, strict=True)] for key, rows in times.items()}


def print_first_requests(results: dict[tuple[str, str], list[float]]) -> None:
    header = (f"{'entry module (precompiled)':34} {'requests':15} {'import':>7} {'1st':>7} {'2nd':>7} {'3rd':>7} "
              f"{'import+1st+2nd':>14} {'x hello':>8} {'process ms':>10} {'x hello':>8}")
    print(header)
    print("-" * len(header))
    for order in ORDERS:
        hello = results[(FIRST[0][0], order)]
        for module, tool in FIRST:
            got = results[(module, order)]
            first = sum(got[:3])
            print(f"{module + ' (' + tool + ')':34} {order:15} {got[0]:7.0f} {got[1]:7.1f} {got[2]:7.1f} {got[3]:7.1f} "
                  f"{first:14.0f} {first / sum(hello[:3]):8.2f} {got[4]:10.0f} {got[4] / hello[4]:8.2f}")
    print("\nms, medians; each request is a REST API (1.0) event handed to the module's handler in the same fresh "
          "interpreter right after its import (2026-07-28, stateless), in the order shown: a first tools/list "
          "builds every tool, a first tools/call only its own. countersign's requests carry a connection token, "
          "looked up in DynamoDB (moto's server on loopback), and get_credits reads the store; the hello's ping "
          "reads nothing.")


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
        server, endpoint, token = loopback_dynamodb("countersign-bench")
        try:
            env = dict(function_env(compiled, work / "data-first", True), AWS_ENDPOINT_URL=endpoint)
            first = first_requests(env, token, runs)
        finally:
            server.stop()  # type: ignore[attr-defined]
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
        print()
        print_first_requests(first)
        print(json.dumps({f"{mode}:{module}": [round(ms, 1), round(whole, 1)]
                          for (mode, module), (ms, whole) in results.items()}
                         | {f"first:{module}:{order}": [round(t, 1) for t in took]
                            for (module, order), took in first.items()}))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
