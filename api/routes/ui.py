"""The portal page: /ui and its static files, served by the service itself (no CDN, no build step)."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Annotated, Any

import msgspec
from litestar import Request, Response, get
from litestar.di import NamedDependency
from litestar.params import Parameter

from api.schemas.problems import ProblemError
from api.wiring import Services

AnyRequest = Request[Any, Any, Any]

# The files live next to the package (api/ui/), so this works from a checkout and from an installed wheel.
UI_DIR = Path(__file__).resolve().parent.parent / "ui"

# Litestar adds "; charset=utf-8" to text media types.
MEDIA_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
# Only these are served; the page is the entry point and has the CSP of its own.
PAGE = "index.html"
ASSETS = (
    "app.js",
    "alerts.js",
    "chart.js",
    "compare.js",
    "dom.js",
    "form.js",
    "format.js",
    "i18n.js",
    "options.js",
    "problems.js",
    "request.js",
    "results.js",
    "state.js",
    "tco.js",
    "url.js",
    "app.css",
)
# No file name carries a version, so every load revalidates (a cheap 304) and a new release is seen at once.
CACHE_CONTROL = "no-cache"


class UiFile(msgspec.Struct, frozen=True):
    body: bytes
    media_type: str
    etag: str


@cache
def static_file(path: Path, media_type: str) -> UiFile:
    """A file shipped in the package, read once per process, with its ETag."""
    body = path.read_bytes()
    etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
    return UiFile(body=body, media_type=media_type, etag=etag)


def ui_file(name: str) -> UiFile:
    """A file of the page."""
    return static_file(UI_DIR / name, MEDIA_TYPES[Path(name).suffix])


def page_policy(frame_ancestors: tuple[str, ...]) -> str:
    """The page's Content-Security-Policy: everything from this origin, nothing inline; framed only by the given."""
    ancestors = " ".join(frame_ancestors) or "'none'"
    return (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; "
        f"base-uri 'self'; form-action 'self'; object-src 'none'; frame-ancestors {ancestors}"
    )


def _answer(request: AnyRequest, name: str, headers: dict[str, str]) -> Response[Any]:
    file = ui_file(name)
    headers = {"ETag": file.etag, "Cache-Control": CACHE_CONTROL, **headers}
    offered = request.headers.get("if-none-match")
    if offered and file.etag in {tag.strip().removeprefix("W/") for tag in offered.split(",")}:
        return Response(content=b"", status_code=304, headers=headers)
    return Response(content=file.body, media_type=file.media_type, headers=headers)


@get("/ui", include_in_schema=False, name="ui-page")
async def ui_page(request: AnyRequest, services: NamedDependency[Services]) -> Response[Any]:
    policy = page_policy(services.settings.frame_ancestors)
    return _answer(request, PAGE, {"Content-Security-Policy": policy})


@get("/ui/{name:str}", include_in_schema=False, name="ui-asset")
async def ui_asset(
    request: AnyRequest, name: Annotated[str, Parameter(description="A file of the page.")]
) -> Response[Any]:
    if name == PAGE:
        # One address for the page, so its policy and the share links stay in one place.
        return Response(content=b"", status_code=308, headers={"Location": "/ui"})
    if name not in ASSETS:
        raise ProblemError(404, f"No file {name!r} in the page.", type_="/problems/not-found")
    return _answer(request, name, {})


ROUTES = [ui_page, ui_asset]
