"""What operators and browsers see around every answer: request ids, security headers, CORS, JSON logs, metrics."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from prometheus_client.parser import text_string_to_metric_families

from api.app import create_app
from api.http.request_context import request_id_var
from api.logs import JsonFormatter, configure_logging
from api.settings import Settings

Client = AsyncTestClient[Litestar]
Request = Callable[[Client], Awaitable[httpx.Response]]

KEY = "observability-key"
PORTAL = "https://portal.example"
API_POLICY = "default-src 'none'; frame-ancestors 'none'"
GENERATED_ID = re.compile(r"^[0-9a-f]{32}$")
OFFER = {
    "provider": "digitalocean",
    "gpu": "h100-sxm",
    "pricing": "on_demand",
    "usd_per_gpu_hour": 2.5,
    "as_of": "2026-11-01",
    "source": "observability test",
}


def settings(url: str, **overrides: Any) -> Settings:
    chosen: dict[str, Any] = {"database_url": url, "api_keys": (KEY,), "rate_limit_per_minute": 0}
    return Settings(**(chosen | overrides))


@pytest.fixture(scope="module")
async def observed(private_sqlite_url: str) -> AsyncIterator[Client]:
    async with AsyncTestClient(app=create_app(settings(private_sqlite_url))) as client:
        yield client


@pytest.fixture(scope="module")
async def limited(private_sqlite_url: str) -> AsyncIterator[Client]:
    """One request a minute, no burst: the second request of the module is a 429."""
    app = create_app(settings(private_sqlite_url, rate_limit_per_minute=1, rate_limit_burst=1))
    async with AsyncTestClient(app=app) as client:
        yield client


@pytest.fixture(scope="module")
async def cors(private_sqlite_url: str) -> AsyncIterator[Client]:
    async with AsyncTestClient(app=create_app(settings(private_sqlite_url, cors_origins=(PORTAL,)))) as client:
        yield client


def preflight(origin: str, method: str = "POST", headers: str = "Content-Type, X-API-Key, X-Request-ID") -> Request:
    async def send(client: Client) -> httpx.Response:
        asked = {"Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers}
        return await client.options("/v1/recommendations", headers=asked)

    return send


async def etag_revalidation(client: Client) -> httpx.Response:
    etag = (await client.get("/v1/gpus/h200")).headers["etag"]
    return await client.get("/v1/gpus/h200", headers={"If-None-Match": etag})


async def over_the_limit(client: Client) -> httpx.Response:
    await client.get("/v1/providers")
    return await client.get("/v1/providers")


# One request per kind of answer: (name, expected status, the request).
ANSWERS: list[tuple[str, int, Request]] = [
    ("json", 200, lambda c: c.get("/v1/gpus/h100-sxm")),
    ("list", 200, lambda c: c.get("/v1/offers?limit=2")),
    ("post", 200, lambda c: c.post("/v1/tco", json={"gpu": "h100-sxm"})),
    ("not modified", 304, etag_revalidation),
    ("invalid query", 400, lambda c: c.get("/v1/gpus?limit=0")),
    ("invalid body", 400, lambda c: c.post("/v1/tco", content=b"{")),
    ("no api key", 401, lambda c: c.put("/v1/admin/offers/x", json=OFFER)),
    ("unknown id", 404, lambda c: c.get("/v1/gpus/no-such-gpu")),
    ("unknown route", 404, lambda c: c.get("/v1/nothing-here")),
    ("wrong method", 405, lambda c: c.put("/v1/gpus")),
    ("body too large", 413, lambda c: c.post("/v1/tco", content=b" " * 70_000)),
    ("wrong media type", 415, lambda c: c.post("/v1/tco", content=b"{}", headers={"Content-Type": "text/plain"})),
    ("liveness", 200, lambda c: c.get("/health/live")),
    ("metrics", 200, lambda c: c.get("/metrics")),
    ("openapi document", 200, lambda c: c.get("/schema/openapi.json")),
]
ANSWER_IDS = [name for name, _, _ in ANSWERS]


# --- Security headers --------------------------------------------------------------------------------------------


def assert_api_headers(response: httpx.Response) -> None:
    where = (response.request.method, response.request.url.path, response.status_code, dict(response.headers))
    assert response.headers.get("x-content-type-options") == "nosniff", where
    assert response.headers.get("referrer-policy") == "no-referrer", where
    assert response.headers.get("content-security-policy") == API_POLICY, where
    assert response.headers.get("x-frame-options") == "DENY", where


@pytest.mark.parametrize(("name", "status", "request_"), ANSWERS, ids=ANSWER_IDS)
async def test_every_api_answer_has_the_security_headers(
    observed: Client, name: str, status: int, request_: Request
) -> None:
    response = await request_(observed)
    assert response.status_code == status, (name, response.text[:300])
    assert_api_headers(response)


async def test_a_429_has_the_security_headers(limited: Client) -> None:
    response = await over_the_limit(limited)
    assert response.status_code == 429
    assert_api_headers(response)


class _Resources(HTMLParser):
    """The scripts and stylesheets an HTML page loads."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.styles: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "script" and values.get("src"):
            self.scripts.append(values["src"])
        if tag == "link" and values.get("rel") == "stylesheet":
            self.styles.append(values["href"])


