"""Every error the API returns has one shape: ``{"error": {"code", "message"}}`` (plus, for a
refused click, the card as it now stands). Messages are for the person on the page."""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import compile_path

from ...store.errors import BadInput, Conflict, NotFound, StoreUnavailable
from ...store.limits import OverLimit
from ...toolkit import ActionError, Unavailable
from ...toolkit.arguments import field_path, plain_sentence
from ..http.request_limits import PAGE_MESSAGE

log = logging.getLogger("countersign.api")


class ApiError(Exception):
    """An error response: HTTP ``status``, a stable ``code`` and a sentence for a person."""

    def __init__(self, status: int, code: str, message: str, *, headers: dict[str, str] | None = None, **extra: Any):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
        self.extra = extra


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}, **extra}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    return JSONResponse(error_body(code, message, **extra), status_code=status, headers=headers)


def not_found(what: str = "card") -> ApiError:
    return ApiError(404, "not_found", f"No {what} with that id in this workspace.")


SIGNED_OUT = "You are signed out. Ask for a sign-in link to continue."
FORBIDDEN_CSRF = (
    "This request was refused: it did not come from the confirm page (missing or wrong CSRF token or Origin)."
)

_STATUS_CODES = {
    400: "bad_request", 401: "signed_out", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
    406: "not_acceptable", 409: "conflict", 413: "too_large", 415: "unsupported_media_type", 429: "rate_limited",
}


PATTERN_MESSAGES = {"email": "that is not an email address", "name": "must not be blank"}


def _where(loc: tuple[Any, ...]) -> str:
    """The field as the page wrote it: ``changes[0].name`` (never ``body.changes.0.name``)."""
    if loc and loc[0] in ("body", "query", "path", "header", "cookie"):
        kind, rest = str(loc[0]), tuple(loc[1:])
        if kind == "body" and len(rest) == 1 and isinstance(rest[0], int):
            return "body"  # a JSON decode error's position
        return field_path(rest) if rest else kind
    return field_path(tuple(loc)) if loc else "body"


def validation_message(exc: RequestValidationError) -> tuple[str, str]:
    """(field, sentence) naming the first problem of a request that failed validation."""
    errors = list(exc.errors())
    if not errors:
        return "body", "body: the request is not valid."
    first = errors[0]
    where = _where(tuple(first.get("loc", ())))
    kind = first.get("type", "")
    if kind == "json_invalid":
        return "body", "body: the request body is not valid JSON."
    if kind == "missing" and where == "body":
        return "body", "body: a JSON object is required."
    if kind == "extra_forbidden":
        return where, f"{where}: is not a field this request accepts."
    if kind == "string_pattern_mismatch":
        return where, f"{where}: {PATTERN_MESSAGES.get(where, 'is not in the expected form')}."
    if kind in ("model_attributes_type", "model_type", "dict_type"):  # the body or a field wanted an object
        return where, f"{where}: expected a JSON object."
    return where, f"{where}: {plain_sentence(first)}"


UNREADABLE_BODY = "body: the request body is not JSON in UTF-8."


def route_methods(routers: list[APIRouter], prefix: str) -> list[tuple[re.Pattern[str], frozenset[str]]]:
    """(path pattern, methods) of every route of ``routers`` mounted at ``prefix``."""
    out = []
    for router in routers:
        for route in router.routes:
            if isinstance(route, APIRoute):
                out.append((compile_path(prefix + route.path)[0], frozenset(route.methods or ())))
    return out


def allowed_methods(request: Request) -> list[str]:
    """Every method some route accepts at this request's path (Starlette's own 405 names only the
    first route's, so ``/api/connections`` would say GET and hide POST)."""
    path = request.url.path
    methods: set[str] = set()
    for pattern, accepted in getattr(request.app.state, "route_methods", []):
        if pattern.match(path):
            methods |= accepted
    return sorted(methods)


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.headers, **exc.extra)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        field, message = validation_message(exc)
        return error_response(422, "invalid", message, field=field)

    @app.exception_handler(BadInput)
    async def bad_input(request: Request, exc: BadInput) -> JSONResponse:
        return error_response(422, "invalid", exc.message, field=exc.field)

    @app.exception_handler(NotFound)
    async def unknown(request: Request, exc: NotFound) -> JSONResponse:
        return error_response(404, "not_found", f"No {exc.what} with that id in this workspace.")

    @app.exception_handler(Conflict)
    async def conflict(request: Request, exc: Conflict) -> JSONResponse:
        return error_response(409, "conflict", exc.message)

    @app.exception_handler(OverLimit)
    async def over_limit(request: Request, exc: OverLimit) -> JSONResponse:
        # over the page's request limit: at the session's read, or (a race) at the click's commit
        return error_response(429, "rate_limited", PAGE_MESSAGE.format(wait=exc.wait),
                              {"Retry-After": str(exc.wait), "Cache-Control": "no-store"})

    @app.exception_handler(StoreUnavailable)
    async def unavailable(request: Request, exc: StoreUnavailable) -> JSONResponse:
        return error_response(503, "store_unavailable", exc.message, {"Retry-After": "5"})

    @app.exception_handler(Unavailable)
    async def dependency_unavailable(request: Request, exc: Unavailable) -> JSONResponse:
        return error_response(503, exc.code, exc.message, {"Retry-After": "5"}, **({"field": exc.field} if exc.field
                                                                                   else {}))

    @app.exception_handler(ActionError)
    async def action_error(request: Request, exc: ActionError) -> JSONResponse:
        return error_response(409, "unavailable", exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 400:  # the framework could not read the body (not UTF-8, or not JSON at all)
            return error_response(422, "invalid", UNREADABLE_BODY, field="body")
        if exc.status_code == 405:
            allow = ", ".join([*allowed_methods(request), "OPTIONS"])
            if request.method == "OPTIONS":
                return Response(status_code=204, headers={"Allow": allow})
            return error_response(405, "method_not_allowed", "This endpoint does not accept that method.",
                                  {"Allow": allow})
        code = _STATUS_CODES.get(exc.status_code, "error")
        message = {404: "There is no such API endpoint.", 405: "This endpoint does not accept that method."}.get(
            exc.status_code, str(exc.detail)
        )
        return error_response(exc.status_code, code, message, dict(exc.headers or {}) or None)
