"""One Lambda instance in its own process: ``python tests/deploy/worker.py MODULE:ATTR FUNCTION``.

The parent starts it with exactly the environment template.yaml gives the function (plus fake
credentials and ``AWS_ENDPOINT_URL`` pointing at a moto server), so the import, the key loading
from Secrets Manager and every AWS call happen as they would in a cold Lambda instance.

Protocol: one JSON object per line on stdin, one answer per line on the original stdout. The
function's own stdout (Powertools' JSON log lines and EMF metrics) goes to ``$WORKER_LOG``, the
way Lambda sends stdout to CloudWatch. Every AWS API call the process makes (import included) is
recorded at the botocore level and returned by ``{"op": "calls"}``.

ops: ``invoke`` {event} -> the handler's result; ``calls`` -> the recorded calls;
``log`` {message} -> logs ``message`` (and an exception carrying it) through a package logger,
to prove the redaction on the real handlers; ``quit``.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import json
import logging
import os
import sys
import time
import traceback

PROTOCOL = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
sys.stdout = open(os.environ["WORKER_LOG"], "a", buffering=1, encoding="utf-8")
os.dup2(sys.stdout.fileno(), 1)  # print() from C or subprocesses lands there too

CALLS: list[dict] = []


def _summary(service: str, operation: str, params: dict) -> dict:
    """What the IAM check needs from a call, nothing else (never item contents)."""
    out: dict = {}
    for key in ("TableName", "IndexName", "SecretId", "FromEmailAddress"):
        if key in params:
            out[key] = params[key]
    if operation == "TransactWriteItems":
        out["TransactItems"] = [
            {kind: {"TableName": body.get("TableName")}} for item in params.get("TransactItems", [])
            for kind, body in item.items()
        ]
    if operation == "TransactGetItems":
        out["TransactItems"] = [
            {"Get": {"TableName": i["Get"].get("TableName")}} for i in params.get("TransactItems", [])
        ]
    if operation in ("BatchGetItem", "BatchWriteItem"):
        out["Tables"] = sorted(params.get("RequestItems", {}))
    if service == "sesv2" and operation == "SendEmail":
        out["Content"] = sorted(params.get("Content", {}))
        if "ConfigurationSetName" in params:
            out["ConfigurationSetName"] = params["ConfigurationSetName"]
    return out


def _record_calls() -> None:
    import botocore.client

    original = botocore.client.BaseClient._make_api_call

    def recording(self, operation_name, api_params):
        model = self.meta.service_model
        CALLS.append({"service": model.service_name, "prefix": model.signing_name, "operation": operation_name,
                      "params": _summary(model.service_name, operation_name, api_params)})
        return original(self, operation_name, api_params)

    botocore.client.BaseClient._make_api_call = recording


def _only_the_bundle() -> None:
    """Make every installed distribution outside ``$WORKER_ALLOWED`` unimportable, so the
    function runs with exactly what its bundle (infra/requirements-KIND.txt) would hold."""
    allowed = os.environ.get("WORKER_ALLOWED")
    if not allowed:
        return
    import importlib.abc
    import importlib.metadata
    import re

    def canonical(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    keep = set(json.loads(allowed)) | {"countersign"}
    blocked = {module for module, dists in importlib.metadata.packages_distributions().items()
               if not any(canonical(d) in keep for d in dists)}

    class NotInTheBundle(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in blocked:
                raise ModuleNotFoundError(f"No module named {name!r} (not in this function's bundle)", name=name)
            return None

    sys.meta_path.insert(0, NotInTheBundle())


class Context:
    """The Lambda context Powertools reads."""

    def __init__(self, function_name: str):
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = 1024
        self.invoked_function_arn = f"arn:aws:lambda:eu-west-1:123456789012:function:{function_name}"
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = "2026/11/30/[$LATEST]0123456789abcdef"
        self.aws_request_id = ""

    def get_remaining_time_in_millis(self) -> int:
        return 20_000


def main() -> None:
    target, function_name = sys.argv[1], sys.argv[2]
    module_name, _, attr = target.rpartition(".")
    asyncio.set_event_loop(asyncio.new_event_loop())
    # As the Lambda runtime does before importing a handler: one root handler (so a library's
    # logging.basicConfig, e.g. the MCP SDK's rich console handler, is a no-op).
    logging.getLogger().addHandler(logging.StreamHandler(sys.stderr))
    _only_the_bundle()
    _record_calls()
    started = time.perf_counter()
    try:
        module = importlib.import_module(module_name)
        handler = getattr(module, attr)
    except BaseException:  # noqa: BLE001 - any import failure is reported to the test over the protocol
        PROTOCOL.write(json.dumps({"ready": False, "error": traceback.format_exc()}) + "\n")
        return
    loaded = sorted(m.__file__ for m in list(sys.modules.values())
                    if getattr(m, "__name__", "").startswith("countersign") and getattr(m, "__file__", None))
    PROTOCOL.write(json.dumps({
        "ready": True, "callable": callable(handler), "import_seconds": time.perf_counter() - started,
        "countersign_files": loaded,
        "mcp_imported": any(m == "mcp" or m.startswith("mcp.") for m in sys.modules),
        "top_level": sorted({m.split(".")[0] for m in sys.modules}),
        # what a full collection would walk now, beside what the import froze (countersign.platform.heap)
        "gc_tracked": len(gc.get_objects()), "gc_frozen": gc.get_freeze_count(),
    }) + "\n")
    context = Context(function_name)
    invocation = 0
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "quit":
            break
        if op == "calls":
            answer: dict = {"calls": CALLS}
        elif op == "log":
            log = logging.getLogger("countersign.rehearsal")
            log.warning("rehearsal: %s", request["message"])
            try:
                raise RuntimeError(f"rehearsal failure carrying {request['message']}")
            except RuntimeError:
                log.exception("rehearsal: an exception")
            answer = {"logged": True}
        elif op == "invoke":
            invocation += 1
            context.aws_request_id = f"{function_name}-{invocation:04d}"
            try:
                answer = {"result": handler(request["event"], context)}
            except BaseException:  # noqa: BLE001 - the handler's failure goes back to the test as an answer
                answer = {"error": traceback.format_exc()}
        else:
            answer = {"error": f"unknown op {op!r}"}
        sys.stdout.flush()
        PROTOCOL.write(json.dumps(answer) + "\n")


if __name__ == "__main__":
    main()
