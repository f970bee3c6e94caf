"""The built web app, served from the package: any unknown path gets ``index.html`` so the
app's own routes work on reload."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, HTMLResponse

from lineup.protocol.errors import NotFound

STATIC_DIR = Path(__file__).parent / "static"

_PLACEHOLDER = """<!doctype html><html lang="en"><meta charset="utf-8">
<title>LineUp</title><body style="font-family:system-ui;margin:3rem">
<h1>LineUp hub is running</h1>
<p>The web app is not built into this installation. The HTTP API is at
<a href="/docs">/docs</a>.</p></body></html>"""


def mount_web_app(app: FastAPI, static_dir: Path) -> None:
    """Serve the built web app; any unknown path gets index.html (client-side routes).

    The files are listed once at start (so no request can reach outside the folder) and again
    when a request misses a file-like path, which picks up a rebuild without a restart.
    """
    root = static_dir.resolve()
    index = root / "index.html"

    def scan() -> set[str]:
        if not root.is_dir():
            return set()
        return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}

    files = scan()

    @app.get("/{path:path}", include_in_schema=False, response_model=None)
    async def web_app(path: str) -> FileResponse | HTMLResponse:
        nonlocal files
        if path.startswith(("api/", "ws/")):
            raise NotFound("There is nothing at this address.")
        if path not in files and ("." in path.rsplit("/", 1)[-1] or "index.html" not in files):
            files = await asyncio.to_thread(scan)
        if "index.html" not in files:
            return HTMLResponse(_PLACEHOLDER)
        if path in files:
            return FileResponse(root / path)
        return FileResponse(index, headers={"Cache-Control": "no-cache"})
