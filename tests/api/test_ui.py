"""The /ui page and its files: media types, the page's own policy, caching, nothing loaded from elsewhere."""

from __future__ import annotations

import re

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.app import create_app
from api.routes.ui import ASSETS, UI_DIR
from api.settings import Settings, SettingsError

Client = AsyncTestClient[Litestar]

PAGE_DIRECTIVES = [
    "default-src 'self'",
    "img-src 'self' data:",
    "style-src 'self'",
    "script-src 'self'",
    "connect-src 'self'",
]
MEDIA_TYPES = {
    "app.js": "text/javascript; charset=utf-8",
    "i18n.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
# createElementNS and the inline SVG icon name this namespace; it is an identifier, never fetched.
SVG_NAMESPACE = "http://www.w3.org/2000/svg"
URL = re.compile(r"https?://[^\s\"'`)<>]*")


def _policy(response_headers: object) -> dict[str, str]:
    policy = str(response_headers["content-security-policy"])  # type: ignore[index]
    return {part.strip().split(" ", 1)[0]: part.strip() for part in policy.split(";") if part.strip()}


async def test_page_is_html_with_its_own_policy(client: Client) -> None:
    response = await client.get("/ui")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    policy = _policy(response.headers)
    for directive in PAGE_DIRECTIVES:
        assert policy[directive.split(" ", 1)[0]] == directive
    assert policy["frame-ancestors"] == "frame-ancestors 'self'"
    # frame-ancestors decides who may frame the page; X-Frame-Options DENY would contradict it.
    assert "x-frame-options" not in response.headers
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "<script" in response.text and 'type="module" src="/ui/app.js"' in response.text
    # Nothing inline: no script bodies, no style elements or attributes, no event handler attributes.
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", response.text)
    assert "<style" not in response.text and " style=" not in response.text
    assert not re.search(r"\son[a-z]+=", response.text)


async def test_frame_ancestors_come_from_the_settings(seeded_sqlite_url: str) -> None:
    settings = Settings(
        database_url=seeded_sqlite_url,
        rate_limit_per_minute=0,
        frame_ancestors=("'self'", "https://portal.example.com"),
    )
    async with AsyncTestClient(app=create_app(settings)) as client:
        response = await client.get("/ui")
    assert _policy(response.headers)["frame-ancestors"] == "frame-ancestors 'self' https://portal.example.com"


def test_frame_ancestors_setting_from_the_environment() -> None:
    assert Settings.from_env({}).frame_ancestors == ("'self'",)
    parsed = Settings.from_env({"GPU_ADVISOR_FRAME_ANCESTORS": "'self', https://portal.example.com"})
    assert parsed.frame_ancestors == ("'self'", "https://portal.example.com")
    for bad in ("https://a.example.com; script-src *", 'https://a.example.com"'):
        with pytest.raises(SettingsError, match="GPU_ADVISOR_FRAME_ANCESTORS"):
            Settings.from_env({"GPU_ADVISOR_FRAME_ANCESTORS": bad})


@pytest.mark.parametrize("name", sorted(MEDIA_TYPES))
async def test_assets_have_their_media_types_and_revalidate(client: Client, name: str) -> None:
    response = await client.get(f"/ui/{name}")
    assert response.status_code == 200
    assert response.headers["content-type"] == MEDIA_TYPES[name]
    assert response.headers["cache-control"] == "no-cache"
    etag = response.headers["etag"]
    again = await client.get(f"/ui/{name}", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""


async def test_page_revalidates(client: Client) -> None:
    first = await client.get("/ui")
    again = await client.get("/ui", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    # The answer without a body still carries the page's policy.
    assert "frame-ancestors" in again.headers["content-security-policy"]


async def test_unknown_files_are_404_problems(client: Client) -> None:
    for path in ("/ui/secrets.py", "/ui/..%2Fsettings.py", "/ui/app.js.map"):
        response = await client.get(path)
        assert response.status_code == 404, path
        assert response.headers["content-type"].startswith("application/problem+json")
    moved = await client.get("/ui/index.html", follow_redirects=False)
    assert moved.status_code == 308 and moved.headers["location"] == "/ui"


async def test_nothing_is_loaded_from_another_origin(client: Client) -> None:
    for path in ["/ui", *(f"/ui/{name}" for name in ASSETS)]:
        text = (await client.get(path)).text
        assert "//cdn" not in text, path
        assert [url for url in URL.findall(text) if url != SVG_NAMESPACE] == [], path
        assert "@import" not in text and "url(" not in text, path
    page = (await client.get("/ui")).text
    for reference in re.findall(r'(?:src|href)="([^"]*)"', page):
        assert reference.startswith(("/ui/", "#", "data:")), reference


async def test_every_ui_file_is_served(client: Client) -> None:
    on_disk = {path.name for path in UI_DIR.iterdir() if path.is_file()}
    assert on_disk == {"index.html", *ASSETS}
    for name in ASSETS:
        assert (await client.get(f"/ui/{name}")).content == (UI_DIR / name).read_bytes()


def test_page_is_not_in_the_openapi_document(app: Litestar) -> None:
    assert app.openapi_schema.paths is not None
    assert not [path for path in app.openapi_schema.paths if path.startswith("/ui")]
