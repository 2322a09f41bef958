"""Hostile input: oversized, mislabelled, malformed and out-of-range bodies, and hostile query and path values.

Every answer is a deliberate one: 200, or a 4xx problem document that names what is wrong and gives nothing of the
implementation away. Numbers that come back are finite. Nothing a client sends through a read changes the catalog.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar import Litestar
from litestar.testing import AsyncTestClient

from api.app import create_app
from api.settings import Settings
from tests.conftest import LiveServer

Client = AsyncTestClient[Litestar]

KEY = "hostile-input-key"
ADMIN = {"X-API-Key": KEY}
MAX_BODY = Settings().max_body_bytes
MAX_IMPORT = Settings().max_import_bytes
SPEC: dict[str, Any] = json.loads((Path(__file__).parents[2] / "openapi" / "openapi.json").read_text())
SCHEMAS: dict[str, Any] = SPEC["components"]["schemas"]
PROBLEM = "application/problem+json"
# What an error body must never show: a traceback, SQL, the driver or the code's files.
# Source files show up in tracebacks as 'name.py", line N' or 'name.py:N'; a launch command's script name is no leak.
LEAKS = ("Traceback", 'File "', "sqlalchemy", "asyncpg", "aiosqlite", "SELECT ", "/work/", '.py"', ".py:")
FUZZ = settings(max_examples=50, deadline=None, derandomize=True, database=None)
FUZZ_WITH_FIXTURES = settings(FUZZ, suppress_health_check=[HealthCheck.function_scoped_fixture])

WORKLOADS: dict[str, dict[str, Any]] = {
    "inference": {"kind": "inference", "model": "llama-3.1-8b", "concurrency": 8},
    "training": {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e9, "target_days": 30},
    "fine_tuning": {"kind": "fine_tuning", "model": "llama-3.1-8b", "method": "lora", "train_tokens": 1e8},
    "image_generation": {"kind": "image_generation", "model": "sdxl", "images_per_hour": 100},
}
WORKLOAD_SCHEMAS = {
    "inference": "InferenceWorkload",
    "training": "TrainingWorkload",
    "fine_tuning": "FineTuningWorkload",
    "image_generation": "ImageGenerationWorkload",
}
CUSTOM_MODEL = {"params_b": 7.0, "layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8}
OFFER_BODY = {
    "provider": "digitalocean",
    "gpu": "h100-sxm",
    "pricing": "on_demand",
    "usd_per_gpu_hour": 3.39,
    "as_of": "2026-05-28",
    "source": "hostile input test",
}
OFFER_PATH = "/v1/admin/offers/hostile-input-offer"
TCO = {"gpu": "h100-sxm", "gpu_count": 8, "years": 3, "utilization": 0.6}
ESTIMATE = {"workload": WORKLOADS["inference"], "gpu": "h100-sxm", "gpu_count": 8}
RECOMMENDATION = {"workload": WORKLOADS["inference"], "limit": 3}
JSON_OPERATIONS = [
    ("POST", "/v1/recommendations", RECOMMENDATION),
    ("POST", "/v1/estimates", ESTIMATE),
    ("POST", "/v1/tco", TCO),
    ("PUT", OFFER_PATH, OFFER_BODY),
]
HOLE = '"__value__"'


@pytest.fixture(scope="module")
def hostile_app(private_sqlite_url: str) -> Litestar:
    # Unlimited: this module sends well over a thousand requests from one address.
    return create_app(Settings(database_url=private_sqlite_url, api_keys=(KEY,), rate_limit_per_minute=0))


@pytest.fixture(scope="module")
async def hostile(hostile_app: Litestar) -> AsyncIterator[Client]:
    async with AsyncTestClient(app=hostile_app) as client:
        yield client


@pytest.fixture(scope="module")
def live(private_sqlite_url: str) -> Iterator[LiveServer]:
    """The same service over real HTTP, for chunked bodies (the in-process client cannot stream one)."""
    settings = Settings(database_url=private_sqlite_url, api_keys=(KEY,), rate_limit_per_minute=0)
    with LiveServer(create_app(settings)) as server:
        yield server


def assert_problem(response: httpx.Response, status: int, sent: str = "") -> dict[str, Any]:
    """A problem document of that status that leaks nothing (beyond what was `sent`); returned parsed."""
    request = f"{response.request.method} {str(response.request.url)[:300]}"
    assert response.status_code == status, (request, response.status_code, response.text[:500])
    assert response.headers["content-type"].startswith(PROBLEM), (request, response.headers)
    assert_no_leak(response, sent)
    problem: dict[str, Any] = response.json()
    assert problem["status"] == status and problem["title"] and problem["detail"], problem
    return problem


def assert_no_leak(response: httpx.Response, sent: str = "") -> None:
    # A problem may quote the client's own value back; only what the client did not send is a leak.
    for leak in (marker for marker in LEAKS if marker not in sent):
        assert leak not in response.text, (response.request.method, str(response.request.url)[:300], response.text)


def field_names(problem: dict[str, Any]) -> list[str]:
    """Each error's field as its dotted path and as its last name (`workload.custom_model.layers` -> `layers`)."""
    names = []
    for error in problem.get("errors") or []:
        path = re.sub(r"\[\d+\]", "", error["field"])
        names += [path, path.rsplit(".", 1)[-1]]
    return names


