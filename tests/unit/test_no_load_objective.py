"""With no load, the planner's objective is throughput: ties are broken by cost per token, not by batch-1 latency."""

from __future__ import annotations

import pytest

from domain.catalog import Catalog
from domain.planning import LayoutRequest
from domain.planning.inference import COST_TIE, THROUGHPUT_TIE
from domain.workloads.requests import InferenceWorkload
from domain.workloads.results import Option
from tests.conftest import run_estimate

# Reported figures are rounded; a comparison of two of them allows for that.
ROUNDING = 0.005


def cost_per_token(option: Option, priced: bool = True) -> float:
    """Dollars per output token at the option's price; GPU-hours per token where not every layout compared is priced."""
    hourly = option.cost.hourly if priced and option.cost is not None else float(option.gpu_count)
    return hourly / tokens_per_s(option)


def all_priced(*options: Option) -> bool:
    return all(option.cost is not None for option in options)


def tokens_per_s(option: Option) -> float:
    assert option.performance is not None and option.performance.tokens_per_second is not None
    return option.performance.tokens_per_second.expected


def forced_layouts(catalog: Catalog, workload: InferenceWorkload, gpu_id: str, count: int) -> list[Option]:
    """Every tensor x pipeline layout of `count` GPUs the planner can run, each forced."""
    found = []
    for tensor in (1, 2, 4, 8):
        for pipeline in (1, 2, 4):
            if tensor * pipeline > count:
                continue
            option = run_estimate(
                catalog, workload, gpu_id, count, parallelism=LayoutRequest(tensor=tensor, pipeline=pipeline)
            )
            if option.feasible and option.meets_targets:
                found.append(option)
    return found


CASES = [
    # A model that fits one GPU, on two: one copy per GPU or one TP2 copy.
    ("llama-3.1-8b", "bf16", "h100-sxm", 2, "chat"),
    ("llama-3.1-8b", "bf16", "h100-sxm", 8, "batch"),
    # A 70B model on one Gaudi 2 server, where TP8, TP4, TP2 and pipelines all hold it.
    ("llama-3.1-70b", "bf16", "gaudi2", 8, "chat"),
    ("llama-3.1-70b", "bf16", "gaudi2", 8, "batch"),
    ("llama-3.1-70b", "fp8", "gaudi2", 8, "batch"),
    ("llama-3.1-70b", "fp8", "h100-sxm", 8, "batch"),
]


@pytest.mark.parametrize(("model", "precision", "gpu_id", "count", "use_case"), CASES)
def test_with_no_load_no_layout_serves_more_throughput_per_dollar(
    reference: Catalog, model: str, precision: str, gpu_id: str, count: int, use_case: str
) -> None:
    workload = InferenceWorkload(model=model, precision=precision, use_case=use_case)  # type: ignore[arg-type]
    chosen = run_estimate(reference, workload, gpu_id, count)
    assert chosen.feasible and chosen.meets_targets
    others = forced_layouts(reference, workload, gpu_id, count)
    best = max(tokens_per_s(option) for option in others)
    # The highest throughput, within the margin the estimates cannot resolve.
    assert tokens_per_s(chosen) * (1 + THROUGHPUT_TIE) >= best * (1 - ROUNDING)
    # Among the layouts that margin cannot tell apart, none serves a token for less.
    equals = [option for option in others if tokens_per_s(option) * (1 + THROUGHPUT_TIE) >= best]
    priced = all_priced(chosen, *equals)
    cheapest = min(cost_per_token(option, priced) for option in equals)
    assert cost_per_token(chosen, priced) <= cheapest * (1 + COST_TIE + ROUNDING)


def test_one_gpu_model_on_two_gpus_runs_what_serves_a_token_for_less(reference: Catalog) -> None:
    # The question with no load is throughput: TP2 wins a lone request's time per token, which nobody asked about.
    workload = InferenceWorkload(model="llama-3.1-8b", precision="bf16")
    chosen = run_estimate(reference, workload, "h100-sxm", 2)
    assert chosen.parallelism is not None
    copies = run_estimate(reference, workload, "h100-sxm", 2, parallelism=LayoutRequest(tensor=1))
    paired = run_estimate(reference, workload, "h100-sxm", 2, parallelism=LayoutRequest(tensor=2))
    priced = all_priced(chosen, copies, paired)
    cheaper = min(cost_per_token(copies, priced), cost_per_token(paired, priced))
    assert cost_per_token(chosen, priced) <= cheaper * (1 + COST_TIE + ROUNDING)
    # Two layouts a token costs the same on: the simpler one, not a pipeline over GPUs that each hold the model.
    if cost_per_token(copies, priced) <= cost_per_token(paired, priced) * (1 + COST_TIE):
        assert (chosen.parallelism.tensor, chosen.parallelism.pipeline) == (1, 1)
