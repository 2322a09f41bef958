"""Multi-head latent attention (DeepSeek-V2/V3 family): the attention block's work and the rate prefill runs it at."""

from __future__ import annotations

import math

from domain.catalog import LlmModel, Mla
from domain.hardware.efficiency import KERNELS, Factor, Family, Scenario

# The down-projections to the query and KV latents are replicated on every GPU of a tensor-parallel attention group,
# not split: vLLM's DeepseekV2Attention builds `self.q_a_proj = ReplicatedLinear(self.hidden_size, self.q_lora_rank`
# and `self.kv_a_proj_with_mqa = ReplicatedLinear(self.hidden_size, self.kv_lora_rank + self.qk_rope_head_dim`
# (github.com/vllm-project/vllm/blob/002d6073aa034d4f5545d45021b0e56d1f3c3593/vllm/model_executor/models/
# deepseek_v2.py); q_b_proj and kv_b_proj are ColumnParallelLinear, o_proj RowParallelLinear.
#
# With that work counted, context MLA runs at about the 16-bit prefill rate whatever the GEMMs' precision, a little
# faster as the heads per GPU grow: the measured attention-block tables (aiconfigurator-core 0.12.0, systems/data/
# <gpu>/mla/trtllm/1.3.0rc20/mla_context_module_perf, DeepSeek-V3 shapes, FP8 KV cache, 1 x 2048 tokens, 16 heads =
# TP8) give h200_sxm 0.3222 ms per layer with bf16 GEMMs and 0.3150 ms with fp8_block GEMMs (128 heads: 1.5350 /
# 1.2857 ms), b200_sxm 0.1704 / 0.1616 ms (128 heads x 4096 tokens: 1.6216 / 1.2765 ms, nvfp4 1.2074 ms). A curve
# is the block's speed over a 16-bit rate the tables were read at (READ_AT: the share of the bf16 peak the family's
# prefill_mfu had then, so a later refit of prefill_mfu cannot move a measured block) at 16 and at 128 heads per GPU,
# interpolated in log2(heads): the median over the tables' rows (TensorRT-LLM 1.3.0rc20 and vLLM 0.24.0;
# 1-16 sequences of 1024-8192 tokens), the band the rows' quartiles widened to hold both engines' medians. Hopper,
# from h200_sxm alone at prefill_mfu 0.575 of 989 TFLOPS (FLOPs per GPU as prefill_flops counts them / TP):
# fp8_block 1.09 at 16 heads (TensorRT-LLM 1.13, vLLM 1.03; quartiles 1.01-1.20), 1.33 at 128 (1.22, 1.40;
# 1.19-1.42); bf16 1.04 (1.06, 0.99; 0.96-1.15) -> 1.17 (1.15, 1.18; 1.08-1.25). Blackwell fp8_block 1.73 -> 2.05
# (vLLM 1.73 -> 2.17), nvfp4 1.72 -> 2.20 (vLLM 2.08 -> 2.50), bf16 1.38 -> 1.54 (vLLM 1.60 -> 1.78). Other families'
# 8-bit GEMMs run it at the 16-bit rate; 16-bit and weight-only 4-bit GEMMs without tables keep the GEMM rate.
_TABLES = f"{KERNELS}: mla_context_module_perf (trtllm 1.3.0rc20, vllm 0.24.0), DeepSeek-V3 shapes, speed over 16-bit"
MLA_PREFILL: dict[tuple[Family, int], tuple[Factor, Factor]] = {
    ("hopper", 16): (
        Factor(1.04, 0.96, 1.15, f"{_TABLES}: H200 bf16, 16 heads"),
        Factor(1.17, 1.08, 1.25, f"{_TABLES}: H200 bf16, 128 heads"),
    ),
    ("hopper", 8): (
        Factor(1.09, 1.01, 1.2, f"{_TABLES}: H200 fp8_block, 16 heads"),
        Factor(1.33, 1.19, 1.42, f"{_TABLES}: H200 fp8_block, 128 heads"),
    ),
    ("blackwell", 16): (
        Factor(1.45, 1.15, 1.8, f"{_TABLES}: B200 bf16, 16 heads"),
        Factor(1.6, 1.42, 2.0, f"{_TABLES}: B200 bf16, 128 heads"),
    ),
    ("blackwell", 8): (
        Factor(1.73, 1.2, 1.9, f"{_TABLES}: B200 fp8_block, 16 heads"),
        Factor(2.1, 1.86, 2.3, f"{_TABLES}: B200 fp8_block, 128 heads"),
    ),
    ("blackwell", 4): (
        Factor(1.8, 1.24, 2.2, f"{_TABLES}: B200 nvfp4, 16 heads"),
        Factor(2.3, 1.91, 2.55, f"{_TABLES}: B200 nvfp4, 128 heads"),
    ),
}
_FEW, _MANY = 16, 128  # heads per GPU the curves are given at
# Where no table measures a family, its 8-bit block runs at Hopper's 16-head fp8_block speed, the smallest gain FP8
# shows in any table (1.09; bf16's 1.04): the score and value products and the small replicated projections stay
# 16-bit work. Taking the FP8 GEMM rate there (1.5-1.8x) made DeepSeek-R1's 3,200-token prefill on 8x MI300X a third
# faster than the 0.43 s per request SGLang's own sweep implies (dstack, Feb 2025: 128 x 0.43 s + 800 x 104.6 ms
# median ITL is the 139 s a wave of 128 requests took).
UNTABLED_8_BIT = MLA_PREFILL[("hopper", 8)][0]
# The share of the bf16 peak each family's curves are speeds over: its prefill_mfu when the tables were read.
READ_AT: dict[Family, float] = {"hopper": 0.575, "blackwell": 0.485}


