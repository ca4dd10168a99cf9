"""The rehearsal's OAuth part: the Python SDK's OAuthClientProvider against the deployed stack in
miniature, every request routed as the template routes it (CloudFront's cache behaviours, then
the REST API's methods, then the function's process, then CloudFront's viewer-response function).
The person answers the consent through the api function, signed in as in the rest of the rehearsal.

    agent:  /mcp 401 → /.well-known/oauth-protected-resource/mcp → /.well-known/oauth-authorization-
            server → /oauth/register → (person) → /oauth/token → /mcp, and a refresh   (McpFunction)
    person: /oauth/authorize → /confirm?authorize=… → GET /api/oauth/requests/… → Allow (ApiFunction)
"""

from __future__ import annotations

import fnmatch
import json
import re
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2

from tests.deploy.example_stack import rest_api_routes
from tests.support.apigw import http_event, response_body, through_cloudfront
from tests.support.oauth import PythonAgent


class CloudFrontRouter(httpx2.AsyncBaseTransport):
    """Sends each request to the function the template routes its path to."""

    def __init__(self, stack, instances: dict):
        self.instances = instances
        resources = stack.stack.template["Resources"]
        config = resources["Distribution"]["Properties"]["DistributionConfig"]
        self.behaviours = [(b["PathPattern"], b["TargetOriginId"]) for b in config["CacheBehaviors"]]
        self.routes = [(re.compile("^" + re.escape(path).replace(re.escape("{proxy+}"), ".+") + "$"), function)
                       for (_, path), function in rest_api_routes(resources).items()]
        self.seen: list[tuple[str, str]] = []

    def function_for(self, path: str) -> str:
        origin = next((o for p, o in self.behaviours if fnmatch.fnmatchcase(path, p)), "site")
        assert origin == "api", f"CloudFront would serve {path} from the bucket"
        [function] = [f for pattern, f in self.routes if pattern.match(path)] or [None]
        assert function is not None, f"the REST API has no method for {path}"
        return function

    def invoke(self, method: str, path: str, *, headers: dict | None = None, body: bytes | None = None,
               query: str = "") -> dict:
        function = self.function_for(path)
        self.seen.append((function, path))
        event = http_event(method, path, headers=headers, body=body, query=query, base64_body=bool(body))
        return self.instances[function].invoke(event)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        url = urlsplit(str(request.url))
        headers = {k.lower(): v for k, v in request.headers.items()}
        result = await anyio.to_thread.run_sync(
            lambda: self.invoke(request.method, url.path, headers=headers, body=body or None, query=url.query))
        status, out = through_cloudfront(result)
        return httpx2.Response(status, headers=out, content=response_body(result), request=request)


def rehearse(stack, instances: dict, signed_in: dict) -> dict:
    """Connect an agent by OAuth (dynamic registration), call a tool, refresh, call again."""
    router = CloudFrontRouter(stack, instances)
    mcp_url = f"{stack.public_url}/mcp"
    agent = PythonAgent(mcp_url, name="Rehearsal agent", transport=router).start([("list_campaigns", {})])
    authorize = urlsplit(agent.authorize_url())
    assert f"{authorize.scheme}://{authorize.netloc}" == stack.public_url and authorize.path == "/oauth/authorize"
    sent = router.invoke("GET", authorize.path, query=authorize.query)
    assert sent["statusCode"] == 302, response_body(sent)
    consent = urlsplit(sent["headers"]["location"])
    assert consent.path == "/confirm"  # the page (CloudFront's bucket), which asks the api function:
    request_id = parse_qs(consent.query)["authorize"][0]
    shown = router.invoke("GET", f"/api/oauth/requests/{request_id}", headers=signed_in)
    assert shown["statusCode"] == 200, response_body(shown)
    allowed = router.invoke("POST", f"/api/oauth/requests/{request_id}/allow", headers=signed_in,
                            body=json.dumps({"workspaceId": json.loads(response_body(shown))["workspaces"][0]["id"]}
                                            ).encode())
    assert allowed["statusCode"] == 200, response_body(allowed)
    agent.answer(json.loads(response_body(allowed))["redirectTo"])
    [first] = agent.result()
    agent.provider.context.token_expiry_time = 1  # long past: the next call refreshes (a rotation)
    before = agent.storage.tokens.refresh_token
    [second] = agent.run([("list_campaigns", {})])
    assert agent.storage.tokens.refresh_token != before
    return {"first": first, "second": second, "client_name": json.loads(response_body(shown))["client"]["name"],
            "routed": sorted(set(router.seen)), "tokens": [agent.storage.tokens.access_token,
                                                          agent.storage.tokens.refresh_token, before]}
