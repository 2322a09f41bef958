"""FP8 weight GEMMs at decode: half the 16-bit time plus the measured fixed latency per GEMM."""

from api.adapters.storage import reference as R
from domain.performance.fp8_gemms import FP8_BLOCK_GEMM_US, FP8_GEMM_US, dense_gemms_per_layer, fp8_gemm_latency
from domain.performance.layout import Layout
from domain.performance.serving import InstanceSpeed
from domain.workloads.requests import InferenceWorkload
from tests.conftest import run_estimate

CATALOG = R.load_reference_catalog()


def _step_ms(model: str, gpu: str, precision: str, tensor: int, batch: int, engine: str = "trtllm") -> float:
    kv = "fp8" if precision == "fp8" else "bf16"
    speed = InstanceSpeed(
        CATALOG.model(model), CATALOG.gpu(gpu), precision, kv, Layout(tensor=tensor), 1024, 2048, engine=engine
    )
    return speed.step(batch, "expected")[0] * 1e3


def test_llama_8b_fp8_gains_nothing_over_bf16_at_batch_1_on_b200() -> None:
    # The tables' decode steps: FP8 4.06 ms, BF16 3.70 ms; the constant share made FP8 1.24x faster.
    fp8 = _step_ms("llama-3.1-8b", "b200", "fp8", 1, 1)
    bf16 = _step_ms("llama-3.1-8b", "b200", "bf16", 1, 1)
    assert fp8 > 0.97 * bf16


def test_llama_70b_fp8_tp2_is_faster_than_bf16_on_b200() -> None:
    # Large shards still gain most of the byte saving: 13.41 vs 14.98 ms in the tables.
    fp8 = _step_ms("llama-3.1-70b", "b200", "fp8", 2, 1)
    bf16 = _step_ms("llama-3.1-70b", "b200", "bf16", 2, 1)
    assert 0.8 * bf16 < fp8 < 0.95 * bf16


def test_the_latency_is_per_gemm_so_it_grows_with_layers_not_shard_size() -> None:
    model = CATALOG.model("llama-3.1-70b")
    tp1 = InstanceSpeed(model, CATALOG.gpu("h200"), "fp8", "fp8", Layout(tensor=1), 1024, 2048, engine="trtllm")
    tp8 = InstanceSpeed(model, CATALOG.gpu("h200"), "fp8", "fp8", Layout(tensor=8), 1024, 2048, engine="trtllm")
    assert tp1.fp8_gemms_per_stage == tp8.fp8_gemms_per_stage == 80 * 4
    assert dense_gemms_per_layer(model) == 4


def test_engines_and_checkpoints_pick_their_tables() -> None:
    llama, deepseek = CATALOG.model("llama-3.1-8b"), CATALOG.model("deepseek-v3")
    assert fp8_gemm_latency("trtllm", "hopper", llama) is FP8_GEMM_US[("trtllm", "hopper")]
    assert fp8_gemm_latency("trtllm", "hopper", deepseek) is FP8_BLOCK_GEMM_US[("trtllm", "hopper")]
    assert fp8_gemm_latency("vllm", "hopper", deepseek) is None  # no trusted block-scaled row
    assert fp8_gemm_latency("trtllm", "ada", llama) is None
    # vLLM's per-tensor GEMMs pay about half TensorRT-LLM's latency.
    assert _step_ms("llama-3.1-8b", "h100-sxm", "fp8", 1, 1, "vllm") < _step_ms("llama-3.1-8b", "h100-sxm", "fp8", 1, 1)


def test_families_without_tables_keep_the_fitted_share() -> None:
    speed = InstanceSpeed(
        CATALOG.model("llama-3.1-8b"), CATALOG.gpu("l40s"), "fp8", "fp8", Layout(tensor=1), 1024, 2048, engine="vllm"
    )
    assert speed.fp8_gemm_us is None
    assert speed._mbu("expected", speed.doublings) < speed.mbu.at("expected")


def test_kv_cache_reads_keep_the_full_bandwidth() -> None:
    model, gpu = CATALOG.model("llama-3.1-8b"), CATALOG.gpu("h100-sxm")
    speed = InstanceSpeed(model, gpu, "fp8", "fp8", Layout(tensor=1), 1024, 2048, engine="trtllm")
    assert speed._mbu("expected", speed.doublings) == speed.mbu.at("expected") * speed.engine_speedup


def test_each_engine_states_its_own_fp8_gemm_latency() -> None:
    # The assumptions of a copy are shared across requests: the engine must be part of what they are shared by.
    stated = {}
    for engine in ("vllm", "trtllm"):
        workload = InferenceWorkload(model="llama-3.1-8b", precision="fp8", engine=engine)
        option = run_estimate(CATALOG, workload, "h100-sxm", 1)
        (latency,) = [a.value for a in option.assumptions if a.name == "fp8_gemm_latency_us"]
        stated[engine] = latency
    assert stated["vllm"] == FP8_GEMM_US[("vllm", "hopper")].describe()
    assert stated["trtllm"] == FP8_GEMM_US[("trtllm", "hopper")].describe()
