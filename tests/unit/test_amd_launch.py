"""On CDNA 3/4 GPUs the launch turns on the AITER kernels the estimate assumes (vLLM leaves them off)."""

from api.adapters.storage import reference as R
from domain.workloads.requests import InferenceWorkload
from tests.conftest import run_estimate

CATALOG = R.with_ledger(R.load_reference_catalog())


def _command(model: str, engine: str, gpu: str, precision: str = "fp8") -> str:
    workload = InferenceWorkload(model=model, precision=precision, engine=engine)
    option = run_estimate(CATALOG, workload, gpu, 8)
    assert option.launch is not None
    return option.launch.command


def test_vllm_on_amd_switches_aiter_on() -> None:
    for model in ("deepseek-r1", "llama-3.1-70b"):
        assert _command(model, "vllm", "mi325x").startswith("VLLM_ROCM_USE_AITER=1 vllm serve ")
        assert "AITER" not in _command(model, "vllm", "h200")


def test_sglang_on_amd_uses_the_aiter_kernels_and_attention_backend() -> None:
    command = _command("deepseek-r1", "sglang", "mi300x")
    assert command.startswith("SGLANG_USE_AITER=1 python -m sglang.launch_server ")
    assert "--attention-backend aiter" in command
    assert "aiter" not in _command("deepseek-r1", "sglang", "b200").lower()


def test_mi250x_gets_no_aiter_switches() -> None:
    # AITER's kernels are built for CDNA 3 and 4 (gfx942, gfx950); an MI250X is CDNA 2.
    for engine in ("vllm", "sglang"):
        assert "aiter" not in _command("llama-3.1-70b", engine, "mi250x", "bf16").lower()
