"""/schema: Swagger UI from files in the package, pinned, with their licence; nothing from another origin."""

from __future__ import annotations

import hashlib
import re

from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.routes.schema_ui import ASSETS, SCHEMA_UI_DIR, SWAGGER_UI_VERSION

Client = AsyncTestClient[Litestar]


async def test_schema_page_loads_only_files_of_this_origin(client: Client) -> None:
    page = await client.get("/schema")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    addresses = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert len(addresses) >= 3, addresses
    for address in addresses:
        assert address.startswith("/") and not address.startswith("//"), address
        asset = await client.get(address)
        assert asset.status_code == 200, address
        assert asset.headers["cache-control"].endswith("immutable")
    assert "cdn." not in page.text and "@latest" not in page.text


async def test_unknown_files_and_versions_are_404(client: Client) -> None:
    assert (await client.get(f"/schema-assets/{SWAGGER_UI_VERSION}/index.html")).status_code == 404
    assert (await client.get("/schema-assets/0.0.1/swagger-ui.css")).status_code == 404


def test_shipped_files_are_the_pinned_release_with_its_licence() -> None:
    sums = dict(
        reversed(line.split()) for line in (SCHEMA_UI_DIR / "SHA256SUMS").read_text().splitlines() if line.strip()
    )
    assert set(sums) == set(ASSETS)
    for name, digest in sums.items():
        assert hashlib.sha256((SCHEMA_UI_DIR / name).read_bytes()).hexdigest() == digest, name
    readme = (SCHEMA_UI_DIR / "README.md").read_text()
    assert f"swagger-ui-dist` **{SWAGGER_UI_VERSION}**" in readme
    assert "Apache License" in (SCHEMA_UI_DIR / "LICENSE").read_text()
    assert (SCHEMA_UI_DIR / "NOTICE").exists()
