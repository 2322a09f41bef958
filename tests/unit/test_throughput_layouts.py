"""Throughput layouts: pipeline stages that overlap under continuous batching, and batch caps above the default."""

from __future__ import annotations

import pytest

from domain.catalog import Catalog
from domain.performance.layout import Layout
from domain.performance.serving import InstanceSpeed
from domain.planning import LayoutRequest
from domain.workloads.requests import InferenceWorkload
from domain.workloads.results import Option
from tests.conftest import gpu, llm, run_estimate

LARGE_BATCH = 256


def throughput(option: Option) -> float:
    assert option.feasible, option.reasons
    assert option.performance is not None and option.performance.tokens_per_second is not None
    return option.performance.tokens_per_second.expected


def best_tensor_only(catalog: Catalog, workload: InferenceWorkload, gpu_id: str, count: int) -> float:
    found = []
    for tensor in (1, 2, 4, 8):
        option = run_estimate(
            catalog, workload, gpu_id, count, parallelism=LayoutRequest(tensor=tensor), max_batch=LARGE_BATCH
        )
        if option.feasible:
            found.append(throughput(option))
    return max(found)


@pytest.mark.parametrize(
    ("model", "gpu_id", "tensor", "pipeline"),
    [("llama-3.1-70b", "h100-sxm", 1, 2), ("llama-3.1-405b", "h200", 4, 2)],
)
def test_an_in_node_pipeline_is_not_half_as_fast_as_tensor_parallel(
    reference: Catalog, model: str, gpu_id: str, tensor: int, pipeline: int
) -> None:
    # Operators run TP1 x PP2 and TP4 x PP2 in one node at large batches; stages costed one after another made them
    # half as fast as the best tensor-parallel layout of the same GPUs.
    workload = InferenceWorkload(model=model, precision="fp8", concurrency=4096)
    layout = LayoutRequest(tensor=tensor, pipeline=pipeline)
    piped = run_estimate(reference, workload, gpu_id, 8, parallelism=layout, max_batch=LARGE_BATCH)
    assert throughput(piped) >= 0.75 * best_tensor_only(reference, workload, gpu_id, 8)


def test_a_lone_sequence_still_passes_every_stage(reference: Catalog) -> None:
    model, h100 = llm(reference, "llama-3.1-70b"), gpu(reference, "h100-sxm")

    def step(layout: Layout, batch: int) -> float:
        speed = InstanceSpeed(model, h100, "fp8", "fp8", layout, 1024, 256)
        return speed.step(batch, "expected")[0]

    piped, single = Layout(tensor=1, pipeline=2), Layout(tensor=1, pipeline=1)
    # One sequence: its token crosses both stages in turn, so the step is as long as one GPU holding every layer.
    assert step(piped, 1) == pytest.approx(step(single, 1), rel=0.1)
    # Twice the sequences on twice the GPUs: each stage works on half of them over half the layers at once, so the
    # step matches one GPU's on half the batch (stages one after another on the whole batch took twice as long).
    assert step(piped, 2 * LARGE_BATCH) == pytest.approx(step(single, LARGE_BATCH), rel=0.15)


def test_prefills_are_shared_by_every_stage(reference: Catalog) -> None:
    model, h200 = llm(reference, "llama-3.1-405b"), gpu(reference, "h200")
    piped = InstanceSpeed(model, h200, "fp8", "fp8", Layout(tensor=4, pipeline=2), 4096, 256)
    flat = InstanceSpeed(model, h200, "fp8", "fp8", Layout(tensor=8), 4096, 256)
    # The GPU time a prompt takes from the decodes is spread over all eight GPUs in both layouts.
    assert piped.prefill("expected")[1] == pytest.approx(flat.prefill("expected")[1], rel=0.35)


def test_max_batch_may_exceed_the_engines_default(reference: Catalog) -> None:
    # Tuned throughput runs hold thousands of sequences per copy, above vLLM's default max_num_seqs.
    workload = InferenceWorkload(model="llama-3.1-8b", precision="fp8", input_tokens=128, output_tokens=128)
    default = run_estimate(reference, workload, "h100-sxm", 1)
    raised = run_estimate(reference, workload, "h100-sxm", 1, max_batch=2048)
    assert default.performance is not None and raised.performance is not None
    assert default.performance.concurrency is not None and raised.performance.concurrency is not None
    assert raised.performance.concurrency.expected > default.performance.concurrency.expected
    assert raised.launch is not None and f"--max-num-seqs {raised.performance.concurrency.expected:g}" in (
        raised.launch.command
    )