def non_finite(value: Any, where: str = "$") -> list[str]:
    """Where a decoded JSON value holds a NaN or an infinity."""
    if isinstance(value, float) and not math.isfinite(value):
        return [where]
    if isinstance(value, dict):
        return [bad for key, item in value.items() for bad in non_finite(item, f"{where}.{key}")]
    if isinstance(value, list):
        return [bad for index, item in enumerate(value) for bad in non_finite(item, f"{where}[{index}]")]
    return []


def assert_finite_answer(response: httpx.Response, sent: bytes) -> None:
    # Python's json reads NaN and Infinity; a standard JSON client could not read the answer at all.
    decoded = json.loads(response.text)
    assert not non_finite(decoded), (sent[:300], non_finite(decoded))


def with_value(body: dict[str, Any], literal: str) -> bytes:
    """The body (holding HOLE once) with HOLE replaced by a raw JSON literal, e.g. 1e309 or NaN."""
    text = json.dumps(body)
    assert text.count(HOLE) == 1
    return text.replace(HOLE, literal).encode()


async def send(client: Client, method: str, path: str, content: bytes, headers: dict[str, str] | None = None) -> Any:
    return await client.request(method, path, content=content, headers={**ADMIN, **(headers or {})})


# --- Body size ---------------------------------------------------------------------------------------------------


def padded(body: dict[str, Any], size: int) -> bytes:
    """The body as JSON followed by whitespace up to exactly `size` bytes (still valid JSON)."""
    raw = json.dumps(body).encode()
    assert len(raw) <= size
    return raw + b" " * (size - len(raw))


@pytest.mark.parametrize(("method", "path", "body"), JSON_OPERATIONS, ids=[op[1] for op in JSON_OPERATIONS])
async def test_a_body_over_the_limit_is_a_413_naming_the_limit(
    hostile: Client, method: str, path: str, body: dict[str, Any]
) -> None:
    at_limit = await send(hostile, method, path, padded(body, MAX_BODY))
    assert at_limit.status_code in (200, 201), (path, at_limit.status_code, at_limit.text[:300])
    over = await send(hostile, method, path, padded(body, MAX_BODY + 1))
    problem = assert_problem(over, 413)
    assert str(MAX_BODY) in problem["detail"], problem


async def test_the_body_limit_comes_from_the_settings(private_sqlite_url: str) -> None:
    app = create_app(Settings(database_url=private_sqlite_url, rate_limit_per_minute=0, max_body_bytes=300))
    async with AsyncTestClient(app=app) as client:
        assert (await client.post("/v1/tco", content=padded(TCO, 300))).status_code == 200
        problem = assert_problem(await client.post("/v1/tco", content=padded(TCO, 301)), 413)
        assert "300" in problem["detail"], problem


def offers_csv(size: int) -> bytes:
    """A CSV import of at least `size` bytes: the header and rows that are all wrong in the same way."""
    header = "id,provider,gpu,gpus_per_instance,pricing,usd_per_gpu_hour,instance,vcpus,ram_gb,bare_metal,region,as_of,"
    header += "source,notes\n"
    row = "hostile-{n},nobody,no-such-gpu,1,on_demand,1.0,,,,,,2026-01-01,test,\n"
    lines = [header]
    total, n = len(header), 0
    while total < size:
        lines.append(row.format(n=n))
        total += len(lines[-1])
        n += 1
    return "".join(lines).encode()


