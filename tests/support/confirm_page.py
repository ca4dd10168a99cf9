"""A page-like HTTP client for the confirm API: what the confirm page does over HTTP (same
origin, session cookie, CSRF header). Cookies are sent by hand: the session cookie is ``Secure``
and the test client speaks plain http."""

from __future__ import annotations

import httpx2

from countersign.identity.sessions import mint_signin_token
from countersign.store.workspaces import Person

COOKIE = "__Host-cs_session"


class Page:
    """What the confirm page does over HTTP: same origin, session cookie, CSRF header."""

    def __init__(self, origin: str):
        self.origin = origin
        # No keep-alive: uvicorn and the client otherwise meet in a 40 ms delayed-ACK wait per request.
        self.http = httpx2.Client(base_url=origin, timeout=30, limits=httpx2.Limits(max_keepalive_connections=0))
        self.session_id: str | None = None
        self.csrf: str | None = None

    def request(self, method: str, path: str, json=None, *, origin: str | None = "", csrf: str | None = "",
                cookie: str | None = "", headers: dict | None = None, content: bytes | None = None) -> httpx2.Response:
        """``origin``/``csrf``/``cookie``: "" means the page's own value, None means leave it out."""
        sent = dict(headers or {})
        if origin is not None:
            sent["Origin"] = origin or self.origin
        if csrf is not None and (csrf or self.csrf):
            sent["X-CSRF-Token"] = csrf or self.csrf
        if cookie is not None and (cookie or self.session_id):
            sent["Cookie"] = f"{COOKIE}={cookie or self.session_id}"
        if content is not None:
            return self.http.request(method, path, content=content, headers=sent)
        return self.http.request(method, path, json=json, headers=sent)

    def get(self, path: str, **kw) -> httpx2.Response:
        return self.request("GET", path, origin=None, csrf=None, **kw)

    def post(self, path: str, json=None, **kw) -> httpx2.Response:
        return self.request("POST", path, json, **kw)

    def patch(self, path: str, json=None, **kw) -> httpx2.Response:
        return self.request("PATCH", path, json, **kw)

    def complete(self, token: str) -> httpx2.Response:
        response = self.post("/api/signin/complete", {"token": token}, csrf=None)
        if response.status_code == 200:
            self.session_id = session_cookie(response)
            self.csrf = response.json()["csrfToken"]
        return response

    def sign_in(self, runtime, person: Person) -> Page:
        response = self.complete(mint_signin_token(runtime.store.sessions, person, now=runtime.desk.now()))
        assert response.status_code == 200, response.text
        return self

    def close(self) -> None:
        self.http.close()


def session_cookie(response) -> str:
    cookies = [v for k, v in response.headers.multi_items() if k.lower() == "set-cookie"]
    assert len(cookies) == 1, cookies
    name, _, rest = cookies[0].partition("=")
    assert name == COOKIE
    return rest.split(";", 1)[0]
