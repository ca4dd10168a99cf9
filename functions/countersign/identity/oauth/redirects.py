"""Redirect URIs: which a client may register, how a request's is matched, and the response URL.

* A redirect URI is ``https://`` on any host, or ``http://`` on a loopback host (``127.0.0.1``,
  ``[::1]``, ``localhost``: RFC 8252 §7.3, §8.3). No fragment, no user info, nothing else:
  private-use schemes and plain http elsewhere are refused at registration and in metadata
  documents.
* Matching is exact string comparison (RFC 9700 §4.1.3) of the URIs' normal forms (RFC 3986
  §6.2.2–6.2.3: ``http://127.0.0.1:33418`` is ``http://127.0.0.1:33418/``, as a client sends it),
  except that a loopback redirect matches on any port (RFC 8252 §7.3: a native app picks its port
  when it runs).
* The response carries ``code`` (or ``error``), ``state`` and ``iss`` (RFC 9207), added to any
  query the registered URI has.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "[::1]", "localhost"})
MAX_REDIRECT_URI = 2000


class BadRedirect(ValueError):
    """A redirect URI this server will never send a person to."""


def _parts(uri: str):
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        raise BadRedirect(f"{uri!r} is not a URL") from None
    return parts


def host_of(uri: str) -> str:
    """The host as written in the URI (with brackets for IPv6), lower-cased."""
    netloc = _parts(uri).netloc.rpartition("@")[2].lower()
    if netloc.startswith("["):
        return netloc[: netloc.find("]") + 1]
    return netloc.partition(":")[0]


def authority_of(uri: str) -> str:
    """Host and port as written (``host:port``), lower-cased: who a metadata document's URL names."""
    return _parts(uri).netloc.rpartition("@")[2].lower()


def is_loopback(uri: str) -> bool:
    parts = _parts(uri)
    return parts.scheme == "http" and host_of(uri) in LOOPBACK_HOSTS


def check_redirect_uri(uri: object) -> str:
    """``uri`` if a client may use it as a redirect URI, else :class:`BadRedirect` saying why."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_REDIRECT_URI:
        raise BadRedirect("a redirect URI is a URL of at most 2000 characters")
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in uri):
        raise BadRedirect("a redirect URI has no spaces or control characters")
    parts = _parts(uri)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise BadRedirect(f"{uri!r}: a redirect URI is https://, or http:// on a loopback address")
    if "@" in parts.netloc:
        raise BadRedirect(f"{uri!r}: a redirect URI carries no user name or password")
    if parts.fragment or uri.endswith("#"):
        raise BadRedirect(f"{uri!r}: a redirect URI has no fragment")
    if parts.scheme == "http" and host_of(uri) not in LOOPBACK_HOSTS:
        raise BadRedirect(f"{uri!r}: plain http is allowed only on a loopback address (127.0.0.1, [::1], localhost)")
    if not host_of(uri):
        raise BadRedirect(f"{uri!r} has no host")
    return uri


def _normal(uri: str, *, port: bool = True) -> tuple[str, str, int | None, str, str]:
    """``uri`` in the form two spellings of one URL share (RFC 3986 §6.2.2–6.2.3: scheme and host
    in lower case, the scheme's default port dropped, an empty path ``/``), as clients send it:
    the MCP SDK's client, for one, turns a registered ``http://127.0.0.1:33418`` into
    ``http://127.0.0.1:33418/``. ``port=False``: without its port (a loopback redirect)."""
    parts = _parts(uri)
    scheme = parts.scheme.lower()
    number = parts.port if parts.port != {"https": 443, "http": 80}.get(scheme) else None
    return scheme, host_of(uri), number if port else None, parts.path or "/", parts.query


def redirect_matches(registered: str, given: str) -> bool:
    """Whether ``given`` is the registered redirect URI (exactly, but for the spelling
    :func:`_normal` takes away; a loopback one on any port)."""
    if given == registered:
        return True
    try:
        loopback = is_loopback(registered) and is_loopback(given)
        return _normal(registered, port=not loopback) == _normal(given, port=not loopback)
    except BadRedirect:
        return False


def choose_redirect(registered: list[str], given: str | None) -> str:
    """The redirect URI of a request: ``given`` if it matches one registered, or the only one
    registered when none is given. :class:`BadRedirect` otherwise (never redirect there)."""
    if given is None:
        if len(registered) == 1:
            return registered[0]
        raise BadRedirect("redirect_uri is required: this client registered more than one")
    check_redirect_uri(given)
    if any(redirect_matches(r, given) for r in registered):
        return given
    raise BadRedirect("redirect_uri is not one this client registered")


def response_url(redirect_uri: str, **params: str | None) -> str:
    """``redirect_uri`` with ``params`` (those not None) added to its query."""
    parts = _parts(redirect_uri)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += [(k, v) for k, v in params.items() if v is not None]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))