def policy_allows(policy: str, directive: str, url: str) -> bool:
    """Whether a Content-Security-Policy lets the page load `url` under `directive` (falling back to default-src)."""
    directives = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = words[1:]
    sources = directives.get(directive, directives.get("default-src", ["*"]))
    for source in sources:
        if source in ("*", "https:") and url.startswith("https://"):
            return True
        if not source.startswith("'") and url.startswith(source.rstrip("*")):
            return True
        if source == "'self'" and url.startswith("/"):
            return True
    return False


async def test_the_schema_page_may_load_what_it_uses_and_may_not_be_framed(observed: Client) -> None:
    # Litestar's page sets no policy of its own, so it gets whatever the middleware adds: that policy must still let
    # the browser load the page's script and stylesheet and fetch the OpenAPI document.
    page = await observed.get("/schema")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers.get("x-content-type-options") == "nosniff"
    policy = page.headers.get("content-security-policy", "")
    assert "frame-ancestors 'none'" in policy or page.headers.get("x-frame-options") == "DENY", page.headers
    resources = _Resources()
    resources.feed(page.text)
    assert resources.scripts, page.text
    blocked = [url for url in resources.scripts if not policy_allows(policy, "script-src", url)]
    blocked += [url for url in resources.styles if not policy_allows(policy, "style-src", url)]
    if not policy_allows(policy, "connect-src", "/schema/openapi.json"):
        blocked.append("/schema/openapi.json (connect-src)")
    assert not blocked, (policy, blocked)


# --- CORS --------------------------------------------------------------------------------------------------------


def listed(header: str | None) -> set[str]:
    return {item.strip().lower() for item in (header or "").split(",") if item.strip()}


async def test_a_configured_origin_may_call_with_the_api_key_and_request_id(cors: Client) -> None:
    response = await preflight(PORTAL)(cors)
    assert response.status_code in (200, 204), response.text
    assert response.headers["access-control-allow-origin"] == PORTAL
    assert {"x-api-key", "x-request-id", "content-type"} <= listed(response.headers["access-control-allow-headers"])
    assert "post" in listed(response.headers["access-control-allow-methods"])
    put = await preflight(PORTAL, "PUT", "X-API-Key")(cors)
    assert put.headers["access-control-allow-origin"] == PORTAL and "put" in listed(
        put.headers["access-control-allow-methods"]
    )
    answer = await cors.get("/v1/gpus/h100-sxm", headers={"Origin": PORTAL})
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == PORTAL
    exposed = listed(answer.headers["access-control-expose-headers"])
    assert {"x-request-id", "etag", "retry-after", "ratelimit-remaining"} <= exposed