async def test_the_bulk_import_has_its_own_larger_limit(hostile: Client) -> None:
    csv = {"Content-Type": "text/csv"}
    # Bigger than any other body may be, within the import limit: read, and rejected for its content.
    bigger = await send(hostile, "POST", "/v1/admin/offers:bulk", offers_csv(MAX_BODY * 2), csv)
    problem = assert_problem(bigger, 400)
    assert "Nothing was changed" in problem["detail"], problem
    too_big = await send(hostile, "POST", "/v1/admin/offers:bulk", b"x" * (MAX_IMPORT + 1), csv)
    problem = assert_problem(too_big, 413)
    assert str(MAX_IMPORT) in problem["detail"], problem


async def chunks(total: int, size: int = 8192) -> AsyncIterator[bytes]:
    sent = 0
    while sent < total:
        part = min(size, total - sent)
        sent += part
        yield b" " * part


async def test_chunked_bodies_are_held_to_the_same_limits(live: LiveServer) -> None:
    async def body(prefix: bytes, padding: int) -> AsyncIterator[bytes]:
        yield prefix
        async for chunk in chunks(padding):
            yield chunk

    async with httpx.AsyncClient(base_url=live.url, timeout=30, headers=ADMIN) as http:
        tco = json.dumps(TCO).encode()
        small = await http.post("/v1/tco", content=body(tco, 100))
        assert small.status_code == 200 and "content-length" not in small.request.headers, small.text[:300]
        assert small.request.headers["transfer-encoding"] == "chunked"
        over = await http.post("/v1/tco", content=body(tco, MAX_BODY))
        assert str(MAX_BODY) in assert_problem(over, 413)["detail"]
        csv = {"Content-Type": "text/csv"}
        import_over = await http.post("/v1/admin/offers:bulk", content=body(b"id", MAX_IMPORT), headers=csv)
        assert str(MAX_IMPORT) in assert_problem(import_over, 413)["detail"]


# --- Media types -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/xml",
        "text/csv",
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
    ],
)
@pytest.mark.parametrize(("method", "path", "body"), JSON_OPERATIONS, ids=[op[1] for op in JSON_OPERATIONS])
async def test_a_body_the_operation_does_not_read_is_a_415(
    hostile: Client, method: str, path: str, body: dict[str, Any], content_type: str
) -> None:
    response = await send(hostile, method, path, json.dumps(body).encode(), {"Content-Type": content_type})
    problem = assert_problem(response, 415)
    assert content_type.split(";")[0] in problem["detail"] and "application/json" in problem["detail"], problem


@pytest.mark.parametrize(
    "content_type",
    [None, "application/json", "application/json; charset=utf-8", "Application/JSON", "application/vnd.custom+json"],
)
@pytest.mark.parametrize(("method", "path", "body"), JSON_OPERATIONS, ids=[op[1] for op in JSON_OPERATIONS])
async def test_json_bodies_are_read_with_or_without_a_content_type(
    hostile: Client, method: str, path: str, body: dict[str, Any], content_type: str | None
) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    response = await send(hostile, method, path, json.dumps(body).encode(), headers)
    assert response.status_code in (200, 201), (content_type, response.status_code, response.text[:300])


async def test_the_bulk_import_reads_json_and_csv_only(hostile: Client) -> None:
    offers = json.dumps({"offers": [OFFER_BODY | {"id": "hostile-bulk-offer"}]}).encode()
    assert (await send(hostile, "POST", "/v1/admin/offers:bulk", offers)).status_code == 200
    csv = offers_csv(1)
    assert (await send(hostile, "POST", "/v1/admin/offers:bulk", csv, {"Content-Type": "text/csv"})).status_code == 400
    for content_type in ("text/plain", "application/xml", "text/tab-separated-values"):
        problem = assert_problem(
            await send(hostile, "POST", "/v1/admin/offers:bulk", csv, {"Content-Type": content_type}), 415
        )
        assert "text/csv" in problem["detail"] and content_type in problem["detail"], problem


# --- Malformed JSON ----------------------------------------------------------------------------------------------

