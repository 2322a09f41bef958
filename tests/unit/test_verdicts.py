"""Verdicts that help: the target out of reach with the best figure reached, the exclusions that matter first, and
the memory an answer compares shown beside what it needs."""

from __future__ import annotations

import re

from domain.catalog import Catalog
from domain.narrative.summaries import estimate_summary
from domain.planning import RecommendationRequest, recommend
from domain.workloads.requests import InferenceWorkload
from tests.conftest import NOW, RATE, run_estimate


def _ask(catalog: Catalog, workload: InferenceWorkload, lang: str = "en"):  # type: ignore[no-untyped-def]
    request = RecommendationRequest(workload=workload)
    return recommend(catalog, request, now=NOW, lang=lang, rate=RATE)  # type: ignore[arg-type]


def test_an_impossible_time_per_token_names_the_best_figure_reached(reference: Catalog) -> None:
    answer = _ask(reference, InferenceWorkload(model="llama-3.1-405b", max_tpot_ms=5))
    assert answer.options and not any(o.meets_targets for o in answer.options)
    fastest = min(o.performance.tpot_ms.expected for o in answer.options)  # type: ignore[union-attr]
    pattern = r"out of reach: the fastest configuration reaches (\d+) ms \((\d+)x ([^)]+\)?) at \$"
    found = re.search(pattern, answer.summary)
    assert found, answer.summary
    assert int(found.group(1)) == round(fastest)


def test_with_a_load_the_verdict_says_the_target_not_the_gpu_count(reference: Catalog) -> None:
    answer = _ask(reference, InferenceWorkload(model="llama-3.1-405b", max_tpot_ms=5, concurrency=1000))
    assert not answer.options
    assert "out of reach" in answer.summary and "For example, a10" not in answer.summary
    # Exclusions closest to an option come first, not in alphabetical order.
    assert answer.excluded[0].code == "misses_latency", answer.excluded[:3]
    assert "Needs 8000 GPUs" not in answer.summary
    zh = _ask(reference, InferenceWorkload(model="llama-3.1-405b", max_tpot_ms=5, concurrency=1000), "zh")
    assert "无法达到 5 毫秒以内" in zh.summary, zh.summary


def test_an_infeasible_configuration_shows_the_memory_it_was_compared_with(reference: Catalog) -> None:
    option = run_estimate(reference, InferenceWorkload(model="deepseek-r1"), "h100-sxm", 8)
    assert not option.feasible
    # 8 x 79.5 GiB x 0.9: the usable capacity the 677 GB were compared with, not the 682.9 GB of raw memory.
    assert option.memory.capacity_gb < option.memory.required_gb
    assert option.memory.headroom_pct < 0
    assert f"{option.memory.capacity_gb:.1f} GB usable" in option.reasons[0], option.reasons[0]
    assert any(a.name == "gpu_memory_utilization" for a in option.assumptions)


def test_an_estimate_that_misses_the_chat_targets_says_so(reference: Catalog) -> None:
    option = run_estimate(reference, InferenceWorkload(model="llama-3.1-8b", concurrency=2000), "l40s", 1)
    assert option.feasible and not option.meets_targets
    assert "Misses the target" in estimate_summary("inference", option, "en")
    assert "未达到目标" in estimate_summary("inference", option, "zh")