async def test_another_origin_is_not_allowed(cors: Client) -> None:
    for response in (
        await preflight("https://evil.example")(cors),
        await preflight("https://portal.example.evil.example")(cors),
        await preflight("http://portal.example")(cors),
        await cors.get("/v1/gpus/h100-sxm", headers={"Origin": "https://evil.example"}),
        await cors.post("/v1/tco", json={"gpu": "h100-sxm"}, headers={"Origin": "null"}),
    ):
        assert "access-control-allow-origin" not in response.headers, (response.request.headers, response.headers)
        assert response.status_code != 500


async def test_without_origins_configured_there_are_no_cors_headers(observed: Client) -> None:
    for response in (
        await preflight(PORTAL)(observed),
        await observed.get("/v1/gpus/h100-sxm", headers={"Origin": PORTAL}),
        await observed.post("/v1/tco", json={"gpu": "h100-sxm"}, headers={"Origin": PORTAL}),
    ):
        cors_headers = [name for name in response.headers if name.lower().startswith("access-control-")]
        assert not cors_headers, (response.request.method, dict(response.headers))


async def test_cors_keeps_the_vary_header_the_answer_needs(cors: Client) -> None:
    # The comparison depends on Accept-Language and is publicly cacheable: a cache must not serve one language's
    # answer for another just because the request came from the portal.
    response = await cors.get("/v1/gpus/compare?ids=h100-sxm,h200", headers={"Origin": PORTAL})
    assert response.status_code == 200 and "public" in response.headers["cache-control"]
    vary = listed(", ".join(response.headers.get_list("vary")))
    assert {"accept-language", "origin"} <= vary, response.headers


async def test_with_cors_on_cacheable_answers_vary_on_origin(cors: Client) -> None:
    # Otherwise a shared cache that stored the answer to one origin (without Access-Control-Allow-Origin) serves it
    # to the portal, and the browser refuses it for the next 300 s.
    for origin in (None, "https://evil.example", PORTAL):
        response = await cors.get("/v1/gpus/h100-sxm", headers={"Origin": origin} if origin else {})
        assert "public" in response.headers["cache-control"]
        assert "origin" in listed(", ".join(response.headers.get_list("vary"))), (origin, dict(response.headers))


# --- Request ids -------------------------------------------------------------------------------------------------

ACCEPTED_IDS = ["abc", "A" * 128, "0f8fad5b-d9cb-469f-a165-70867728950e", "trace.id_1:2/3+4=5-6", "x"]
REJECTED_IDS = {
    "too long": b"A" * 129,
    "space": b"has space",
    "crlf": b"abc\r\nX-Injected: 1",
    "trailing newline": b"abc\n",
    "newline": b"a\nb",
    "tab": b"a\tb",
    "latin-1": "café".encode("latin-1"),
    "utf-8": "запрос-1".encode(),
    "empty": b"",
    "markup": b"<script>",
    "semicolon": b"a;b",
}


@pytest.mark.parametrize("offered", ACCEPTED_IDS)
async def test_a_safe_request_id_is_echoed(observed: Client, offered: str) -> None:
    response = await observed.get("/v1/gpus/h100-sxm", headers={"X-Request-ID": offered})
    assert response.headers.get_list("x-request-id") == [offered]


@pytest.mark.parametrize("offered", REJECTED_IDS.values(), ids=REJECTED_IDS.keys())
async def test_an_unsafe_request_id_is_replaced_by_a_new_one(observed: Client, offered: bytes) -> None:
    response = await observed.get("/v1/gpus/h100-sxm", headers=[(b"X-Request-ID", offered)])
    ids = response.headers.get_list("x-request-id")
    assert len(ids) == 1 and GENERATED_ID.fullmatch(ids[0]) and ids[0].encode() != offered, (offered, ids)
    assert "x-injected" not in response.headers


