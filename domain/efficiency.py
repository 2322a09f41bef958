"""The efficiency table: every factor that turns datasheet peaks into achievable rates, with its source and band."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from domain.catalog import Gpu, LinkKind

Scenario = Literal["expected", "pessimistic", "optimistic"]
Stack = Literal["cuda", "cuda_workstation", "rocm", "gaudi", "cann"]
FactorName = Literal[
    "decode_mbu_dense",
    "decode_mbu_moe",
    "prefill_mfu",
    "step_floor_us_dense",
    "step_floor_us_moe",
    "train_mfu",
    "diffusion_mfu",
]
SCENARIOS: tuple[Scenario, ...] = ("expected", "pessimistic", "optimistic")


@dataclass(frozen=True)
class Factor:
    """An efficiency with its expected value, a low-high band and where it comes from."""

    expected: float
    low: float
    high: float
    source: str
    # Floors and latencies slow things down as they grow; efficiencies speed them up.
    higher_is_faster: bool = True

    def at(self, scenario: Scenario) -> float:
        """The value a scenario uses: pessimistic takes the slow end of the band, optimistic the fast end."""
        return self._by_scenario[scenario]

    def describe(self) -> str:
        return self._description

    # Worked out once per factor: the factors are constants, and every estimate asks for them many times.
    @cached_property
    def _by_scenario(self) -> dict[str, float]:
        fast, slow = (self.high, self.low) if self.higher_is_faster else (self.low, self.high)
        return {"expected": self.expected, "optimistic": fast, "pessimistic": slow}

    @cached_property
    def _description(self) -> str:
        return f"{self.expected:g} ({self.low:g}-{self.high:g})"


_PERF = "gpu-advisor default"
_TRAIN = "gpu-advisor default"

# Keyed by software stack and factor; ROCm, Gaudi, CANN and workstation cards carry their own rows because their
# kernels mature at a different pace (the seeds: ROCm costs ~10-20% and needs tuning; Gaudi needs integration).
EFFICIENCY: dict[tuple[Stack, FactorName], Factor] = {
    ("cuda", "decode_mbu_dense"): Factor(
        0.78, 0.70, 0.85, f"{_PERF}: 0.70-0.85 on H100/H200 with vLLM, SGLang or TensorRT-LLM at batch >= 8"
    ),
    ("cuda", "decode_mbu_moe"): Factor(
        0.55,
        0.50,
        0.60,
        "gpu-advisor fit to SGLang's DeepSeek-R1 FP8 benchmark on 8x H200 (TPOT 12.8 ms at 8, 34.6 ms at 64)",
    ),
    ("cuda", "prefill_mfu"): Factor(
        0.55,
        0.45,
        0.65,
        "gpu-advisor default: 0.45-0.65, in line with the llm-analysis estimator (github.com/cli99/llm-analysis)",
    ),
    ("cuda", "step_floor_us_dense"): Factor(25, 20, 40, f"{_PERF}: per layer, fitted", higher_is_faster=False),
    ("cuda", "step_floor_us_moe"): Factor(50, 40, 100, f"{_PERF}: per layer at TP8, fitted", higher_is_faster=False),
    ("cuda", "train_mfu"): Factor(
        0.40,
        0.35,
        0.45,
        "Llama 3 Herd of Models (arXiv:2407.21783): 38-43% BF16 MFU on H100; Megatron-LM (arXiv:2104.04473): 52%",
    ),
    ("cuda", "diffusion_mfu"): Factor(
        0.40, 0.35, 0.55, "gpu-advisor fit to SDXL on A100-80GB: 50 steps in 5.93 s (diffusers) to 4.10 s (TensorRT)"
    ),
    ("cuda_workstation", "decode_mbu_dense"): Factor(0.70, 0.60, 0.80, f"{_PERF}: spec-sheet default, no calibration"),
    ("cuda_workstation", "decode_mbu_moe"): Factor(0.50, 0.40, 0.60, f"{_PERF}: spec-sheet default, no calibration"),
    ("cuda_workstation", "prefill_mfu"): Factor(0.45, 0.35, 0.55, f"{_PERF}: spec-sheet default, no calibration"),
    ("cuda_workstation", "step_floor_us_dense"): Factor(30, 20, 50, f"{_PERF}: per layer", higher_is_faster=False),
    ("cuda_workstation", "step_floor_us_moe"): Factor(60, 40, 120, f"{_PERF}: per layer", higher_is_faster=False),
    ("cuda_workstation", "train_mfu"): Factor(0.35, 0.25, 0.45, f"{_TRAIN}: spec-sheet default, no calibration"),
    ("cuda_workstation", "diffusion_mfu"): Factor(0.35, 0.25, 0.50, "gpu-advisor default: spec sheet, no calibration"),
    ("rocm", "decode_mbu_dense"): Factor(0.62, 0.55, 0.70, f"{_PERF}: MI300X/MI325X vLLM/SGLang"),
    ("rocm", "decode_mbu_moe"): Factor(
        0.45, 0.40, 0.50, "gpu-advisor fit to dstack's DeepSeek-R1 benchmark on 8x MI300X (vLLM, March 2025)"
    ),
    ("rocm", "prefill_mfu"): Factor(
        0.38, 0.30, 0.45, f"{_PERF}: a secondary report of AMD MI300X prefill at ~45% of peak FLOPs"
    ),
    ("rocm", "step_floor_us_dense"): Factor(38, 30, 60, f"{_PERF}: CUDA floor x1.3-2", higher_is_faster=False),
    ("rocm", "step_floor_us_moe"): Factor(75, 60, 150, f"{_PERF}: CUDA floor x1.3-2", higher_is_faster=False),
    ("rocm", "train_mfu"): Factor(
        0.23,
        0.19,
        0.27,
        "gpu-advisor default: ~0.55-0.6x NVIDIA MFU, after SemiAnalysis's MI300X vs H100/H200 training tests, Dec 2024",
    ),
    ("rocm", "diffusion_mfu"): Factor(0.35, 0.28, 0.45, "gpu-advisor default: MI300X SDXL latency 12-18% behind H100"),
    ("gaudi", "decode_mbu_dense"): Factor(0.55, 0.45, 0.65, f"{_PERF}: spec-sheet default for Gaudi, no calibration"),
    ("gaudi", "decode_mbu_moe"): Factor(0.40, 0.30, 0.50, f"{_PERF}: spec-sheet default for Gaudi, no calibration"),
    ("gaudi", "prefill_mfu"): Factor(0.40, 0.30, 0.50, f"{_PERF}: spec-sheet default for Gaudi, no calibration"),
    ("gaudi", "step_floor_us_dense"): Factor(40, 30, 60, f"{_PERF}: CUDA floor x1.5", higher_is_faster=False),
    ("gaudi", "step_floor_us_moe"): Factor(80, 60, 150, f"{_PERF}: CUDA floor x1.5", higher_is_faster=False),
    ("gaudi", "train_mfu"): Factor(0.30, 0.20, 0.40, f"{_TRAIN}: spec-sheet default for Gaudi, no calibration"),
    ("gaudi", "diffusion_mfu"): Factor(0.30, 0.20, 0.40, "gpu-advisor default: spec sheet, no calibration"),
    ("cann", "decode_mbu_dense"): Factor(0.50, 0.40, 0.60, f"{_PERF}: spec-sheet default for Ascend, no calibration"),
    ("cann", "decode_mbu_moe"): Factor(0.35, 0.25, 0.45, f"{_PERF}: spec-sheet default for Ascend, no calibration"),
    ("cann", "prefill_mfu"): Factor(0.35, 0.25, 0.45, f"{_PERF}: spec-sheet default for Ascend, no calibration"),
    ("cann", "step_floor_us_dense"): Factor(40, 30, 60, f"{_PERF}: CUDA floor x1.5", higher_is_faster=False),
    ("cann", "step_floor_us_moe"): Factor(80, 60, 150, f"{_PERF}: CUDA floor x1.5", higher_is_faster=False),
    ("cann", "train_mfu"): Factor(0.25, 0.15, 0.35, f"{_TRAIN}: spec-sheet default for Ascend, no calibration"),
    ("cann", "diffusion_mfu"): Factor(0.25, 0.15, 0.35, "gpu-advisor default: spec sheet, no calibration"),
}

# Collective latency (alpha) per GPU link, microseconds; Llama-70B at TP8 spends ~1.6 ms per step in 160 all-reduces.
LINK_ALPHA_US: dict[LinkKind, Factor] = {
    "nvswitch": Factor(10, 8, 15, f"{_PERF}: NVLink ~8 us; 10 fits Llama-70B TP8 ~1.6 ms", higher_is_faster=False),
    "nvlink": Factor(10, 8, 15, f"{_PERF}: NVLink ~8 us", higher_is_faster=False),
    "nvlink_bridge": Factor(12, 8, 20, f"{_PERF}: NVLink bridge (pairs)", higher_is_faster=False),
    "infinity_fabric": Factor(12, 10, 20, f"{_PERF}: RCCL over Infinity Fabric", higher_is_faster=False),
    "ethernet": Factor(15, 10, 30, f"{_PERF}: Gaudi on-die RoCE", higher_is_faster=False),
    "hccs": Factor(15, 10, 30, f"{_PERF}: Ascend HCCS", higher_is_faster=False),
    "pcie": Factor(30, 20, 40, f"{_PERF}: PCIe/RCCL 20-40 us", higher_is_faster=False),
}
# PCIe 4.0 x16 moves ~25 GB/s each way in practice; used where a card has no GPU-to-GPU link.
PCIE_GBPS = 25.0
# Inter-node fabric per GPU for data-parallel gradients (400G InfiniBand/RoCE).
INTER_NODE_GBPS = Factor(45, 35, 50, f"{_TRAIN}: ~45 GB/s per GPU on 400G InfiniBand/RoCE")
INTER_NODE_HOP_US = Factor(20, 10, 50, f"{_PERF}: one pipeline hop across nodes", higher_is_faster=False)

# Quantised kernels (perf-model.md section 6).
W4_DECODE = Factor(0.80, 0.70, 0.90, "gpu-advisor default: W4A16 decode speeds up less than the byte ratio")
FP8_PREFILL = Factor(0.825, 0.75, 0.90, "gpu-advisor default: FP8 prefill ~1.5-1.8x BF16, not 2x")
LORA_TIME = Factor(0.75, 0.70, 0.80, f"{_TRAIN}: LoRA ~0.7-0.8x the full fine-tune time", higher_is_faster=False)
QLORA_SLOWDOWN = Factor(1.3, 1.15, 1.6, f"{_TRAIN}: QLoRA dequantisation per step; assumed", higher_is_faster=False)

# GPUs whose stack has a published measurement among the calibration points; everything else is spec-sheet.
CALIBRATED = {
    "inference": frozenset({"h200", "mi300x"}),
    "training": frozenset({"h200", "mi300x"}),
    "fine_tuning": frozenset(),
    "image_generation": frozenset({"a100-sxm-80gb"}),
}


def stack_of(gpu: Gpu) -> Stack:
    """The efficiency row a GPU uses."""
    if gpu.ecosystem == "cuda":
        return "cuda" if gpu.segment == "datacenter" else "cuda_workstation"
    return gpu.ecosystem


def factor(gpu: Gpu, name: FactorName) -> Factor:
    """The factor for this GPU's stack."""
    return EFFICIENCY[(stack_of(gpu), name)]


def confidence(gpu: Gpu, kind: str) -> Literal["calibrated", "spec_sheet"]:
    """Whether a published measurement backs estimates of this kind on this GPU."""
    return "calibrated" if gpu.id in CALIBRATED[kind] else "spec_sheet"
