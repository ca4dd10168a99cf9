"""The ``mcp`` function's cold start: importing ``countersign.handlers.mcp`` as a cold Lambda would
(DynamoDB on moto, ``AWS_LAMBDA_FUNCTION_NAME`` set) imports no toolset and builds no tool; the first
``tools/call`` and ``tools/list`` on that instance then work, and list exactly the pinned tools."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

from tests.support.aws import REPO_ROOT

PINNED = Path(__file__).resolve().parents[1] / "mcp" / "tools_list.json"

SCRIPT = """
import json, sys
from moto import mock_aws
with mock_aws():
    import boto3
    from tests.support.aws import create_table_from_template
    create_table_from_template(boto3.client("dynamodb", region_name="eu-west-1"), "countersign-mcp")
    import countersign.handlers.mcp as fn
    at_start = {"toolsets": sorted(m for m in sys.modules if m.startswith("countersign.toolsets")),
                "jsonschema": "jsonschema" in sys.modules}
    from countersign.identity import accounts
    from tests.support.apigw import LambdaContext, http_event, response_body
    workspace, person = accounts.create_workspace(fn.runtime.store.workspaces, "Acme", "owner@example.com")
    token = accounts.create_connection(fn.runtime.store.workspaces, fn.runtime.store.connections, workspace.id,
                                       person.id, "agent").token
    META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}

    def rpc(method, params, name=None):
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
                   "authorization": f"Bearer {token}", "mcp-protocol-version": "2026-07-28", "mcp-method": method}
        if name:
            headers["mcp-name"] = name
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": dict(params, _meta=META)}
        got = fn.handler(http_event("POST", "/mcp", body=json.dumps(body), headers=headers), LambdaContext())
        assert got["statusCode"] == 200, (got["statusCode"], response_body(got))
        return json.loads(response_body(got))["result"]

    called = rpc("tools/call", {"name": "get_credits", "arguments": {}}, "get_credits")
    listed = rpc("tools/list", {})
    print(json.dumps({"at_start": at_start, "called": called, "listed": listed["tools"]}))
"""


def test_the_mcp_function_builds_toolsets_and_tools_on_first_use(tmp_path):
    env = dict(os.environ, COUNTERSIGN_STORE="dynamodb://countersign-mcp", COUNTERSIGN_DATA=str(tmp_path),
               COUNTERSIGN_PUBLIC_URL="https://confirm.example.com", COUNTERSIGN_MAIL="ses:countersign@example.com",
               COUNTERSIGN_SIGNING_KEY=secrets.token_urlsafe(32), COUNTERSIGN_STATE_KEYS=secrets.token_urlsafe(48),
               AWS_DEFAULT_REGION="eu-west-1", AWS_LAMBDA_FUNCTION_NAME="countersign-mcp",
               POWERTOOLS_METRICS_NAMESPACE="countersign", POWERTOOLS_SERVICE_NAME="countersign")
    env.pop("COUNTERSIGN_PACKS", None)
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["at_start"]["toolsets"] == [], report["at_start"]
    assert report["at_start"]["jsonschema"] is False
    # the first request on the instance is a call: it runs
    assert not report["called"].get("isError"), report["called"]
    assert "structuredContent" in report["called"]
    # and the listing after it is the pinned one (this workspace has no upstreams)
    pinned = json.loads(PINNED.read_text())["tools"]
    assert [t["name"] for t in report["listed"]] == [t["name"] for t in pinned]
    assert report["listed"] == pinned
