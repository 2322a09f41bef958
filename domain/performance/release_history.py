"""Dated engine releases that changed serving efficiency, with their sources: the table the effects are read from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

from domain.hardware.efficiency import Family

# What a change sped up: the decode step's KV-cache reads of grouped/multi-query attention (a release without it
# read each KV head once per query head of its group, so its slowdown is the model's group size, not a factor); a
# diffusion pipeline's whole denoising loop (its attention layers); the decode step of a 4-bit weight-only MoE with
# many experts; a training step of adapters (LoRA) on a dense model split by tensor parallelism; the decode step of a
# multi-head latent attention (DeepSeek-architecture) model run eagerly, without CUDA graphs, so each layer's kernel
# launches cost host time; a diffusion pipeline's denoising step run without a CUDA graph, whose launches likewise
# cost host time once per step; the weights the decode step of a multi-head latent attention model reads; a
# DeepSeek-architecture model's decode step and prefill on AMD GPUs before AITER's kernels (Triton MLA decode, MoE and
# block-FP8 GEMMs).
Applies = Literal[
    "gqa_decode_attention",
    "diffusion_attention",
    "w4_moe_decode",
    "tp_dense_lora_step",
    "eager_mla_decode",
    "eager_diffusion_step",
    "absorbed_mla_decode",
    "rocm_pre_aiter_mla",
]


@dataclass(frozen=True, kw_only=True)
class Release:
    """A change that arrived in `engine` at version `since`: releases before it run `factor` x slower there."""

    # Where a run names no version, the day `since_date` stands in for `since`.

    engine: str
    since: tuple[int, ...]
    change: str
    applies: Applies
    source: str
    quote: str
    factor: float = 1.0  # 1 where the release adds host time or weights instead
    since_date: date | None = None
    # Where the gain depends on the batch: (batch, factor) from the smallest measured batch up, each holding until the
    # next; past `up_to_batch` the release changes nothing.
    by_batch: tuple[tuple[int, float], ...] = ()
    up_to_batch: int = 0
    # Time an older run adds (such a release's `factor` is 1): per layer of a decode step (eager_mla_decode's host
    # launches, rocm_pre_aiter_mla's slower kernels), per denoising step of a diffusion pipeline, one denoiser call
    # whatever the batch (eager_diffusion_step).
    host_us: float = 0.0
    prefill: float = 1.0  # how many times longer a prefill took before the change
    families: frozenset[Family] = frozenset()  # GPU families the change concerns (empty: every family)

    def factor_at(self, batch: int) -> float:
        """The slowdown at `batch` sequences in flight."""
        if not self.by_batch:
            return self.factor
        if self.up_to_batch and batch > self.up_to_batch:
            return 1.0
        return next((f for size, f in reversed(self.by_batch) if size <= batch), self.by_batch[0][1])

    def lacks(self, engine: str, version: str, measured: date) -> bool:
        """Whether a run of `engine` at `version`, measured on `measured`, predates this change."""
        # A run with neither a version nor a date before `since_date` is taken as current.
        if engine != self.engine:
            return False
        parsed = parse_version(version) if version else ()
        if parsed:
            return parsed < self.since
        # No version, or one that is not a number (a branch name): the date tells.
        return self.since_date is not None and measured < self.since_date


# Eager PyTorch decoding of a DeepSeek-architecture model is bound by the host launching each layer's kernels: with
# CUDA graphs SGLang's batch-1 step of DeepSeek-Coder-V2-Lite (27 MLA layers, 26 of them MoE) took 6.22 ms and was
# 4x faster than without, so eager launches cost (4 - 1) x 6.22 ms / 27 layers, about 690 us a layer.
EAGER_MLA_LAYER_HOST_US = 3 * 6220 / 27

EAGER_SOURCE = "https://github.com/sgl-project/sglang/pull/1401"

EAGER_QUOTE = (
    "## DeepSeek-Coder-V2-Lite (4x faster) ... # triton w/ cuda graph # Decode.  median latency: 0.00622 s, median "
    "throughput:    160.82 token/s"
)

# AMD's SGLang + AITER integration (a private SGLang 0.4.4 build) measured DeepSeek-R1 FP8 at TP8 on 8x MI300X with and
# without AITER's kernels (bench_one_batch, batch 64, 512 in / 32 out): the decode step went from 53.19 to 28.37 ms and
# the prefill latency fell by 52%. The difference holds at every batch of the early-2025 sweeps (vLLM 0.7.3 on MI300X:
# median ITL 22-32 ms above today's step at 4-128 sequences), so it is a fixed time per layer of the 61, not a factor.
PRE_AITER_MLA_LAYER_US = (53.19 - 28.37) * 1e3 / 61

PRE_AITER_PREFILL = 1 / (1 - 0.52)

PRE_AITER_SOURCE = "https://rocm.blogs.amd.com/artificial-intelligence/aiter-intergration-s/README.html"

PRE_AITER_QUOTE = (
    "Prefill Latency: ↓ 52% ... Decode Latency: ↓ 47% ... Decode. median latency: 0.05319 s, median throughput: "
    "1203.31 token/s ... Decode. median latency: 0.02837 s, median throughput: 2255.85 token/s"
)

AMD_FAMILIES: frozenset[Family] = frozenset({"cdna3", "cdna4"})


def _pre_aiter(engine: str, since: tuple[int, ...], change: str) -> Release:
    """The release that brought AITER's MLA decode to `engine` on AMD GPUs."""
    return Release(
        engine=engine,
        since=since,
        change=change,
        applies="rocm_pre_aiter_mla",
        host_us=PRE_AITER_MLA_LAYER_US,
        prefill=PRE_AITER_PREFILL,
        families=AMD_FAMILIES,
        source=PRE_AITER_SOURCE,
        quote=PRE_AITER_QUOTE,
    )