async def test_generated_request_ids_differ(observed: Client) -> None:
    ids = {(await observed.get("/health/live")).headers["x-request-id"] for _ in range(20)}
    assert len(ids) == 20 and all(GENERATED_ID.fullmatch(value) for value in ids)


@pytest.mark.parametrize(("name", "status", "request_"), ANSWERS, ids=ANSWER_IDS)
async def test_every_answer_carries_the_request_id(observed: Client, name: str, status: int, request_: Request) -> None:
    observed.headers["X-Request-ID"] = f"every-answer-{status}"
    try:
        response = await request_(observed)
    finally:
        del observed.headers["X-Request-ID"]
    assert response.status_code == status, (name, response.text[:300])
    assert response.headers.get_list("x-request-id") == [f"every-answer-{status}"], (name, dict(response.headers))


async def test_a_429_carries_the_request_id(limited: Client) -> None:
    limited.headers["X-Request-ID"] = "limited-1"
    try:
        response = await over_the_limit(limited)
    finally:
        del limited.headers["X-Request-ID"]
    assert response.status_code == 429 and response.headers["x-request-id"] == "limited-1"


async def test_cors_answers_carry_a_request_id(cors: Client) -> None:
    allowed = await preflight(PORTAL)(cors)
    refused = await preflight("https://evil.example")(cors)
    for response in (allowed, refused):
        request_id = response.headers.get("x-request-id", "")
        assert GENERATED_ID.fullmatch(request_id), (response.status_code, response.headers)


# --- Logs --------------------------------------------------------------------------------------------------------


