"""Facts a catalog snapshot shares across requests: the answers never depend on what was asked before."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest

from api.adapters.storage.reference import load_reference_catalog
from domain.performance import serving
from domain.planning import RecommendationRequest, recommend
from domain.planning import ranking as ranking_module
from domain.planning.facts import SHARED, CheckFact, CopyFact, Facts, ModelFact, RentFact
from domain.workloads.results import ExchangeRate

NOW = datetime(2026, 12, 1, tzinfo=UTC)
RATE = ExchangeRate(usd_to_cny=7.1, as_of=NOW.date(), source="test")
CONFIGS = Path(__file__).parent.parent / "fixtures" / "hf_configs"

# Different loads, lengths and kinds of the same models: each shares some facts with the ones before it.
WORKLOADS: list[dict[str, Any]] = [
    {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 32},
    {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 33, "max_tpot_ms": 40},
    {"kind": "inference", "model": "llama-3.1-70b", "requests_per_second": 3, "input_tokens": 512},
    {"kind": "inference", "model": "deepseek-r1", "concurrency": 50},
    {"kind": "image_generation", "model": "sdxl", "images_per_hour": 417},
    {"kind": "image_generation", "model": "sdxl", "images_per_hour": 5000},
    {"kind": "fine_tuning", "model": "llama-3.1-70b", "method": "lora", "train_tokens": 2e8},
    {"kind": "fine_tuning", "model": "llama-3.1-70b", "method": "lora", "train_tokens": 2e8, "target_hours": 2},
    {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e11, "target_days": 30},
    {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e11, "sequence_length": 8192},
]


@pytest.fixture(autouse=True)
def fresh_store() -> Any:
    SHARED.clear()
    yield
    SHARED.clear()


def answer(catalog: Any, workload: dict[str, Any], **extra: Any) -> bytes:
    request = msgspec.convert({"workload": workload, **extra}, RecommendationRequest)
    return msgspec.json.encode(recommend(catalog, request, now=NOW, lang="en", rate=RATE))


@pytest.mark.parametrize("index", range(len(WORKLOADS)))
def test_an_answer_is_the_same_on_a_warm_catalog_as_on_a_fresh_one(index: int) -> None:
    warm = load_reference_catalog()
    for earlier in WORKLOADS:
        answer(warm, earlier)
        answer(warm, earlier, constraints={"providers": ["lambda", "runpod"], "max_gpus": 8})
    assert len(SHARED), "nothing was shared: the test would prove nothing"
    after_others = answer(warm, WORKLOADS[index])
    SHARED.clear()
    assert after_others == answer(load_reference_catalog(), WORKLOADS[index])


def price_changes(catalog: Any) -> list[tuple[str, Any]]:
    """Changes of offers that move answers: the H100's prices up or a little down, a new cheapest one, its prices old,
    a GPU nobody rented offered on spot only, a GPU no longer rented."""
    h100 = catalog.offers_for_gpu("h100-sxm")

    def scaled(factor: float) -> list[Any]:
        return [msgspec.structs.replace(o, usd_per_gpu_hour=round(o.usd_per_gpu_hour * factor, 4)) for o in h100]

    cheapest = min(h100, key=lambda offer: offer.usd_per_gpu_hour)
    added = msgspec.structs.replace(cheapest, id="test-cheaper-h100", usd_per_gpu_hour=0.5, pricing="on_demand")
    old = [msgspec.structs.replace(offer, as_of=date(2025, 1, 1)) for offer in h100]
    unrented = next(gpu for gpu in catalog.gpus if gpu.segment == "datacenter" and not catalog.offers_for_gpu(gpu.id))
    spot = msgspec.structs.replace(cheapest, id="test-spot", gpu=unrented.id, pricing="spot")
    l40s = [offer.id for offer in catalog.offers_for_gpu("l40s")]
    return [
        ("dearer", catalog.with_offers(scaled(3))),
        ("cheaper", catalog.with_offers(scaled(0.9))),
        ("added", catalog.with_offers([added])),
        ("old", catalog.with_offers(old)),
        ("spot only", catalog.with_offers([spot])),
        ("unrented", catalog.with_offers([], l40s)),
    ]


@pytest.mark.parametrize("index", range(len(WORKLOADS)))
def test_after_a_price_change_an_answer_is_the_one_a_fresh_catalog_gives(index: int) -> None:
    before = load_reference_catalog()
    for name, changed in price_changes(before):
        SHARED.clear()
        fresh = answer(changed, WORKLOADS[index])
        SHARED.clear()
        for earlier in WORKLOADS:
            answer(before, earlier)
            answer(before, earlier, constraints={"providers": ["lambda", "runpod"], "max_gpus": 8})
        assert answer(changed, WORKLOADS[index]) == fresh, name


def test_a_price_change_keeps_the_speeds_and_layouts_and_rebuilds_what_read_that_gpus_offers() -> None:
    before = load_reference_catalog()
    answer(before, WORKLOADS[0])
    facts = dict(SHARED.items())
    _, dearer = price_changes(before)[0]
    answer(dearer, WORKLOADS[0])
    copies = [key for key in facts if isinstance(key, CopyFact)]
    assert copies and all(SHARED.peek(key) is facts[key] for key in copies)
    renters = {(key.gpu, key.catalog) for key, _ in SHARED.items() if isinstance(key, RentFact)}
    old = {(key.gpu, key.catalog) for key in facts if isinstance(key, RentFact)}
    assert {gpu for gpu, _ in renters - old} == {"h100-sxm"}


def test_constraints_that_change_the_offers_are_not_answered_from_another_requests_facts() -> None:
    warm = load_reference_catalog()
    workload = WORKLOADS[0]
    everyone = answer(warm, workload)
    one_provider = answer(warm, workload, constraints={"providers": ["lambda"]})
    own_price = answer(warm, workload, constraints={"prices": {"h100-sxm": 0.5}})
    SHARED.clear()
    assert one_provider == answer(warm, workload, constraints={"providers": ["lambda"]})
    SHARED.clear()
    assert own_price == answer(warm, workload, constraints={"prices": {"h100-sxm": 0.5}})
    SHARED.clear()
    assert everyone == answer(warm, workload)
    assert len({everyone, one_provider, own_price}) == 3


def test_a_pasted_model_is_never_shared_with_other_requests() -> None:
    catalog = load_reference_catalog()
    config = json.loads((CONFIGS / "llama-3.1-8b.json").read_text())
    # Named like a catalog model: sharing by name would mix the two up.
    custom = {"name": "llama-3.1-70b", "hf_config": config}
    answer(catalog, {"kind": "inference", "custom_model": custom, "concurrency": 4})
    assert not [key for key, _ in SHARED.items() if isinstance(key, ModelFact)]
    mixed = answer(catalog, WORKLOADS[0])
    SHARED.clear()
    assert mixed == answer(catalog, WORKLOADS[0])


def test_the_store_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(SHARED, "limit", 50)
    catalog = load_reference_catalog()
    for concurrency in range(1, 40, 3):
        answer(catalog, {"kind": "inference", "model": "llama-3.1-8b", "concurrency": concurrency})
        assert len(SHARED) <= 50


def test_a_fact_is_built_once_per_key_and_keys_of_another_catalog_never_meet() -> None:
    store = Facts(limit=10)
    built: list[str] = []
    key = ModelFact(catalog="v1", model="m")
    assert store.get(key, lambda: built.append("a") or "a") == "a"
    assert store.get(ModelFact(catalog="v1", model="m"), lambda: built.append("b") or "b") == "a"
    assert store.get(ModelFact(catalog="v2", model="m"), lambda: built.append("c") or "c") == "c"
    assert built == ["a", "c"]


def test_a_stream_of_one_off_requests_keeps_the_facts_repeated_requests_share() -> None:
    store = Facts(limit=200)
    built: list[str] = []

    def fact(name: str) -> str:
        return store.get(ModelFact(catalog="v1", model=name), lambda: built.append(name) or name)

    hot = [f"hot-{number}" for number in range(40)]
    for _ in range(2):  # asked for again: what repeated requests share
        for name in hot:
            fact(name)
    for number in range(5000):  # each new load, length or budget: facts nobody asks for again
        fact(f"once-{number}")
        assert len(store) <= 200
    built.clear()
    for name in hot:
        fact(name)
    assert built == []


def test_a_shared_speed_model_keeps_a_bounded_set_of_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serving, "POINTS_KEPT", 20)
    catalog = load_reference_catalog()
    for concurrency in range(1, 60, 4):
        answer(catalog, {"kind": "inference", "model": "llama-3.1-8b", "concurrency": concurrency})
    copies = [value for key, value in SHARED.items() if isinstance(key, CopyFact)]
    assert copies
    assert all(len(copy.speed._quiet_point) <= 20 for copy in copies)


def test_shared_exclusions_keep_no_exception_and_so_no_frames() -> None:
    catalog = load_reference_catalog()
    answer(catalog, WORKLOADS[0])
    checks = [value for key, value in SHARED.items() if isinstance(key, CheckFact)]
    assert any(error is not None for _, error in checks)
    parts = [part for value, error in checks for part in (value, *(error or ()))]
    assert not any(isinstance(part, BaseException) for part in parts)


def test_a_later_load_skips_planning_the_gpus_the_shape_already_excluded(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = load_reference_catalog()
    shape = {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 32}
    first = json.loads(answer(catalog, shape))
    planned: list[str] = []
    inference = ranking_module.PLANNERS["inference"]

    def counting(plan: Any, gpu: Any) -> Any:
        planned.append(gpu.id)
        return inference(plan, gpu)

    monkeypatch.setitem(ranking_module.PLANNERS, "inference", counting)
    second = json.loads(answer(catalog, shape | {"concurrency": 77}))
    planned_second = set(planned)
    planned.clear()
    SHARED.clear()
    alone = json.loads(answer(load_reference_catalog(), shape | {"concurrency": 77}))
    # Most GPUs fail the fit or renter checks of this shape whatever the load: a later load plans only the others.
    assert len(first["excluded"]) > len(catalog.gpus) // 2
    assert len(planned_second) < len(catalog.gpus) // 2
    assert len(set(planned)) == len(catalog.gpus)  # a fresh catalog plans every GPU
    assert second["excluded"] == alone["excluded"] and second["options"] == alone["options"]
