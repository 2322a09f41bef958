"""vLLM's block-scaled FP8 MoE layer on Hopper: a measured latency over TensorRT-LLM's, shrinking with the batch."""

from api.adapters.storage import reference as R
from domain.performance.fp8_gemms import VLLM_BLOCK_FP8_MOE_US, block_fp8_moe_extra
from domain.performance.layout import Layout
from domain.performance.serving import InstanceSpeed

CATALOG = R.load_reference_catalog()


def _speed(engine: str, model: str = "deepseek-v3", precision: str = "fp8") -> InstanceSpeed:
    layout = Layout(tensor=8, expert=8)
    return InstanceSpeed(CATALOG.model(model), CATALOG.gpu("h200"), precision, "fp8", layout, 1024, 2048, engine=engine)


def test_vllm_pays_more_than_its_mla_block_over_trtllm_at_batch_1() -> None:
    # The tables' steps at batch 1: vLLM 14.69 ms, TensorRT-LLM 7.00 ms; the MLA blocks differ by 61 x 49 us = 3.0 ms
    # and the MoE layers by 58 x 70 us = 4.1 ms. The MLA difference alone leaves vLLM's step 4 ms short.
    vllm = _speed("vllm")
    trtllm = _speed("trtllm")
    gap = vllm.step(1, "expected")[0] - trtllm.step(1, "expected")[0]
    mla_only = vllm.layers * vllm.mla_decode_us.expected * 1e-6  # type: ignore[union-attr]
    assert gap > mla_only + 2.5e-3


def test_the_moe_extra_shrinks_with_the_batch_and_applies_only_to_vllm_block_fp8_moe_on_hopper() -> None:
    deepseek, llama = CATALOG.model("deepseek-v3"), CATALOG.model("llama-3.1-70b")
    factor = block_fp8_moe_extra("vllm", "hopper", deepseek, "fp8")
    assert factor is VLLM_BLOCK_FP8_MOE_US[("vllm", "hopper")]
    assert block_fp8_moe_extra("trtllm", "hopper", deepseek, "fp8") is None
    assert block_fp8_moe_extra("vllm", "hopper", llama, "fp8") is None
    assert block_fp8_moe_extra("vllm", "hopper", deepseek, "bf16") is None
    vllm, without = _speed("vllm"), _speed("vllm")
    without.moe_extra_us = None
    added = [vllm.step(b, "expected")[0] - without.step(b, "expected")[0] for b in (1, 64)]
    assert added[0] > 2 * added[1] > 0