MALFORMED = {
    "truncated": b'{"gpu": "h100-sxm"',
    "trailing garbage": b'{"gpu": "h100-sxm"} x',
    "single quotes": b"{'gpu': 'h100-sxm'}",
    "comment": b'{"gpu": "h100-sxm" /* x */}',
    "trailing comma": b'{"gpu": "h100-sxm",}',
    "invalid utf-8": b'{"gpu": "\xff\xfe"}',
    "utf-8 encoded surrogate": b'{"gpu": "\xed\xa0\x80"}',
    "lone high surrogate escape": b'{"gpu": "\\ud800"}',
    "lone low surrogate escape": b'{"gpu": "\\udfff"}',
    "high surrogate then text": b'{"gpu": "\\ud800abc"}',
    "byte order mark": b'\xef\xbb\xbf{"gpu": "h100-sxm"}',
    "utf-16": '{"gpu": "h100-sxm"}'.encode("utf-16"),
    "bare NaN": b"NaN",
    "nul byte": b'{"gpu": "h100\x00"}',
    "unquoted key": b'{gpu: "h100-sxm"}',
}


@pytest.mark.parametrize("raw", MALFORMED.values(), ids=MALFORMED.keys())
@pytest.mark.parametrize(("method", "path", "body"), JSON_OPERATIONS, ids=[op[1] for op in JSON_OPERATIONS])
async def test_malformed_json_is_a_400_about_the_body(
    hostile: Client, method: str, path: str, body: dict[str, Any], raw: bytes
) -> None:
    problem = assert_problem(await send(hostile, method, path, raw), 400)
    assert problem["errors"], problem


@pytest.mark.parametrize(("method", "path", "body"), JSON_OPERATIONS, ids=[op[1] for op in JSON_OPERATIONS])
async def test_a_body_that_is_not_an_object_is_a_400_about_the_body(
    hostile: Client, method: str, path: str, body: dict[str, Any]
) -> None:
    # The API has no field called "data": that is the framework's name for the body and means nothing to a client.
    wrong = {}
    for raw in (b"", b"null", b"[]", b'"text"', b"42", b"true"):
        problem = assert_problem(await send(hostile, method, path, raw), 400)
        fields = [error["field"] for error in problem.get("errors") or []]
        if fields != ["body"] or "'data'" in problem["detail"]:
            wrong[raw.decode()] = f"errors {fields}, detail {problem['detail']!r}"
    assert not wrong, (method, path, wrong)


NESTING = {
    "arrays": lambda depth: b"[" * depth + b"]" * depth,
    "objects": lambda depth: b'{"a":' * depth + b"1" + b"}" * depth,
    "in the workload": lambda depth: b'{"workload": ' + b'{"kind": [' * depth + b"]}" * depth + b"}",
}


@pytest.mark.parametrize("depth", [1_000, 5_000])
@pytest.mark.parametrize("shape", NESTING.values(), ids=NESTING.keys())
@pytest.mark.parametrize("path", ["/v1/recommendations", "/v1/estimates", "/v1/tco"])
async def test_deeply_nested_json_is_a_400(hostile: Client, path: str, shape: Any, depth: int) -> None:
    raw = shape(depth)
    assert len(raw) <= MAX_BODY
    problem = assert_problem(await hostile.post(path, content=raw), 400)
    # The strict decoder stops at the first level that does not match the schema (a wrong type, an unknown
    # field) or at the nesting limit; each names what is wrong.
    assert problem["errors"] and problem["errors"][0]["field"], problem


async def test_deep_nesting_does_not_hurt_the_next_request(hostile: Client) -> None:
    for _ in range(20):
        await hostile.post("/v1/tco", content=b"[" * 30_000 + b"]" * 30_000)
    assert (await hostile.post("/v1/tco", json=TCO)).status_code == 200


# --- Numbers -----------------------------------------------------------------------------------------------------


def numeric_properties(schema: str) -> list[str]:
    """The properties of a schema in openapi.json that take a number or an integer."""
    found = []
    for name, prop in SCHEMAS[schema]["properties"].items():
        types: set[str] = set()
        for alternative in [prop, *prop.get("oneOf", [])]:
            kind = alternative.get("type")
            types |= set(kind if isinstance(kind, list) else [kind])
        if types & {"number", "integer"}:
            found.append(name)
    return found