def gemm_bits(precision: str, fp4_cores: bool) -> int:
    """Operand width of a precision's GEMM math (0: weight-only 4-bit dequantises as it goes)."""
    if precision in ("fp8", "int8"):
        return 8
    if precision == "fp4" and fp4_cores:
        return 4
    return 16 if precision in ("bf16", "fp16") else 0


def prefill_factors(family: Family, bits: int) -> tuple[tuple[str, Factor], ...]:
    """The measured factors an MLA prefill at this operand width reads, named as an estimate states them: a curve's
    two ends, or the untabled speed; none where the block runs at the GEMM rate."""
    curve = MLA_PREFILL.get((family, bits))
    if curve is not None:
        return (("mla_prefill_speed_16_heads", curve[0]), ("mla_prefill_speed_128_heads", curve[1]))
    return (("mla_prefill_speed", UNTABLED_8_BIT),) if bits == 8 else ()


def prefill_speed(family: Family, bits: int, heads: float, scenario: Scenario) -> float | None:
    """The MLA block's prefill speed over its 16-bit reference rate with `heads` heads per GPU; None: the GEMM rate."""
    factors = [factor.at(scenario) for _, factor in prefill_factors(family, bits)]
    if len(factors) < 2:
        return factors[0] if factors else None
    few, many = factors
    share = min(1.0, max(0.0, math.log2(heads / _FEW) / math.log2(_MANY / _FEW)))
    return few + (many - few) * share


def prefill_mfu(family: Family, bits: int, heads: float, scenario: Scenario, family_mfu: float) -> float | None:
    """The MLA block's share of the bf16 peak: a measured curve over the rate it was read at, else over the family's
    prefill MFU (`family_mfu`); None: the GEMM rate."""
    speed = prefill_speed(family, bits, heads, scenario)
    if speed is None:
        return None
    return speed * READ_AT.get(family, family_mfu)


def _query_params(model: LlmModel, mla: Mla) -> tuple[float, float]:
    """(replicated, split) query-projection parameters of one layer."""
    q_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    if mla.q_lora_rank:
        return float(model.hidden_size * mla.q_lora_rank), float(mla.q_lora_rank * model.attention_heads * q_head)
    return 0.0, float(model.hidden_size * model.attention_heads * q_head)


def replicated_params(model: LlmModel) -> float:
    """Parameters of one layer's attention block every GPU of a tensor-parallel group holds whole (0 without MLA)."""
    mla = model.mla
    if mla is None:
        return 0.0
    query, _ = _query_params(model, mla)
    return query + model.hidden_size * (mla.kv_lora_rank + mla.qk_rope_head_dim)


def block_params(model: LlmModel) -> float:
    """Parameters of one layer's MLA block (projections in and out), once."""
    mla = model.mla
    if mla is None:
        return 0.0
    _, split = _query_params(model, mla)
    heads = model.attention_heads
    up = mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim) + heads * mla.v_head_dim * model.hidden_size
    return replicated_params(model) + split + up


def prefill_flops(model: LlmModel, tokens: float, tensor: int) -> float:
    """FLOPs a tensor-parallel group of `tensor` GPUs spends in the MLA blocks prefilling one sequence, all layers."""
    # The replicated down-projections run on each of the group's GPUs; the score and value products as the dense
    # prefill counts them (2 x tokens^2 x heads x head_dim per layer).
    projections = 2.0 * tokens * (block_params(model) + (tensor - 1) * replicated_params(model))
    scores = 2.0 * tokens * tokens * model.attention_heads * model.head_dim
    return model.layers * (projections + scores)


