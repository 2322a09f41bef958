"""Browser tests of the /ui page: Debian's Chromium driven by Playwright against a live server of their own."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from api.adapters.storage.bootstrap import migrate_and_seed
from api.app import create_app
from api.settings import Settings
from tests.conftest import LiveServer, service_unavailable, sqlite_url

CHROMIUM = Path(os.environ.get("GPU_ADVISOR_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# A laptop screen: the page must work on it without horizontal scrolling.
VIEWPORT = {"width": 1366, "height": 768}

_saved_screenshots: list[Path] = []


@pytest.fixture(scope="session")
async def browser_database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database of the browser run's own: the recommendations it stores stay out of the other tests."""
    url = sqlite_url(tmp_path_factory.mktemp("browser"))
    await migrate_and_seed(url)
    return url


@pytest.fixture(scope="package")
def portal(browser_database_url: str) -> Iterator[LiveServer]:
    # One browser sends every request from one address; the limiter has tests of its own.
    settings = Settings(database_url=browser_database_url, rate_limit_per_minute=0)
    with LiveServer(create_app(settings)) as server:
        yield server


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        service_unavailable("Chromium", f"{CHROMIUM} does not exist; apt-get install chromium")
    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        except PlaywrightError as error:
            service_unavailable("Chromium", str(error).splitlines()[0])
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("GPU_ADVISOR_SCREENSHOTS")
    folder = Path(configured) if configured else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def save_screenshot(page: Page, folder: Path, name: str) -> Path:
    """A full-page screenshot, listed at the end of the run."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    _saved_screenshots.append(path)
    return path


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _saved_screenshots:
        terminalreporter.write_sep("-", "screenshots of the /ui page")
        for path in _saved_screenshots:
            terminalreporter.write_line(str(path))


@dataclass
class Watch:
    """What a page did that it should not: console errors, script errors, requests to other origins, failures."""

    origin: str
    problems: list[str] = field(default_factory=list)
    # Console errors a test provokes on purpose (Chromium logs every 4xx answer to fetch as an error).
    allowed: list[re.Pattern[str]] = field(default_factory=list)

    def allow(self, pattern: str) -> None:
        self.allowed.append(re.compile(pattern))

    def on_console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning") and not any(p.search(message.text) for p in self.allowed):
            self.problems.append(f"console {message.type}: {message.text}")

    def on_page_error(self, error: Exception) -> None:
        self.problems.append(f"uncaught: {error}")

    def on_request(self, request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme in ("data", "blob", "about"):
            return
        if f"{parts.scheme}://{parts.netloc}" != self.origin:
            self.problems.append(f"request to another origin: {request.url}")

    def on_request_failed(self, request: Request) -> None:
        failure = request.failure or ""
        if not any(p.search(f"{request.url} {failure}") for p in self.allowed):
            self.problems.append(f"failed request: {request.method} {request.url} ({failure})")


@dataclass
class Portal:
    page: Page
    watch: Watch
    url: str
    screenshots: Path

    def open(self, path: str = "/ui") -> None:
        response = self.page.goto(self.url + path)
        assert response is not None and response.ok, path
        self.page.wait_for_selector("body[data-ready]")

    def screenshot(self, name: str) -> Path:
        return save_screenshot(self.page, self.screenshots, name)


# A phone (the size of a common one, in CSS pixels): no sideways scrolling, options as cards.
PHONE = {"width": 390, "height": 844}


@contextmanager
def watched_page(
    browser: Browser, portal: LiveServer, screenshots: Path, viewport: dict[str, int] = VIEWPORT
) -> Iterator[Portal]:
    """A fresh browser context on the page; fails if the page logged errors or left the origin."""
    phone = viewport["width"] < 600
    context = browser.new_context(
        viewport=viewport, locale="en-US", accept_downloads=True, is_mobile=phone, has_touch=phone
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    watch = Watch(origin=portal.url)
    page.on("console", watch.on_console)
    page.on("pageerror", watch.on_page_error)
    page.on("request", watch.on_request)
    page.on("requestfailed", watch.on_request_failed)
    try:
        yield Portal(page=page, watch=watch, url=portal.url, screenshots=screenshots)
    finally:
        context.close()
    assert not watch.problems, "\n".join(watch.problems)


@pytest.fixture
def portal_page(browser: Browser, portal: LiveServer, screenshots: Path) -> Iterator[Portal]:
    """The page on a laptop screen."""
    with watched_page(browser, portal, screenshots) as opened:
        yield opened


@pytest.fixture(params=[VIEWPORT, PHONE], ids=["1366x768", "390x844"])
def sized_page(
    request: pytest.FixtureRequest, browser: Browser, portal: LiveServer, screenshots: Path
) -> Iterator[Portal]:
    """The page on a laptop screen and on a phone."""
    with watched_page(browser, portal, screenshots, request.param) as opened:
        yield opened