def numeric_cases() -> list[tuple[str, str, dict[str, Any], str]]:
    """(method, path, body with HOLE in one numeric field, that field's name) for every numeric field of every body."""
    cases: list[tuple[str, str, dict[str, Any], str]] = []
    for kind, workload in WORKLOADS.items():
        for field in numeric_properties(WORKLOAD_SCHEMAS[kind]):
            holed = {**workload, field: "__value__"}
            cases.append(("POST", "/v1/recommendations", {"workload": holed, "limit": 3}, field))
            cases.append(("POST", "/v1/estimates", {**ESTIMATE, "workload": holed}, field))
        if kind != "image_generation":
            bare = {key: value for key, value in workload.items() if key != "model"}
            for field in numeric_properties("CustomModel"):
                custom = {**bare, "custom_model": {**CUSTOM_MODEL, field: "__value__"}}
                cases.append(("POST", "/v1/recommendations", {"workload": custom, "limit": 3}, field))
                cases.append(("POST", "/v1/estimates", {**ESTIMATE, "workload": custom}, field))
    for field in numeric_properties("Constraints"):
        cases.append(("POST", "/v1/recommendations", {**RECOMMENDATION, "constraints": {field: "__value__"}}, field))
    for field in numeric_properties("RecommendationRequest"):
        cases.append(("POST", "/v1/recommendations", {**RECOMMENDATION, field: "__value__"}, field))
    for field in numeric_properties("EstimateRequest"):
        cases.append(("POST", "/v1/estimates", {**ESTIMATE, field: "__value__"}, field))
    for field in numeric_properties("TcoRequest"):
        cases.append(("POST", "/v1/tco", {**TCO, field: "__value__"}, field))
    for field in numeric_properties("OfferWrite"):
        cases.append(("PUT", OFFER_PATH, {**OFFER_BODY, field: "__value__"}, field))
    return cases


NUMERIC_CASES = numeric_cases()
# Valid JSON numbers that no field can take, or only some.
EXTREME_NUMBERS = ["1e308", "-1e308", "-1", "0", "-0.0", "1" + "0" * 30, "1" + "0" * 400, "4.9e-324", "1e-400"]
NOT_JSON_NUMBERS = ["NaN", "Infinity", "-Infinity"]


def case_id(case: tuple[str, str, dict[str, Any], str]) -> str:
    _, path, body, field = case
    where = "custom_model" if "custom_model" in json.dumps(body) else body.get("workload", {}).get("kind", "")
    return f"{path.rsplit('/', 1)[-1]}-{where}-{field}"


def test_every_numeric_field_is_covered() -> None:
    fields = {field for _, _, _, field in NUMERIC_CASES}
    assert {"concurrency", "train_tokens", "lora_rank", "images_per_hour", "params_b", "utilization"} <= fields
    assert len(NUMERIC_CASES) > 100


@pytest.mark.parametrize(("method", "path", "body", "field"), NUMERIC_CASES, ids=[case_id(c) for c in NUMERIC_CASES])
async def test_extreme_numbers_are_rejected_naming_the_field_or_answered_finitely(
    hostile: Client, method: str, path: str, body: dict[str, Any], field: str
) -> None:
    failures = []
    for literal in EXTREME_NUMBERS:
        raw = with_value(body, literal)
        response = await send(hostile, method, path, raw)
        assert_no_leak(response)
        if response.status_code == 400:
            problem = response.json()
            if field not in field_names(problem):
                failures.append(f"{literal}: 400 naming {field_names(problem)[::2]}: {problem['detail']}")
        elif response.status_code in (200, 201):
            assert_finite_answer(response, raw)
        else:
            failures.append(f"{literal}: {response.status_code} {response.text[:200]}")
    assert not failures, (method, path, json.dumps(body), failures)


@pytest.mark.parametrize("path", sorted({case[1] for case in NUMERIC_CASES}))
async def test_numbers_beyond_float_range_are_a_400_naming_the_field(hostile: Client, path: str) -> None:
    # 1e309 is a JSON number (the grammar sets no range); it is too big for any field, and the answer must say which.
    wrong = []
    for method, case_path, body, field in NUMERIC_CASES:
        if case_path != path:
            continue
        for literal in ("1e309", "-1e309", "1" + "0" * 309 + ".0"):
            problem = assert_problem(await send(hostile, method, path, with_value(body, literal)), 400)
            if field not in field_names(problem):
                wrong.append(f"{field}={literal[:8]}: errors {field_names(problem)[::2]}")
    assert not wrong, (path, f"{len(wrong)} bodies", wrong[:6], problem)


