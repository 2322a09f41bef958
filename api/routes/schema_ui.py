"""The API reference at /schema: Swagger UI from files shipped in the package (api/schema_ui/), never a CDN."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from litestar import Request, Response, get
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.params import Parameter

from api.routes.ui import static_file
from api.schemas.problems import ProblemError

AnyRequest = Request[Any, Any, Any]

SCHEMA_UI_DIR = Path(__file__).resolve().parent.parent / "schema_ui"
# The swagger-ui-dist release in api/schema_ui/ (its README.md says where it comes from).
SWAGGER_UI_VERSION = "5.35.0"
ASSETS_PATH = f"/schema-assets/{SWAGGER_UI_VERSION}"
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui-standalone-preset.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}
# The version is in the address, so a file never changes under it.
CACHE_CONTROL = "public, max-age=31536000, immutable"


def render_plugin() -> SwaggerRenderPlugin:
    """Swagger UI at /schema (the first plugin serves the root), every file from this origin."""
    return SwaggerRenderPlugin(
        js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
        css_url=f"{ASSETS_PATH}/swagger-ui.css",
        standalone_preset_js_url=f"{ASSETS_PATH}/swagger-ui-standalone-preset.js",
        # Litestar's default icon is an image on a CDN.
        favicon=f'<link rel="icon" type="image/png" href="{ASSETS_PATH}/favicon-32x32.png">',
        path="/swagger",
    )


@get("/schema-assets/{version:str}/{name:str}", include_in_schema=False, name="schema-asset")
async def schema_asset(
    request: AnyRequest,
    version: Annotated[str, Parameter(description="The Swagger UI release.")],
    name: Annotated[str, Parameter(description="A file of Swagger UI.")],
) -> Response[Any]:
    if version != SWAGGER_UI_VERSION or name not in ASSETS:
        raise ProblemError(404, f"No file {name!r} of Swagger UI {version}.", type_="/problems/not-found")
    file = static_file(SCHEMA_UI_DIR / name, ASSETS[name])
    headers = {"ETag": file.etag, "Cache-Control": CACHE_CONTROL}
    offered = request.headers.get("if-none-match")
    if offered and file.etag in {tag.strip().removeprefix("W/") for tag in offered.split(",")}:
        return Response(content=b"", status_code=304, headers=headers)
    return Response(content=file.body, media_type=file.media_type, headers=headers)


ROUTES = [schema_asset]
