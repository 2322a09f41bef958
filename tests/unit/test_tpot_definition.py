"""TPOT as serving benchmarks measure it, (latency - TTFT) / (output tokens - 1): without the request's own prefill."""

from __future__ import annotations

import pytest

from domain.catalog import Catalog
from domain.performance.layout import Layout
from domain.performance.serving import InstanceSpeed
from tests.conftest import gpu, llm


def speed(catalog: Catalog, input_tokens: int, output_tokens: int) -> InstanceSpeed:
    model, h100 = llm(catalog, "llama-3.1-70b"), gpu(catalog, "h100-sxm")
    return InstanceSpeed(model, h100, "fp8", "fp8", Layout(2), input_tokens, output_tokens, engine="trtllm")


def test_one_user_alone_waits_only_for_decode_steps_between_tokens(reference: Catalog) -> None:
    # With nobody else's prompt to prefill, the gap between a lone request's tokens is one decode step however long
    # its own prompt was: that prompt's prefill is in its TTFT.
    for input_tokens in (500, 5000, 30000):
        point = speed(reference, input_tokens, 500).point(1, "expected")
        assert point.tpot_s == pytest.approx(point.step_s, rel=1e-9)
        assert point.ttft_s > point.step_s


def test_under_load_tokens_wait_for_the_other_requests_prefills(reference: Catalog) -> None:
    instance = speed(reference, 5000, 500)
    _, prefill = instance.prefill("expected")
    quiet, loaded = instance.point(1, "expected"), instance.point(50, "expected")
    # Between its first and last token a request sees the 49 other requests' prefills once each (steady state).
    waited = (loaded.tpot_s - loaded.step_s) * (500 - 1)
    assert waited == pytest.approx(49 * prefill, rel=1e-6)
    assert loaded.tpot_s > quiet.tpot_s
    # Throughput still pays every request's prefill, its own included.
    assert loaded.tokens_per_s == pytest.approx(50 * 500 / (500 * loaded.step_s + 50 * prefill), rel=1e-9)


def test_a_single_output_token_has_no_time_between_tokens_to_add_prefills_to(reference: Catalog) -> None:
    point = speed(reference, 2048, 1).point(8, "expected")
    assert point.tpot_s == pytest.approx(point.step_s, rel=1e-9)