@pytest.mark.parametrize(("method", "path", "body", "field"), NUMERIC_CASES, ids=[case_id(c) for c in NUMERIC_CASES])
async def test_nan_and_infinity_literals_are_a_400(
    hostile: Client, method: str, path: str, body: dict[str, Any], field: str
) -> None:
    for literal in NOT_JSON_NUMBERS:
        problem = assert_problem(await send(hostile, method, path, with_value(body, literal)), 400)
        # Not JSON at all: the body is what is wrong, unless the service can say which field held it.
        assert set(field_names(problem)) & {field, "body"}, (literal, problem)


finite_numbers = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.sampled_from([0, 1, -1, 5e-324, 1e-300, 0.5, 1e15, 2**63, 2**64]),
)


@FUZZ_WITH_FIXTURES
@given(case=st.sampled_from(NUMERIC_CASES), number=finite_numbers)
async def test_any_number_in_any_field_is_answered_finitely_or_rejected_naming_it(
    hostile: Client, case: tuple[str, str, dict[str, Any], str], number: float
) -> None:
    method, path, body, field = case
    raw = with_value(body, json.dumps(number))
    response = await send(hostile, method, path, raw)
    assert_no_leak(response)
    assert response.status_code in (200, 201, 400), (raw, response.status_code, response.text[:300])
    if response.status_code == 400:
        assert field in field_names(response.json()), (raw, response.text[:300])
    else:
        assert_finite_answer(response, raw)


# --- Enumerations ------------------------------------------------------------------------------------------------

ENUMS: list[tuple[str, dict[str, Any], str]] = [
    ("/v1/recommendations", {"workload": {**WORKLOADS["inference"], "kind": "quantum"}}, "kind"),
    ("/v1/estimates", {**ESTIMATE, "workload": {**WORKLOADS["inference"], "kind": "Inference"}}, "kind"),
    ("/v1/recommendations", {"workload": {**WORKLOADS["inference"], "precision": "fp3"}}, "precision"),
    ("/v1/recommendations", {"workload": {**WORKLOADS["inference"], "kv_cache_precision": "q4"}}, "kv_cache_precision"),
    ("/v1/recommendations", {"workload": {**WORKLOADS["training"], "precision": "int4"}}, "precision"),
    ("/v1/recommendations", {"workload": {**WORKLOADS["fine_tuning"], "precision": "BF16"}}, "precision"),
    ("/v1/recommendations", {"workload": {**WORKLOADS["image_generation"], "precision": "fp4"}}, "precision"),
    ("/v1/recommendations", {"workload": {**WORKLOADS["fine_tuning"], "method": "magic"}}, "method"),
    ("/v1/recommendations", {"workload": {**WORKLOADS["training"], "optimizer": "sgd"}}, "optimizer"),
    (
        "/v1/recommendations",
        {"workload": {"kind": "inference", "custom_model": {**CUSTOM_MODEL, "attention": "linear"}}},
        "attention",
    ),
    ("/v1/recommendations", {**RECOMMENDATION, "objective": "fastest"}, "objective"),
    ("/v1/recommendations", {**RECOMMENDATION, "currency": "EUR"}, "currency"),
    ("/v1/recommendations", {**RECOMMENDATION, "lang": "fr"}, "lang"),
    ("/v1/recommendations", {**RECOMMENDATION, "constraints": {"vendors": ["apple"]}}, "vendors"),
    ("/v1/recommendations", {**RECOMMENDATION, "constraints": {"ecosystems": ["metal"]}}, "ecosystems"),
    ("/v1/recommendations", {**RECOMMENDATION, "constraints": {"pricing": ["free"]}}, "pricing"),
    ("/v1/estimates", {**ESTIMATE, "pricing": "free"}, "pricing"),
    ("/v1/estimates", {**ESTIMATE, "currency": "usd"}, "currency"),
    ("/v1/estimates", {**ESTIMATE, "lang": "zh-CN"}, "lang"),
    ("/v1/tco", {**TCO, "pricing": ["on_demand", "free"]}, "pricing"),
    ("/v1/tco", {**TCO, "currency": "BTC"}, "currency"),
    ("/v1/tco", {**TCO, "lang": "de"}, "lang"),
]


@pytest.mark.parametrize(("path", "body", "field"), ENUMS, ids=[f"{p.rsplit('/', 1)[-1]}-{f}" for p, _, f in ENUMS])
async def test_an_unknown_enum_value_is_a_400_naming_the_field(
    hostile: Client, path: str, body: dict[str, Any], field: str
) -> None:
    problem = assert_problem(await hostile.post(path, json=body), 400)
    assert field in field_names(problem), problem