def absorbed_decode_params(model: LlmModel) -> tuple[float, float, float]:
    """(absorbed products, rope query slice, projections they replace): one layer's MLA decode in vLLM V0 before 0.8."""
    # Decode then read W_Q_UK (q latent -> heads x KV latent) and W_UV_O (heads x KV latent -> hidden), built from the
    # checkpoint at load, and the query's rope slice, in place of q_b_proj, kv_b_proj and o_proj.
    mla = model.mla
    if mla is None:
        return 0.0, 0.0, 0.0
    heads, latent = model.attention_heads, mla.kv_lora_rank
    query_in = mla.q_lora_rank or model.hidden_size
    absorbed = query_in * heads * latent + heads * latent * model.hidden_size
    rope = query_in * heads * mla.qk_rope_head_dim
    _, split = _query_params(model, mla)
    up = latent * heads * (mla.qk_nope_head_dim + mla.v_head_dim) + heads * mla.v_head_dim * model.hidden_size
    return float(absorbed), float(rope), split + up


def attention_flops_per_position(model: LlmModel) -> float:
    """FLOPs per token, per layer, per position of context (QK^T and AV); MLA with the latent absorbed."""
    if model.mla is not None:
        latent = model.mla.kv_lora_rank
        return (
            2.0 * model.attention_heads * (latent + model.mla.qk_rope_head_dim) + 2.0 * model.attention_heads * latent
        )
    return 4.0 * model.attention_heads * model.head_dim


# vLLM's MLA decode block (FlashMLA on Hopper) takes a fixed ~60 us per layer longer than TensorRT-LLM's at every batch,
# head count and GEMM kind in the measured module tables (aiconfigurator-core 0.12.0, systems/data/<gpu>/mla/
# {vllm/0.24.0,trtllm/1.3.0rc20}/mla_generation_module_perf.parquet, FP8 KV cache, 1, 4, 16 and 64 sequences at 1024
# and 2048 tokens): vllm - trtllm median per head count (1-128), h200_sxm fp8_block GEMMs 55.2-71.1 us (16 heads =
# TP8: 65.5; batch 1 at 2048 tokens 103.4 vs 54.3 us), bf16 GEMMs 45.4-68.4 (16 heads: 68.4); on b200_sxm (FlashInfer
# MLA) 2.8-16.5 us. The step's per-layer floor is shared by the engines, so the difference is what vLLM adds. The
# extra applies whatever the heads per GPU and GEMM kind, so Hopper's is the median of H200's 16 figures (59.6 us),
# its band their range.
_DECODE = f"{KERNELS} 0.12.0: systems/data/{{}}/mla/{{{{vllm/0.24.0,trtllm/1.3.0rc20}}}}/mla_generation_module_perf"
# No extra for CDNA 3: the only measurement of a current stack's MLA decode there (SGLang 0.5.19 DeepSeek-R1-0528 on
# MI325X) is a test-set source, which no factor may be chosen from, and AMD's AITER integration post (bench_one_batch,
# batch 64: 28.37 ms a decode step on 8x MI300X) is already faster than the step without any extra.
MLA_DECODE_EXTRA_US: dict[tuple[str, Family], Factor] = {
    ("vllm", "hopper"): Factor(
        59.6,
        45.4,
        71.1,
        _DECODE.format("h200_sxm") + ", vllm - trtllm per layer: H200 fp8_block 55.2-71.1 us, bf16 45.4-68.4 us",
        False,
    ),
    ("vllm", "blackwell"): Factor(
        4.0, 2.8, 16.5, _DECODE.format("b200_sxm") + ", vllm - trtllm per layer: B200 2.8-16.5 us", False
    ),
}


def decode_extra_latency(engine: str, family: Family, model: LlmModel) -> Factor | None:
    """What an engine's MLA decode block adds per layer (us) over the shared floor; None for other engines or models."""
    return MLA_DECODE_EXTRA_US.get((engine, family)) if model.mla is not None else None


# SGLang's Hopper MLA decode with an FP8 cache (default fa3 backend; flashinfer_mla too) casts the layer's whole KV
# pool to bf16 every layer, every step, used slots or not: "a **full-pool** bf16 materialization (all allocated slots,
# not just resident tokens)" (github.com/sgl-project/sglang/pull/35322); "on DeepSeek-R1 (8×H200, 131K-token pool)
# the same cast costs 13.77 ms of a 31.52 ms decode step" (github.com/sgl-project/sglang/issues/35291). The measured
# kernel tables agree (aiconfigurator-core 0.12.0, systems/data/{h100_sxm,h200_sxm}/mla/sglang/0.5.14/
# generation_mla_perf, fp8 - bfloat16 cache: 1.65-1.90 us per 1k pool tokens per layer; b200_sxm none).
# `--attention-backend flashmla` reads the FP8 pool in place ("produces zero such launches", issues/35291), so the
# planner launches that backend there and the estimate pays no cast.
FP8_POOL_CAST: frozenset[tuple[str, Family]] = frozenset({("sglang", "hopper")})


def casts_fp8_pool(engine: str, family: Family, model: LlmModel, kv_precision: str) -> bool:
    """Whether the engine's default MLA decode backend would cast a whole FP8 KV pool to bf16 every layer."""
    return model.mla is not None and kv_precision == "fp8" and (engine, family) in FP8_POOL_CAST