# ONNX Runtime's Stable Diffusion benchmark timed its CUDA pipeline with and without a CUDA graph on the same
# A100-PCIE-80GB, release and batch 1: 1.11 s vs 1.04 s over 50 steps, 1.4 ms of launches per denoising step.
EAGER_DIFFUSION_STEP_HOST_US = (1.11 - 1.04) / 50 * 1e6

# TensorRT-LLM before v0.8 decoded grouped-query attention with its masked multi-head attention kernel: one thread block
# per query head (`hi{blockIdx.x}`), each loading the cache of its group's KV head (`hi_kv{hi / qhead_per_kv}`), so a
# decode step read each KV head once per query head of its group. v0.8 made XQA (one load per KV head for the whole
# group) the default. The slowdown is the group size, from the model and the kernel alone: an upper bound, as blocks of
# one group that share the L2 cache read less from memory than that, and v0.6.1 ran XQA as an opt-in where its own
# tests showed a gain.
XQA_SOURCE = (
    "https://github.com/NVIDIA/TensorRT-LLM/blob/v0.6.1/cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/"
    "decoderMaskedMultiheadAttentionTemplate.h"
)
XQA_QUOTE = (
    "// The head. const unsigned hi{blockIdx.x}; // The head index of keys and values adjusted for MQA/GQA. "
    "const int qhead_per_kv{params.num_heads / params.num_kv_heads}; const unsigned hi_kv{hi / qhead_per_kv};"
)

