"""vLLM's MLA decode block: a measured fixed latency per layer over the other engines' on Hopper."""

import pytest

from api.adapters.storage import reference as R
from domain.performance.layout import Layout
from domain.performance.mla import MLA_DECODE_EXTRA_US, decode_extra_latency
from domain.performance.serving import InstanceSpeed
from domain.workloads.requests import InferenceWorkload
from tests.conftest import run_estimate

CATALOG = R.load_reference_catalog()


def _step_ms(engine: str, batch: int, model: str = "deepseek-v3", gpu: str = "h200") -> float:
    layout = Layout(tensor=8, expert=8) if model == "deepseek-v3" else Layout(tensor=8)
    speed = InstanceSpeed(CATALOG.model(model), CATALOG.gpu(gpu), "fp8", "fp8", layout, 1024, 2048, engine=engine)
    return speed.step(batch, "expected")[0] * 1e3


def test_vllm_decodes_deepseek_at_batch_1_on_h200_near_the_tables_step() -> None:
    # The tables' vLLM step is 14.7 ms (MLA block 103 us per layer vs TensorRT-LLM's 54); without the block's extra
    # latency the model's vLLM step was 7.0 ms, faster than its TensorRT-LLM step (8.2 ms).
    assert _step_ms("vllm", 1) > 10.0
    assert _step_ms("vllm", 1) > _step_ms("trtllm", 1) + 2.0


def test_the_extra_latency_is_per_layer_and_only_for_mla_models_on_vllm() -> None:
    deepseek, llama = CATALOG.model("deepseek-v3"), CATALOG.model("llama-3.1-70b")
    assert decode_extra_latency("vllm", "hopper", deepseek) is MLA_DECODE_EXTRA_US[("vllm", "hopper")]
    assert decode_extra_latency("vllm", "hopper", llama) is None
    assert decode_extra_latency("trtllm", "hopper", deepseek) is None
    assert decode_extra_latency("vllm", "ada", deepseek) is None
    # A fixed time per layer, whatever the batch.
    speed = InstanceSpeed(deepseek, CATALOG.gpu("h200"), "fp8", "fp8", Layout(8, expert=8), 1024, 2048, engine="vllm")
    assert speed.mla_decode_us is not None
    without = InstanceSpeed(deepseek, CATALOG.gpu("h200"), "fp8", "fp8", Layout(8, expert=8), 1024, 2048, engine="vllm")
    without.mla_decode_us = None
    added = [speed.step(b, "expected")[0] - without.step(b, "expected")[0] for b in (1, 64)]
    assert added[0] == pytest.approx(added[1], rel=1e-6)
    assert added[0] == pytest.approx(speed.layers * speed.mla_decode_us.expected * 1e-6, rel=1e-6)


def test_a_vllm_deepseek_estimate_states_the_mla_decode_latency() -> None:
    named = {}
    for engine in ("vllm", "trtllm"):
        workload = InferenceWorkload(model="deepseek-r1", precision="fp8", engine=engine)
        named[engine] = {a.name for a in run_estimate(CATALOG, workload, "h200", 8).assumptions}
    assert "mla_decode_extra_us" in named["vllm"]
    assert "mla_decode_extra_us" not in named["trtllm"]