async def test_an_unknown_enum_value_in_an_offer_is_a_400_naming_the_field(hostile: Client) -> None:
    problem = assert_problem(await hostile.put(OFFER_PATH, json={**OFFER_BODY, "pricing": "free"}, headers=ADMIN), 400)
    assert "pricing" in field_names(problem), problem


# --- Query and path parameters -----------------------------------------------------------------------------------

HOSTILE_STRINGS = [
    "显卡 H100",
    "🚀🔥👩‍💻",
    "\u202eedoc\u202c",
    "مرحبا",
    "e\u0301\u0301\u0301",
    "a\x00b",
    "\x00",
    "%00",
    "' OR 1=1;--",
    "1; DROP TABLE offers",
    "h100-sxm' UNION SELECT * FROM offers --",
    "../../etc/passwd",
    "\ufeff",
    "a" * 10_240,
]
# A concrete URL for every GET operation, its path parameters filled with ids that exist.
PATH_EXAMPLES = {
    "gpu_id": "h100-sxm",
    "model_id": "llama-3.1-8b",
    "system_id": "dgx-h100",
    "offer_id": "digitalocean-h100-sxm-on-demand",
    "recommendation_id": "rec_000000000000000000000000",
}


def get_parameters() -> list[tuple[str, str, str]]:
    """(path template, parameter, where) for every parameter of every GET operation in openapi.json."""
    found = []
    for path, operations in SPEC["paths"].items():
        for parameter in operations.get("get", {}).get("parameters", []):
            found.append((path, parameter["name"], parameter["in"]))
    return found


GET_PARAMETERS = get_parameters()


def url_with(path: str, name: str, where: str, value: str) -> tuple[str, dict[str, str]]:
    filled = path
    for parameter, example in PATH_EXAMPLES.items():
        replacement = quote(value, safe="") if where == "path" and parameter == name else example
        filled = filled.replace("{" + parameter + "}", replacement)
    return filled, ({name: value} if where == "query" else {})


def stored_catalog(database_url: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """What the store holds of the catalog: its digests and every offer row (not what the app serves: a write of an
    earlier test may still be owed to the served snapshot, which takes it at the end of the reload interval)."""
    with contextlib.closing(sqlite3.connect(database_url.split(":///", 1)[1])) as connection:
        digests = connection.execute("SELECT * FROM catalog_meta ORDER BY key").fetchall()
        return digests, connection.execute("SELECT * FROM offers ORDER BY id").fetchall()


def test_every_get_operation_is_covered() -> None:
    paths = {path for path, _, _ in GET_PARAMETERS}
    assert {"/v1/gpus", "/v1/offers", "/v1/gpus/{gpu_id}", "/v1/recommendations/{recommendation_id}"} <= paths
    assert {where for _, _, where in GET_PARAMETERS} == {"query", "path"}


@pytest.mark.parametrize(("path", "name", "where"), GET_PARAMETERS, ids=[f"{p}:{n}" for p, n, _ in GET_PARAMETERS])
async def test_hostile_parameter_values_get_a_deliberate_answer(
    hostile: Client, private_sqlite_url: str, path: str, name: str, where: str
) -> None:
    before = stored_catalog(private_sqlite_url)
    for value in HOSTILE_STRINGS:
        url, params = url_with(path, name, where, value)
        response = await hostile.get(url, params=params)
        assert response.status_code in (200, 400, 404), (url[:200], params and repr(value)[:60], response.text[:300])
        if response.status_code != 200:
            assert_problem(response, response.status_code, value)
    assert stored_catalog(private_sqlite_url) == before


@FUZZ_WITH_FIXTURES
@given(parameter=st.sampled_from(GET_PARAMETERS), value=st.text(min_size=1, max_size=300))
async def test_any_text_in_any_parameter_gets_a_deliberate_answer(
    hostile: Client, parameter: tuple[str, str, str], value: str
) -> None:
    url, params = url_with(*parameter, value)
    response = await hostile.get(url, params=params)
    assert response.status_code in (200, 400, 404), (url[:200], params, response.text[:300])
    if response.status_code != 200:
        assert_problem(response, response.status_code, value)
