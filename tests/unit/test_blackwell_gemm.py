"""Blackwell's measured GEMM and all-reduce tables in the serving model."""

from api.adapters.storage import reference as R
from domain.hardware.efficiency import EFFICIENCY, GEMM_SIZE
from domain.performance.layout import Layout
from domain.performance.serving import InstanceSpeed

CATALOG = R.load_reference_catalog()


def _speed(model: str, precision: str, tensor: int, gpu: str = "b200") -> InstanceSpeed:
    return InstanceSpeed(CATALOG.model(model), CATALOG.gpu(gpu), precision, "fp8", Layout(tensor=tensor), 2048, 1)


def test_small_gemm_shards_run_at_a_lower_mfu() -> None:
    small = _speed("llama-3.1-70b", "fp8", 8)._gemm_mfu("expected")
    large = _speed("llama-3.1-70b", "fp8", 1)._gemm_mfu("expected")
    assert small < large


def test_fp4_gemms_run_about_1_4x_fp8() -> None:
    fp8 = _speed("llama-3.1-70b", "fp8", 1)
    fp4 = _speed("llama-3.1-70b", "fp4", 1)
    ratio = fp4.peak_flops * fp4._gemm_mfu("expected") / (fp8.peak_flops * fp8._gemm_mfu("expected"))
    assert 1.35 < ratio < 1.5


def test_large_all_reduces_move_at_the_measured_share_of_nvlink5() -> None:
    speed = _speed("llama-3.1-70b", "fp8", 8)
    # 2048 tokens x 8192 x bf16 = 32 MiB: the tables give 146.5 us at TP8 (the model adds ring hops and alpha).
    per_all_reduce = speed._collective_seconds(2048, "expected") / speed.all_reduces
    assert 130e-6 < per_all_reduce < 180e-6


def test_families_without_tables_keep_their_fitted_prefill_mfu() -> None:
    assert "hopper" not in GEMM_SIZE
    speed = _speed("llama-3.1-8b", "bf16", 1, gpu="h100-sxm")
    assert speed._gemm_mfu("expected") == EFFICIENCY["hopper"]["prefill_mfu"].expected
