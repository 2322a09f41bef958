"""The efficiency table: every factor that turns datasheet peaks into achievable rates, by GPU family and precision,
with its source and band."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Literal

from domain.catalog import Gpu

Scenario = Literal["expected", "pessimistic", "optimistic"]
Family = Literal["ampere", "hopper", "blackwell", "ada", "cdna3", "cdna4", "gaudi", "ascend"]
FactorName = Literal[
    "decode_mbu_dense",
    "decode_mbu_moe",
    "prefill_mfu",
    "step_floor_us_dense",
    "step_floor_us_moe",
    "train_mfu",
    "diffusion_mfu",
    "fp8_decode",
    "fp4_compute",
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


FAMILY_NAMES: dict[Family, str] = {
    "ampere": "NVIDIA Ampere/Volta (HBM)",
    "hopper": "NVIDIA Hopper",
    "blackwell": "NVIDIA Blackwell",
    "ada": "NVIDIA Ada and workstation cards (GDDR, PCIe)",
    "cdna3": "AMD CDNA 2/3 (MI250X, MI300X, MI325X)",
    "cdna4": "AMD CDNA 4 (MI350X, MI355X)",
    "gaudi": "Intel Gaudi",
    "ascend": "Huawei Ascend",
}

FITTED = "gpu-advisor fit to the calibration points (GET /v1/accuracy)"
# Gaudi2 Stable Diffusion 1.5 at 512x512 under Optimum Habana: 1.081 images/s at batch 8 (HPU graphs, Optimum Habana
# 1.6) is 0.925 s per image, the expected value; the 2022 blog's 1.19 s at batch 4 (Optimum Habana 1.3) the low end.
GAUDI_DIFFUSION = (
    "github.com/huggingface/diffusers/blob/af8a47dd2d2486fd0d9ea4178c3b1058b53f3399/docs/source/en/optimization/"
    "habana.md (Gaudi2 SD 1.5 512x512: 1.081 images/s at batch 8); github.com/huggingface/blog "
    "habana-gaudi-2-benchmark (1.19 s/img)"
)
KERNELS = "aiconfigurator-core measured kernel tables (github.com/ai-dynamo/aiconfigurator)"
LLAMA3 = "Llama 3 paper, arXiv:2407.21783 (38-43% BF16 MFU on 16k H100)"
MEGATRON = "Narayanan et al. 2021, arXiv:2104.04473 (Megatron-LM, 52% of A100 peak)"
DEFAULT = "gpu-advisor default, no public measurement yet"
_B200_GEMM = f"{KERNELS}: systems/data/b200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet"
_MI355X_8B = "rocm.blogs.amd.com/artificial-intelligence/w4a6-quant-mm (1x MI355X, Llama 3.1 8B TP1, vLLM 0.20)"
# The MoE step floor on CDNA 3, fit to the SGLang MoE decode measurements on 8-GPU MI300X/MI325X nodes at TP8: the
# 20.8 us it held before (no CDNA 3 MoE point constrained it) left Llama 4 Maverick at concurrency 1 24% and
# DeepSeek-R1 at 4 44% faster than measured, and 40 us brings Maverick within 5% at 1, 16 and 100 sequences (the
# same page's Llama 4 Scout, not in the fit, lands at -15% and -3% at 1 and 16).
_CDNA3_MOE_FLOOR = (
    f"{FITTED}: SGLang 0.5.9 Llama 4 Maverick BF16 TP8 on MI300X at concurrency 1/16/100 (github.com/sgl-project/"
    "sgl-cookbook, Llama4.md) and SGLang 0.5.19 DeepSeek-R1-0528 FP8 TP8 on MI325X at 4-64 (InferenceX pull 3318)"
)
# CDNA 4 keeps the floor CDNA 3 had before that fit: SGLang 0.5.9 DeepSeek-R1-0528 FP8 at TP8 on 8x MI355X (FP8 cache)
# decodes 64 sequences at a mean TPOT of 23.01 ms (1k in / 1k out, InferenceX pull 1243), 23% faster than the model with
# it, and CDNA 3's 40 us would put it 32% off; one point at 64 does not fit a floor, so none is fitted.
_CDNA4_MOE_FLOOR = (
    "gpu-advisor default: CDNA 3's MoE floor before its fit (SGLang DeepSeek-R1-0528 FP8 TP8 on MI355X at 64 "
    "sequences, github.com/SemiAnalysisAI/InferenceX/pull/1243: mean TPOT 23.01 ms, the model 23% slower)"
)


def _row(
    mbu: tuple[float, float, float],
    moe: tuple[float, float, float],
    prefill: tuple[float, float, float],
    floor: tuple[float, float, float],
    floor_moe: tuple[float, float, float],
    train: tuple[float, float, float],
    diffusion: tuple[float, float, float],
    fp8: tuple[float, float, float],
    fp4: tuple[float, float, float],
    sources: dict[str, str],
) -> dict[FactorName, Factor]:
    """One family's factors; a factor without a source of its own is the family's fitted default."""

    def make(name: FactorName, values: tuple[float, float, float], slower: bool = False) -> Factor:
        return Factor(*values, source=sources.get(name, sources["default"]), higher_is_faster=not slower)

    return {
        "decode_mbu_dense": make("decode_mbu_dense", mbu),
        "decode_mbu_moe": make("decode_mbu_moe", moe),
        "prefill_mfu": make("prefill_mfu", prefill),
        "step_floor_us_dense": make("step_floor_us_dense", floor, slower=True),
        "step_floor_us_moe": make("step_floor_us_moe", floor_moe, slower=True),
        "train_mfu": make("train_mfu", train),
        "diffusion_mfu": make("diffusion_mfu", diffusion),
        "fp8_decode": make("fp8_decode", fp8),
        "fp4_compute": make("fp4_compute", fp4),
    }


# Rows per GPU family: kernels, memory systems and software stacks mature at different paces (the seeds: ROCm costs
# ~10-20% and needs tuning; Gaudi needs integration), and a precision's byte saving is never fully realised.
# fp8_decode: the share of FP8's 2x byte saving that decode kernels realise (1 = all of it), for engines and families
# without measured GEMM tables (Hopper and Blackwell under TensorRT-LLM, vLLM and SGLang pay a fixed latency per FP8
# GEMM instead: domain/fp8_gemms.py); fp4_compute: the share of the FP4 tensor peak that FP4 GEMMs reach relative to
# the 16-bit MFU. Hopper and Blackwell's dense step floors are fit with FP8 GEMMs paying their measured latency, which
# the floor no longer has to absorb.
EFFICIENCY: dict[Family, dict[FactorName, Factor]] = {
    "hopper": _row(
        mbu=(0.80, 0.72, 0.88),
        moe=(0.8, 0.667, 0.911),
        prefill=(0.577, 0.472, 0.681),
        floor=(20.3, 14.3, 30.6),
        floor_moe=(26.9, 19.2, 43.2),
        train=(0.441, 0.378, 0.504),
        diffusion=(0.40, 0.32, 0.50),
        fp8=(0.873, 0.752, 0.95),
        fp4=(1.0, 1.0, 1.0),
        sources={"default": FITTED, "train_mfu": LLAMA3, "fp8_decode": f"{KERNELS}: H100/H200 FP8 GEMV at batch 1"},
    ),
    "blackwell": _row(
        mbu=(0.66, 0.572, 0.748),
        moe=(0.739, 0.591, 0.878),
        prefill=(0.485, 0.388, 0.582),
        floor=(16.9, 11.2, 26.3),
        floor_moe=(16.6, 12.5, 27),
        train=(0.416, 0.323, 0.485),
        diffusion=(0.36, 0.28, 0.45),
        fp8=(0.667, 0.546, 0.849),
        fp4=(0.60, 0.55, 0.65),
        sources={
            "default": FITTED,
            "fp8_decode": f"{KERNELS}: B200 FP8 GEMV at batch 1 (~1.6x off the byte ratio)",
            "fp4_compute": f"{_B200_GEMM}: nvfp4 / fp8 1.41-1.47x at 2048 rows, Llama 70B shapes",
        },
    ),
    "ampere": _row(
        mbu=(0.737, 0.662, 0.813),
        moe=(0.50, 0.42, 0.60),
        prefill=(0.63, 0.525, 0.735),
        floor=(26.8, 19.3, 37.5),
        floor_moe=(55, 40, 80),
        train=(0.48, 0.40, 0.55),
        diffusion=(0.374, 0.303, 0.463),
        fp8=(1.0, 1.0, 1.0),
        fp4=(1.0, 1.0, 1.0),
        sources={"default": FITTED, "train_mfu": MEGATRON},
    ),
    "ada": _row(
        mbu=(0.85, 0.735, 0.95),
        moe=(0.48, 0.38, 0.58),
        prefill=(0.65, 0.52, 0.78),
        floor=(8, 5.76, 12.8),
        floor_moe=(55, 40, 90),
        train=(0.33, 0.25, 0.42),
        diffusion=(0.274, 0.205, 0.342),
        fp8=(0.85, 0.75, 0.95),
        fp4=(0.55, 0.45, 0.70),
        sources={"default": FITTED},
    ),
    "cdna3": _row(
        mbu=(0.767, 0.643, 0.857),
        moe=(0.718, 0.575, 0.853),
        prefill=(0.263, 0.197, 0.328),
        floor=(15.5, 10.8, 24.5),
        floor_moe=(37.8, 26.2, 64),
        train=(0.30, 0.24, 0.36),
        diffusion=(0.33, 0.26, 0.42),
        fp8=(0.714, 0.63, 0.798),
        fp4=(1.0, 1.0, 1.0),
        sources={"default": FITTED, "step_floor_us_moe": _CDNA3_MOE_FLOOR},
    ),
    # CDNA 4 GEMM rates fit to one MI355X running Llama 3.1 8B at TP1 under vLLM 0.20 (offline, 1024 in / 128 out,
    # 16,384 prompts): BF16 65,725 total tok/s sets prefill_mfu, MXFP4 (weights and activations) 87,460 fp4_compute;
    # the same run's FP8 83,253 is left out of the fit as a check. The other factors, which these compute-bound runs
    # do not constrain, are CDNA 3's fitted values with wider bands; a decode-bound MI355X run (Llama 3.1 405B MXFP4
    # at TP1, concurrency 64, 1024 in / 1024 out, vllm-project/vllm#25135: median TPOT 76.05 ms) reproduces at -1%.
    "cdna4": _row(
        mbu=(0.807, 0.62, 0.902),
        moe=(0.8, 0.55, 0.95),
        prefill=(0.51, 0.41, 0.61),
        floor=(16.5, 11, 30),
        floor_moe=(20.8, 14, 40),
        train=(0.3, 0.22, 0.38),
        diffusion=(0.33, 0.24, 0.45),
        fp8=(0.714, 0.6, 0.85),
        fp4=(0.385, 0.31, 0.50),
        sources={
            "default": "gpu-advisor default: CDNA 3's fitted values (not constrained by the CDNA 4 measurements)",
            "prefill_mfu": f"{FITTED}: {_MI355X_8B} (BF16 65,725 total tokens/s)",
            "fp4_compute": f"{FITTED}: {_MI355X_8B} (MXFP4 87,460 total tokens/s)",
            "step_floor_us_moe": _CDNA4_MOE_FLOOR,
        },
    ),
    "gaudi": _row(
        mbu=(0.85, 0.703, 0.95),
        moe=(0.40, 0.30, 0.50),
        prefill=(0.75, 0.506, 0.794),
        floor=(21.6, 15.1, 32.4),
        floor_moe=(80, 60, 150),
        train=(0.35, 0.26, 0.42),
        diffusion=(0.23, 0.17, 0.27),
        fp8=(1.0, 0.88, 1.0),
        fp4=(1.0, 1.0, 1.0),
        sources={"default": FITTED, "diffusion_mfu": GAUDI_DIFFUSION},
    ),
    "ascend": _row(
        mbu=(0.50, 0.40, 0.60),
        moe=(0.35, 0.25, 0.45),
        prefill=(0.35, 0.25, 0.45),
        floor=(40, 30, 60),
        floor_moe=(80, 60, 150),
        train=(0.25, 0.15, 0.35),
        diffusion=(0.25, 0.15, 0.35),
        fp8=(1.0, 1.0, 1.0),
        fp4=(1.0, 1.0, 1.0),
        sources={"default": DEFAULT},
    ),
}

# Dense GEMMs reach a share params / (params + half) of a large GEMM's rate, params being one layer's always-read
# weights on one GPU (of its attention group). B200 TensorRT-LLM gemm tables at 2048 rows (fastest kernel, TFLOPS):
# bf16 16384x8192 1533, 10240x8192 1372 (0.61-0.68 of 2250); fp8 65536x8192 3033, 16384x8192 2756, 10240x8192 2449;
# Llama 8B's layer (6144x4096 1786, 4096x4096 1473, 16384x4096 2559, 4096x16384 1939) ~2140, 0.48 of 4500; Llama
# 70B TP8's (8192x1024 1100, 7168x8192 2209, 8192x3584 1873) ~1870, 0.42. In 16-bit terms (fp8 / 0.825) 0.58 at 250M
# parameters a layer and 0.50 at 109M: a large-GEMM MFU of 0.65 and half of it at 31.5M. Other families keep their
# fitted prefill_mfu (no size term).
GEMM_SIZE: dict[Family, tuple[Factor, float]] = {
    "blackwell": (Factor(0.65, 0.58, 0.72, f"{_B200_GEMM}: bf16 0.61-0.68 of peak at 2048 rows"), 31.5e6),
}
# Routed-expert GEMMs are grouped GEMMs of tokens x top-k / experts rows each: below a few hundred rows per expert
# they reach a share rows / (rows + MOE_GEMM_HALF_ROWS) of the large-batch rate (H200 TensorRT-LLM moe tables:
# bf16 and fp8 at 128 rows per expert ~0.52 of their 1024-row rate, fp8 block-scaled DeepSeek-V3 at 64 rows 0.6).
MOE_GEMM_HALF_ROWS = Factor(
    96,
    48,
    128,
    f"{KERNELS}: h200_sxm trtllm 1.3.0rc20 moe_perf, balanced routing, efficiency vs tokens per expert",
    higher_is_faster=False,
)
# Routed-expert GEMMs of block-scaled FP8 checkpoints (128 x 128 weight scales: DeepSeek-V3/R1, Kimi K2) run at this
# share of the per-tensor FP8 rate: the grouped GEMMs apply a scale per K block in the main loop (TensorRT-LLM moe
# tables, Qwen3-235B-A22B shapes, EP4, 16384 tokens = 1024 rows per expert, 94 layers: h200_sxm fp8_block 341.54 ms vs
# fp8 173.60 ms, 0.51; 8192 tokens 0.47, 2048 tokens 0.63; h100_sxm 406.43 vs 218.22 ms, 0.54, 2048 tokens 0.68;
# b200_sxm 147.62 vs 102.56 ms, 0.69, 2048 tokens 0.96). Families without tables run them at the per-tensor rate.
_BLOCK = f"{KERNELS}: trtllm 1.3.0rc20 moe_perf, fp8_block vs fp8 at 1024 rows per expert (Qwen3-235B-A22B shapes)"
BLOCK_FP8_MOE: dict[Family, Factor] = {
    "hopper": Factor(0.51, 0.47, 0.68, f"{_BLOCK}: H200 0.51, H100 0.54"),
    "blackwell": Factor(0.69, 0.69, 0.96, f"{_BLOCK}: B200 0.69"),
}
# Weight-only 4-bit GEMMs dequantise in the main loop: large batches compute at ~0.62 of the 16-bit GEMM rate
# (H200 TensorRT-LLM moe tables: w4a16_mxfp4 gpt-oss shapes 0.385 of the BF16 peak at 2048+ rows per expert,
# bfloat16 Qwen3-235B shape 0.63 at 1024 rows).
W4_COMPUTE = Factor(
    0.62,
    0.55,
    0.75,
    f"{KERNELS}: h200_sxm trtllm 1.3.0rc20 moe_perf, w4a16_mxfp4 vs bfloat16 gpt-oss/Qwen3 shapes",
)

# Quantised kernels.
W4_DECODE = Factor(
    0.80, 0.70, 0.90, "W4A16 decode speeds up less than the byte ratio (Marlin kernels, arXiv:2408.11743)"
)
FP8_PREFILL = Factor(0.825, 0.75, 0.90, "FP8 prefill ~1.5-1.8x BF16, not 2x (TensorRT-LLM FP8 benchmarks)")
LORA_TIME = Factor(
    0.75,
    0.70,
    0.80,
    "LoRA skips weight gradients: ~0.7-0.8x the full fine-tune time (Hu et al. 2021, arXiv:2106.09685)",
    higher_is_faster=False,
)
FP8_TRAIN = Factor(
    1.0,
    0.85,
    1.1,
    "FP8 training reaches about the BF16 MFU, of the FP8 peak, with current Transformer Engine recipes "
    "(github.com/NVIDIA-NeMo/Megatron-Bridge performance summary)",
)
DIFFUSION_PASS_FLOOR_MS = Factor(
    15,
    8,
    20,
    "diffusers eager denoiser passes are launch-bound at ~15 ms for SD 1.5 at 512x512 "
    "(fal.ai stable-diffusion-benchmarks)",
    higher_is_faster=False,
)
MOE_TRAIN = Factor(
    0.66,
    0.55,
    0.80,
    "MoE pre-training reaches ~23-28% of BF16 peak in model FLOPs on H100 (DeepSeek-V3 25% with every layer "
    "recomputed, ~33% of the hardware's FLOPs; gpt-oss 23-28% without) where dense models reach ~40% "
    "(github.com/NVIDIA-NeMo/Automodel performance summary and its benchmark configs)",
)
COMPILED_DIFFUSION = Factor(
    1.35,
    1.2,
    1.5,
    "compiled diffusion graphs run 1.3-1.45x diffusers eager on SDXL (fal.ai stable-diffusion-benchmarks; "
    "Hugging Face 'Accelerating generative AI' posts)",
)
# ONNX Runtime's CUDA execution provider (fused attention, NHWC convolutions, GroupNorm fusions) is no TensorRT:
# against PyTorch 2.0 SDPA at batches past the launch floor it is 1.05-1.18x faster (SD 1.5, 512x512, 50 steps:
# A100-40GB 6.9 vs 7.6 s at batch 8, 13.6 vs 14.8 s at 16; V100 15.9 vs 17.0 s at 8; T4 22.6 vs 25.2 s at 4;
# RTX 3060 33.5 vs 39.5 s at 8).
ORT_CUDA_DIFFUSION = Factor(
    1.1,
    1.05,
    1.18,
    "github.com/microsoft/onnxruntime/blob/b1954fabd2ec6c699c7b669423d23f8bc805cfff/onnxruntime/python/tools/"
    "transformers/models/stable_diffusion/README.md (onnxruntime CUDA vs torch 2.0.0+cu117 default)",
)
# Compiled graphs launch one kernel graph per pass: about half the eager launch floor.
COMPILED_DIFFUSION_FLOOR = 2.0
QLORA_SLOWDOWN = Factor(
    1.3, 1.15, 1.6, "QLoRA dequantisation per step (Dettmers et al. 2023, arXiv:2305.14314)", higher_is_faster=False
)


def family_of(gpu: Gpu) -> Family:
    """The efficiency row a GPU uses: its vendor's generation, with GDDR/PCIe NVIDIA cards in one row."""
    # Asked for on every estimate of every layout: a pure function of the fields it reads (hashing the whole record
    # would cost more than the answer).
    return _family(gpu.vendor, gpu.architecture, gpu.memory_type)


@cache
def _family(vendor: str, architecture: str, memory_type: str) -> Family:
    arch = architecture.lower()
    if vendor == "amd":
        return "cdna4" if "cdna 4" in arch or "cdna4" in arch else "cdna3"
    if vendor == "intel":
        return "gaudi"
    if vendor == "huawei":
        return "ascend"
    if not memory_type.upper().startswith("HBM"):
        return "ada"
    if "blackwell" in arch:
        return "blackwell"
    if "hopper" in arch:
        return "hopper"
    return "ampere"


def factor(gpu: Gpu, name: FactorName) -> Factor:
    """The factor for this GPU's family."""
    return EFFICIENCY[family_of(gpu)][name]


def doublings(group: int) -> float:
    """log2 of a group size: how many times it doubled from one GPU."""
    return math.log2(group) if group > 1 else 0.0


def peer_to_peer(gpu: Gpu) -> bool:
    """Whether PCIe cards reach each other directly: datacenter and workstation cards do, GeForce cards do not."""
    return gpu.segment != "consumer"