RELEASES: tuple[Release, ...] = (
    Release(
        engine="trtllm",
        since=(0, 8),
        change="XQA kernel by default: generation-phase MQA/GQA attention loading each KV head once for its group of "
        "query heads, where the masked multi-head attention kernel loaded it once per query head",
        applies="gqa_decode_attention",
        source=XQA_SOURCE,
        quote=XQA_QUOTE,
    ),
    Release(
        engine="diffusers",
        since=(0, 13),
        change="PyTorch 2 scaled_dot_product_attention (flash/memory-efficient attention) by default",
        applies="diffusion_attention",
        # Stable Diffusion 1.5 on an A100 at batch 1, 50 steps: vanilla attention 2.69 s, SDPA 1.98 s.
        factor=2.69 / 1.98,
        source="https://github.com/huggingface/diffusers/pull/2764.patch",
        quote="| GPU | Batch Size | Vanilla Attention | xFormers | PyTorch2.0 SDPA | ... "
        "| A100 | 1 | 2.69 | 2.7 | 1.98 |",
        # SDPA needs PyTorch 2.0, released on 15 March 2023 (pytorch.org/blog/pytorch-2.0-release).
        since_date=date(2023, 3, 15),
    ),
    Release(
        engine="vllm",
        since=(0, 8),
        change="CUDA moe_wna16 kernel for 4-bit AWQ/GPTQ experts (before: the Triton moe_wna16 kernel, the default "
        "for MoEs with many experts since vllm-project/vllm#13236); only the MoE GEMM changed",
        applies="w4_moe_decode",
        # Generation speed of DeepSeek-V3-AWQ on 8x A100 by batch, Triton (main) vs the PR's CUDA kernel; merged on
        # 2025-03-11, first released in 0.8.0. Past 256 sequences the Triton kernel is still the faster one.
        factor=48.1 / 34.1,
        by_batch=(
            (1, 48.1 / 34.1),
            (2, 80.7 / 43.9),
            (4, 134.9 / 66.6),
            (8, 200.5 / 93.7),
            (12, 230.6 / 104.8),
            (16, 291.4 / 125.1),
            (24, 327.8 / 150.7),
            (32, 377.3 / 171.9),
            (48, 449.8 / 222.4),
            (64, 495.7 / 262.7),
        ),
        up_to_batch=256,
        source="https://github.com/vllm-project/vllm/pull/13321",
        quote="It have better generation speed than triton version when `num_seqs * top_k / num_experts` is small "
        "(for deepseek-v3/deepseek-r1, it have better performance when num_seqs <= 256). ... The generation speed on "
        "8*A100 + deepseek-v3-awq (tokens/s): | bs | triton(main) | cuda (fp16) (pr) | ... | 1 | 34.1 | 48.1 | "
        "141.06% | ... | 64 | 262.7 | 495.7 | 188.69% |",
    ),
    # NeMo AutoModel's LoRA table (DGX-H100, BF16, mock data) re-measured the same run as releases landed: Llama 3.3
    # 70B on 8 GPUs, GBS 32, 4096 tokens, adapters on all linear layers, activation checkpointing, tensor parallel 2.
    Release(
        engine="nemo-automodel",
        since=(0, 3),
        change="RMSNorm fusion and a RoPE cache for dense models (Automodel#1120, first in v0.3.0), same layout",
        applies="tp_dense_lora_step",
        factor=658.62 / 608.42,
        source="https://github.com/NVIDIA-NeMo/Automodel/commit/822effa1675e24a4a4538ae41eb2856e9dfb9fed",
        quote="feat: add norm fusion and rope cache for dense model ... -| Llama3 70B | 8 | 32 | 1 | 4 | 4 | 4096 | 2 "
        "| 4 | 1 | - | 10 | 1 | - | 26.92 | 176 | 608.42 | +| Llama3 70B | 8 | 32 | 1 | 4 | 4 | 4096 | 2 | 4 | 1 | - "
        "| 10 | 1 | - | 24.87 | 190 | 658.62 |",
        since_date=date(2026, 1, 28),
    ),
    Release(
        engine="nemo-automodel",
        since=(0, 5),
        change="Transformer Engine + Triton LoRA kernels, async tensor parallelism with sequence parallelism, FSDP2 "
        "weight prefetching and torch.compile (Automodel#1711, first in v0.5.0)",
        applies="tp_dense_lora_step",
        # The re-measured run also moved from 4 pipeline stages to 4 FSDP ranks, which the model prices the same
        # (both hold recomputed 8-GPU tensor-parallel-2 steps with a negligible bubble): the gain is the release's.
        # Runs without tensor parallelism gained less (Qwen2.5 32B: 1950.93 -> 2250.31 while moving TP 1 -> 2), so
        # this covers tensor-parallel runs only.
        factor=1091.85 / 658.62,
        source="https://github.com/NVIDIA-NeMo/Automodel/commit/2013a4dd6e932c4e4f48ca6b4a3fc295cdd64e33",
        quote="feat: FSDP2 w weight prefetching and async TP optimization ... +| Llama3 70B | 8 | 32 | 2 | 2 | 4 "
        "| 4096 | 2 | 1 | 1 | - | 1 | 4 | TE + triton + fsdp2_prefetch | 15.00 | 316 | 1091.85 |",
        since_date=date(2026, 4, 10),
    ),
    Release(
        engine="trtllm",
        since=(1, 0),
        change="PyTorch backend: CUDA graphs for decoding on by default (NVIDIA/TensorRT-LLM#5480, merged July 2025; "
        "before it PyTorchConfig had use_cuda_graph: bool = False, and trtllm-serve without an extra options file "
        "decoded eagerly)",
        applies="eager_mla_decode",
        host_us=EAGER_MLA_LAYER_HOST_US,
        source=EAGER_SOURCE,
        quote=EAGER_QUOTE,
        since_date=date(2025, 7, 1),
    ),
    Release(
        engine="onnxruntime",
        since=(1, 16),
        change="CUDA graph for the Stable Diffusion CUDA pipeline (OnnxruntimeCudaStableDiffusionPipeline, I/O "
        "bound to GPU buffers); before it diffusers' OnnxStableDiffusionPipeline ran each step from numpy",
        applies="eager_diffusion_step",
        host_us=EAGER_DIFFUSION_STEP_HOST_US,
        source="https://github.com/microsoft/onnxruntime/blob/b1954fabd2ec6c699c7b669423d23f8bc805cfff/onnxruntime/"
        "python/tools/transformers/models/stable_diffusion/README.md",
        quote="Results of A100-PCIE-80GB ... | onnxruntime | 1.16.0 nightly | cuda | 1 | 1.11 | 4,760 | 5,144 | "
        "| onnxruntime | 1.16.0 nightly | cuda (cuda graph) | 1 | 1.04 | 5,230 | 5,390 |",
        # onnxruntime 1.16.0 was released on 20 September 2023.
        since_date=date(2023, 9, 20),
    ),
    Release(
        engine="vllm",
        since=(0, 8),
        change="MLA decode without materialised absorbed weights (vllm-project/vllm#14770, merged 2025-03-14, first "
        "in 0.8.0); before it V0 decoded with W_UK absorbed into the query projection and W_UV into o_proj, "
        "products of heads x KV latent held beside the checkpoint's weights and read every step",
        applies="absorbed_mla_decode",
        # v0.7.3 (ed6e907, 2025-02-20): VLLM_MLA_PERFORM_MATRIX_ABSORPTION defaults to 1 (vllm/envs.py). For
        # DeepSeek-V3 the two products are 1536 x 128 x 512 and 128 x 512 x 7168 parameters a layer, against 172 M
        # for the q_b_proj, kv_b_proj and o_proj they stand in for: an AWQ checkpoint's decode read over ten times its
        # attention bytes, and the products' FLOPs.
        source="https://github.com/vllm-project/vllm/blob/ed6e9075d31e32c8548b480a47d1ffb77da1f54c/vllm/attention/"
        "backends/mla/utils.py",
        quote="* We can precompute the product of W_UQ and W_UK into W_UQ_UK (Lq, N, Lkv), which is possible due to "
        "QK^T operation in attention. * We can precompute the product of W_UV and W_O into W_UV_O (N, Lkv, H), which "
        'is possible due to V@O as the "epilogue" of attention ... self.W_Q_UK = W_Q_UK.to(act_dtype) ... '
        "self.W_UV_O = W_UV_O.to(act_dtype)",
    ),
    _pre_aiter(
        "vllm",
        (0, 8, 5),
        "AITER MLA backend on ROCm (vllm/attention/backends/rocm_aiter_mla.py, AITER's mla_decode_fwd, with "
        "VLLM_ROCM_USE_AITER=1; first in 0.8.5, vllm-project/vllm#15893); before it every MLA model on ROCm ran "
        "TritonMLABackend with Triton MoE and block-FP8 GEMMs",
    ),
    _pre_aiter(
        "sglang",
        (0, 4, 7),
        "--attention-backend aiter with AITER's MLA decode and SGLANG_USE_AITER (first in 0.4.7: "
        "python/sglang/srt/layers/attention/aiter_backend.py 'from aiter.mla import mla_decode_fwd'); before it "
        "DeepSeek on ROCm decoded with the Triton MLA kernel",
    ),
)


def parse_version(version: str) -> tuple[int, ...]:
    """'0.6.1' -> (0, 6, 1); a suffix such as 'rc1' or 'a' ends a part."""
    parts = []
    for part in version.lstrip("v").split("."):
        digits = ""
        for char in part:
            if not char.isdigit():
                break
            digits += char
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)