@pytest.fixture
def access_lines() -> Iterator[io.StringIO]:
    """Every line the access logger writes during the test, formatted by JsonFormatter."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("gpu_advisor.access")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def parsed(stream: io.StringIO) -> list[dict[str, Any]]:
    lines = stream.getvalue().splitlines()
    return [json.loads(line) for line in lines]


ACCESS_CASES: list[tuple[str, str, int]] = [
    ("GET", "/v1/gpus/compare?ids=h100-sxm,h200&lang=zh", 200),
    ("GET", "/v1/gpus?limit=0", 400),
    ("POST", "/v1/tco", 200),
    ("GET", "/v1/nothing-here", 404),
]


@pytest.mark.parametrize(("method", "url", "status"), ACCESS_CASES, ids=[f"{m} {u}" for m, u, _ in ACCESS_CASES])
async def test_each_request_writes_one_json_access_line(
    observed: Client, access_lines: io.StringIO, method: str, url: str, status: int
) -> None:
    body = {"gpu": "h100-sxm"} if method == "POST" else None
    response = await observed.request(method, url, json=body, headers={"X-Request-ID": "log-line-1"})
    assert response.status_code == status
    lines = parsed(access_lines)
    assert len(lines) == 1, access_lines.getvalue()
    line = lines[0]
    path = url.split("?")[0]
    assert line["logger"] == "gpu_advisor.access" and line["level"] == "INFO"
    assert line["request_id"] == "log-line-1"
    assert (line["method"], line["path"], line["status"]) == (method, path, status)
    assert line["message"] == f"{method} {path} {status}"
    assert isinstance(line["duration_ms"], float | int) and line["duration_ms"] >= 0
    assert line["client"] == "testclient"
    assert datetime.fromisoformat(line["time"]).tzinfo is not None


async def test_the_access_line_of_a_429_says_429(limited: Client, access_lines: io.StringIO) -> None:
    response = await over_the_limit(limited)
    assert response.status_code == 429
    statuses = [line["status"] for line in parsed(access_lines)]
    assert statuses[-1] == 429 and parsed(access_lines)[-1]["request_id"] == response.headers["x-request-id"]


def record(message: str, *args: Any, exc_info: Any = None, **extra: Any) -> logging.LogRecord:
    made = logging.getLogger("gpu_advisor.test").makeRecord(
        "gpu_advisor.test", logging.WARNING, __file__, 1, message, args, exc_info, extra=extra
    )
    return made


def test_the_formatter_writes_one_json_object_per_line_with_the_request_id() -> None:
    formatter = JsonFormatter()
    outside = json.loads(formatter.format(record("plain %s", "text")))
    assert outside["message"] == "plain text" and "request_id" not in outside
    assert (outside["level"], outside["logger"]) == ("WARNING", "gpu_advisor.test")
    token = request_id_var.set("req-42")
    try:
        text = formatter.format(record("two\nlines", when=datetime(2026, 1, 2), count=3))
    finally:
        request_id_var.reset(token)
    assert "\n" not in text
    inside = json.loads(text)
    assert inside["request_id"] == "req-42" and inside["message"] == "two\nlines"
    assert inside["count"] == 3 and inside["when"].startswith("2026-01-02")


def test_the_formatter_includes_the_exception() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        text = JsonFormatter().format(record("failed", exc_info=sys.exc_info()))
    assert "\n" not in text
    entry = json.loads(text)
    assert entry["message"] == "failed"
    assert "Traceback" in entry["exception"] and "ValueError: boom" in entry["exception"]


@pytest.fixture
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    names = ("uvicorn", "uvicorn.error", "uvicorn.access")
    loggers = {name: (logging.getLogger(name).handlers[:], logging.getLogger(name).propagate) for name in names}
    disabled = logging.getLogger("uvicorn.access").disabled
    try:
        yield
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
        for name, (handlers, propagate) in loggers.items():
            logging.getLogger(name).handlers[:] = handlers
            logging.getLogger(name).propagate = propagate
        logging.getLogger("uvicorn.access").disabled = disabled


def test_configure_logging_switches_between_json_and_text(
    restored_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging("DEBUG", "json")
    root = logging.getLogger()
    assert len(root.handlers) == 1 and isinstance(root.handlers[0].formatter, JsonFormatter)
    assert root.level == logging.DEBUG and logging.getLogger("uvicorn.access").disabled
    logging.getLogger("gpu_advisor.test").debug("in json %d", 1)
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert json.loads(line)["message"] == "in json 1"

    configure_logging("WARNING", "text")
    assert len(root.handlers) == 1 and not isinstance(root.handlers[0].formatter, JsonFormatter)
    logging.getLogger("gpu_advisor.test").info("hidden")
    logging.getLogger("gpu_advisor.test").warning("in text")
    output = capsys.readouterr().err
    assert "hidden" not in output
    line = output.strip().splitlines()[-1]
    assert line.endswith("WARNING gpu_advisor.test in text")
    with pytest.raises(json.JSONDecodeError):
        json.loads(line)


# --- Metrics -----------------------------------------------------------------------------------------------------


def sample(text: str, name: str, **labels: str) -> float:
    """The sum of the samples called `name` whose labels include `labels`; 0 when there are none."""
    total = 0.0
    for family in text_string_to_metric_families(text):
        for item in family.samples:
            if item.name == name and all(item.labels.get(key) == value for key, value in labels.items()):
                total += item.value
    return total


async def metrics(client: Client) -> str:
    response = await client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return response.text


async def test_requests_are_counted_and_timed_per_route(observed: Client) -> None:
    route = {"method": "GET", "path": "/v1/gpus/{gpu_id}"}
    before = await metrics(observed)
    for gpu in ("h100-sxm", "h200", "mi300x"):
        assert (await observed.get(f"/v1/gpus/{gpu}")).status_code == 200
    assert (await observed.get("/v1/gpus/no-such-gpu")).status_code == 404
    after = await metrics(observed)

    def delta(name: str, **labels: str) -> float:
        return sample(after, name, **labels) - sample(before, name, **labels)

    assert delta("gpu_advisor_requests_total", **route, status_code="200") == 3
    assert delta("gpu_advisor_requests_total", **route, status_code="404") == 1
    assert delta("gpu_advisor_request_duration_seconds_count", **route) == 4
    assert delta("gpu_advisor_request_duration_seconds_bucket", **route, le="+Inf") == 4
    assert sample(after, "gpu_advisor_request_duration_seconds_sum", **route) > 0
    # Grouped by route: the concrete path never becomes a label (unbounded cardinality).
    assert 'path="/v1/gpus/h200"' not in after


async def test_cache_lookups_count_misses_then_hits(private_sqlite_url: str) -> None:
    async with AsyncTestClient(app=create_app(settings(private_sqlite_url))) as client:
        before = await metrics(client)
        await client.get("/v1/systems/dgx-h100")
        middle = await metrics(client)
        await client.get("/v1/systems/dgx-h100")
        after = await metrics(client)
    lookups = "gpu_advisor_cache_lookups_total"
    assert sample(middle, lookups, backend="local", result="miss") - sample(before, lookups, result="miss") == 1
    assert sample(middle, lookups, result="hit") == sample(before, lookups, result="hit")
    assert sample(after, lookups, backend="local", result="hit") - sample(middle, lookups, result="hit") == 1


async def test_the_catalog_version_and_reloads_are_exported(private_sqlite_url: str) -> None:
    async with AsyncTestClient(app=create_app(settings(private_sqlite_url))) as client:
        ready = (await client.get("/health/ready")).json()
        before = await metrics(client)
        families = text_string_to_metric_families(before)
        info = [s for family in families for s in family.samples if s.name == "gpu_advisor_catalog_info"]
        assert [(s.labels["version"], s.labels["source"], s.value) for s in info] == [
            (ready["catalog_version"], ready["catalog_source"], 1.0)
        ]
        put = await client.put("/v1/admin/offers/observability-test-offer", json=OFFER, headers={"X-API-Key": KEY})
        assert put.status_code in (200, 201), put.text
        changed = (await client.get("/health/ready")).json()["catalog_version"]
        after = await metrics(client)
    assert changed != ready["catalog_version"]
    reloads = "gpu_advisor_catalog_reloads_total"
    assert sample(after, reloads) - sample(before, reloads) >= 1
    assert sample(after, "gpu_advisor_catalog_info", version=changed) == 1
    assert sample(after, "gpu_advisor_catalog_info", version=ready["catalog_version"]) == 0


async def test_429s_are_counted(private_sqlite_url: str) -> None:
    app = create_app(settings(private_sqlite_url, rate_limit_per_minute=1, rate_limit_burst=2))
    async with AsyncTestClient(app=app) as client:
        before = await metrics(client)
        statuses = [(await client.get("/v1/providers")).status_code for _ in range(5)]
        after = await metrics(client)
    assert statuses == [200, 200, 429, 429, 429]
    assert sample(after, "gpu_advisor_rate_limited_total") - sample(before, "gpu_advisor_rate_limited_total") == 3


def test_auto_log_format_is_text_on_a_terminal_and_json_elsewhere(restored_logging: None, tmp_path: Path) -> None:
    leader, follower = os.openpty()
    with os.fdopen(follower, "w", closefd=True) as terminal, (tmp_path / "log").open("w") as file:
        assert terminal.isatty()
        for stream, log_format, expected in [
            (terminal, "auto", "text"),
            (file, "auto", "json"),
            (terminal, "json", "json"),
            (file, "text", "text"),
        ]:
            configure_logging("INFO", log_format, stream)
            is_json = isinstance(logging.getLogger().handlers[0].formatter, JsonFormatter)
            assert is_json == (expected == "json"), (stream, log_format)
    os.close(leader)
    assert Settings().log_format == "auto"


def test_json_lines_carry_no_ansi_colour_codes() -> None:
    # uvicorn passes its message again, coloured, as `color_message`.
    entry = logging.makeLogRecord({"msg": "Started server process", "color_message": "\x1b[36mStarted\x1b[0m"})
    line = JsonFormatter().format(entry)
    assert "\x1b" not in line and "\\u001b" not in line and json.loads(line)["message"] == "Started server process"
