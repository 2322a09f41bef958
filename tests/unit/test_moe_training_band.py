"""An MoE training estimate's band holds what NVIDIA's own Megatron-Core MoE recipes measured on the same layout."""

from __future__ import annotations

from datetime import date

import pytest

from domain.calibration.harness import reproduce
from domain.calibration.points import CalibrationPoint
from domain.catalog import Catalog

DGXC = "https://github.com/NVIDIA/dgxc-benchmarking/blob/1f6d9f40e4117d7c71b726f86074ac01c29f87f5"
BRIDGE = (
    "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/067f987df03b8355b03192d88d70f1709fedf51a/"
    "docs/performance-summary-archive.md"
)

# BF16 pre-training on H100 SXM with Megatron-Core; these runs set moe_train's band (the factor's note), they are
# not calibration points: the MoE training mechanism they call for is not modelled yet.
RUNS = [
    # DeepSeek-V3, NeMo 25.04.01: TP 2, PP 16, EP 64, MBS 1, GBS 8192, 644,781.55 tokens/s on 1,024 GPUs.
    ("deepseek-v3", 1024, 2, 16, 64, 4096, 8192, 644781.55 / 1024, f"{DGXC}/deepseek_v3/pretraining/README.md"),
    # GPT-OSS 120B, Megatron-Bridge 26.04.01: TP 1, PP 4, EP 8, MBS 1, GBS 1280.
    ("gpt-oss-120b", 64, 1, 4, 8, 4096, 1280, 5824.0, BRIDGE),
    # Llama 4 Maverick, NeMo 25.04.01: TP 4, EP 128, MBS 1, GBS 1024, 1,895,847 tokens/s on 512 GPUs.
    ("llama-4-maverick", 512, 4, 1, 128, 8192, 1024, 1895847 / 512, f"{DGXC}/llama4/README.md"),
]


@pytest.mark.parametrize(("model", "gpus", "tensor", "pipeline", "expert", "sequence", "batch", "value", "url"), RUNS)
def test_an_moe_training_band_holds_megatrons_published_run(
    reference: Catalog,
    model: str,
    gpus: int,
    tensor: int,
    pipeline: int,
    expert: int,
    sequence: int,
    batch: int,
    value: float,
    url: str,
) -> None:
    run = CalibrationPoint(
        id=f"{model}-{gpus}",
        kind="training",
        gpu="h100-sxm",
        gpu_count=gpus,
        model=model,
        precision="bf16",
        engine="megatron",
        tensor=tensor,
        pipeline=pipeline,
        expert=expert,
        sequence_length=sequence,
        global_batch=batch,
        metric="tokens_per_s_per_gpu",
        value=value,
        date=date(2025, 9, 4),
        source=url,
    )
    found = reproduce(reference, run)
    assert found.low <= value <= found.high
