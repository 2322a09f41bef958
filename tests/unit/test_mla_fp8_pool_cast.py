"""SGLang's Hopper MLA decode with an FP8 cache casts its whole KV pool every layer; the launch avoids it."""

from api.adapters.storage import reference as R
from domain.performance.mla import casts_fp8_pool
from domain.workloads.requests import InferenceWorkload
from tests.conftest import run_estimate

CATALOG = R.with_ledger(R.load_reference_catalog())


def test_only_sglang_on_hopper_with_an_fp8_cache_and_mla_casts() -> None:
    deepseek, llama = CATALOG.model("deepseek-v3"), CATALOG.model("llama-3.1-70b")
    assert casts_fp8_pool("sglang", "hopper", deepseek, "fp8")
    assert not casts_fp8_pool("sglang", "hopper", deepseek, "bf16")
    assert not casts_fp8_pool("sglang", "blackwell", deepseek, "fp8")
    assert not casts_fp8_pool("vllm", "hopper", deepseek, "fp8")
    assert not casts_fp8_pool("sglang", "hopper", llama, "fp8")


def _command(engine: str, gpu: str) -> str:
    workload = InferenceWorkload(model="deepseek-r1", precision="fp8", kv_cache_precision="fp8", engine=engine)
    option = run_estimate(CATALOG, workload, gpu, 8)
    assert option.launch is not None
    return option.launch.command


def test_the_sglang_launch_on_hopper_reads_the_fp8_pool_in_place() -> None:
    hopper = _command("sglang", "h200")
    assert "--kv-cache-dtype fp8_e4m3" in hopper and "--attention-backend flashmla --page-size 64" in hopper
    assert "--attention-backend" not in _command("sglang", "b200")
    assert "--attention-backend" not in _command("vllm", "h200")
