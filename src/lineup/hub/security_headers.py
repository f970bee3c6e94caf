"""Headers on every HTTP response that tell the browser to confine the web app.

The built web app loads only its own files (scripts, styles, the service worker, the
manifest) and talks only to its own origin, so the policy allows ``'self'`` and nothing
inline: an injected ``<script>`` or inline handler does not run, and no other site may frame
the app (clickjacking an approval button). Images may also be ``data:``/``blob:`` (a canvas
tool's drawing). The interactive API pages (``/docs``, ``/redoc``) are FastAPI's, which load
their scripts from a CDN and start them inline; they get a policy that allows exactly that.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

APP_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "manifest-src 'self'",
        "worker-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

_CDN = "https://cdn.jsdelivr.net"
API_DOCS_POLICY = "; ".join(
    (
        "default-src 'self'",
        f"script-src 'self' 'unsafe-inline' {_CDN}",
        f"style-src 'self' 'unsafe-inline' {_CDN} https://fonts.googleapis.com",
        "font-src 'self' https://fonts.gstatic.com",
        "img-src 'self' data: https://fastapi.tiangolo.com",
        f"worker-src 'self' blob: {_CDN}",
        "connect-src 'self'",
        "object-src 'none'",
        "frame-ancestors 'none'",
    )
)
_API_DOCS_PATHS = frozenset({"/docs", "/redoc", "/docs/oauth2-redirect"})

_COMMON: tuple[tuple[bytes, bytes], ...] = (
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)


class SecurityHeaders:
    """ASGI middleware: adds the headers above to each HTTP response that lacks them."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._app_headers = (*_COMMON, (b"content-security-policy", APP_POLICY.encode()))
        self._docs_headers = (*_COMMON, (b"content-security-policy", API_DOCS_POLICY.encode()))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        docs = scope["path"].rstrip("/") in _API_DOCS_PATHS
        extra = self._docs_headers if docs else self._app_headers

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers.extend(h for h in extra if h[0] not in present)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)
