"""/schema renders the API reference from files the service ships, with every other origin cut off."""

from __future__ import annotations

from urllib.parse import urlsplit

from playwright.sync_api import Route

from tests.browser.conftest import Portal


def test_schema_renders_with_the_network_cut_off(portal_page: Portal) -> None:
    page, origin = portal_page.page, portal_page.url
    elsewhere: list[str] = []

    def only_this_origin(route: Route) -> None:
        parts = urlsplit(route.request.url)
        if f"{parts.scheme}://{parts.netloc}" == origin or parts.scheme in ("data", "blob"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort("internetdisconnected")

    page.route("**/*", only_this_origin)
    response = page.goto(origin + "/schema")
    assert response is not None and response.ok
    page.wait_for_selector(".swagger-ui .info .title")
    assert "gpu-advisor" in page.inner_text(".swagger-ui .info .title")
    # Every operation of the document is listed.
    page.wait_for_selector(".opblock")
    assert page.locator(".opblock").count() >= 15
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/v1/recommendations" in path for path in paths), paths
    assert not elsewhere, elsewhere
    portal_page.screenshot("schema")
