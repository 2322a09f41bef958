"""4-bit weight-only routed experts at decode: the measured latency per MoE layer and expert, bytes at a set rate."""

from api.adapters.storage import reference as R
from domain.performance.layout import Layout
from domain.performance.serving import InstanceSpeed
from domain.performance.w4_moe import W4_MOE, w4_moe_latency

CATALOG = R.load_reference_catalog()


def _speed(gpu: str, engine: str = "vllm", expert: int = 1, precision: str = "int4") -> InstanceSpeed:
    layout = Layout(tensor=8, expert=expert)
    return InstanceSpeed(
        CATALOG.model("deepseek-r1"), CATALOG.gpu(gpu), precision, "bf16", layout, 1024, 128, engine=engine
    )


def test_one_token_pays_the_tables_layer_latency_not_its_bytes() -> None:
    # TP8 vLLM 0.24.0 at 1 token on H200: 40.7 us; 8 experts' bytes alone are ~7 us.
    speed = _speed("h200")
    assert speed.w4_moe is not None
    per_layer = speed.w4_moe.seconds(1, 8, 8 * speed.expert_bytes / speed.moe_layers, "expected") * 1e6
    assert 36 < per_layer < 45, per_layer


def test_h200_is_barely_faster_than_h100_at_batch_1() -> None:
    h100, h200 = _speed("h100-sxm").step(1, "expected")[0], _speed("h200").step(1, "expected")[0]
    assert h200 > 0.85 * h100


def test_the_measured_latency_slows_batch_1_over_the_bandwidth_share() -> None:
    # Without the tables the routed experts cost bytes at the weight-only share of the bandwidth (~13 us a layer).
    measured = _speed("h100-sxm")
    shared = _speed("h100-sxm", engine="")
    assert shared.w4_moe is None
    gap_us = (measured.step(1, "expected")[0] - shared.step(1, "expected")[0]) / measured.moe_layers * 1e6
    assert gap_us > 20  # of which the MLA block's own latency under vLLM is the rest


def test_only_tensor_parallel_int4_experts_on_tabled_engines() -> None:
    model = CATALOG.model("deepseek-r1")
    assert w4_moe_latency("vllm", "hopper", model, "int4", 1) is W4_MOE[("vllm", "hopper")]
    assert w4_moe_latency("sglang", "blackwell", model, "int4", 1) is W4_MOE[("sglang", "blackwell")]
    assert w4_moe_latency("trtllm", "hopper", model, "int4", 1) is None
    assert w4_moe_latency("vllm", "ada", model, "int4", 1) is None
    assert w4_moe_latency("vllm", "hopper", model, "int4", 8) is None  # expert parallel
    assert w4_moe_latency("vllm", "hopper", model, "fp8", 1) is None
    assert w4_moe_latency("vllm", "hopper", CATALOG.model("llama-3.1-8b"), "int4", 1) is None


def test_the_assumption_states_the_latency() -> None:
    speed = _speed("h100-sxm")
    assert speed.w4_moe is not None
    assert "us per MoE layer" in speed.w4_moe.describe()
    assert "moe_perf.parquet" in speed.w4_moe.source
