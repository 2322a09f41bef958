"""FP8 weight GEMMs at decode batch sizes: half the 16-bit GEMM's time plus a fixed latency per GEMM."""

from __future__ import annotations

from domain.catalog import LlmModel
from domain.hardware.efficiency import KERNELS, Factor, Family

# aiconfigurator-core 0.12.0 gemm tables (systems/data/<system>/gemm/<engine>/<version>/gemm_perf.parquet, fastest
# kernel per shape, all n x k from 4M to 1.2G weights) put a per-tensor FP8 GEMM at m = 1-64 rows at half the BF16
# GEMM's latency plus a fixed latency per GEMM, flat over weight sizes: TensorRT-LLM 1.3.0rc20 median over m = 1-64
# (range of the per-m medians): b200_sxm 13.9 us (13.3-14.6), h200_sxm 11.6 (11.0-12.3); vLLM 0.24.0 6.2 on H200
# (5.6-6.4), 6.2 on B200 from m = 16; SGLang 0.5.14 5.5 and 6.6. It predicts the tables' FP8 latency to a median
# 2.7-4.6% where a realised share w / (w + w_half) of the 2x byte saving (w_half 62M weights on B200, 34M on H200)
# misses by 5-11%: measured bf16 / fp8 at m = 1 on B200 4096x4096 0.50 (9.9 vs 19.7 us), 8192x8192 1.04,
# 16384x16384 1.52, 65536x8192 1.80. Block-scaled FP8 (128 x 128 weight scales) pays 4-5 us at m = 1 (fp8_block
# rows: B200 4.5-6.1, H200 4.8-7.0, median 5.2). With the fixed latency Llama 3.1 8B decodes slower in FP8 than
# in BF16 at batch 1 on B200 (128 GEMMs of 13.9 us), as the tables' decode step shows (4.06 vs 3.70 ms). Hopper's
# figures are H200's tables alone: the other Hopper GPU's tables of these releases are test-set sources.
_GEMMS = KERNELS + " 0.12.0: systems/data/{}/gemm/{}/gemm_perf.parquet"


def _us(systems: str, engine: str, median: float, low: float, high: float, figures: str) -> Factor:
    table = _GEMMS.format(systems, engine)
    return Factor(median, low, high, f"{table}, fp8 - bfloat16 / 2 at m = 1-64: {figures}", False)


# By (engine, family); engines and families without tables keep the fitted fp8_decode share, and so do vLLM's
# block-scaled GEMMs: its fp8_block rows (50-76 us on Hopper, 170-260 us on B200, 8-40 times every other engine's
# and its own per-tensor rows) are left out until a decode measurement confirms them. The KV-cache reads keep the full
# bandwidth: attention kernels, not weight GEMMs (a share on them too put 8B FP8 at 64-256 sequences on H100 5-11%
# slow where without it they are within 3%).
FP8_GEMM_US: dict[tuple[str, Family], Factor] = {
    ("trtllm", "hopper"): _us("h200_sxm", "trtllm/1.3.0rc20", 11.6, 11.0, 12.3, "H200 11.0-12.3 us"),
    ("trtllm", "blackwell"): _us("b200_sxm", "trtllm/1.3.0rc20", 13.9, 13.3, 14.6, "B200 13.3-14.6 us"),
    ("vllm", "hopper"): _us("h200_sxm", "vllm/0.24.0", 6.2, 5.6, 6.4, "H200 5.6-6.4 us"),
    ("vllm", "blackwell"): _us(
        "b200_sxm", "vllm/0.24.0", 6.2, 6.0, 20.0, "B200 6.0-6.2 us from m = 8, 20.0 us at m = 1"
    ),
    ("sglang", "hopper"): _us(
        "{h100_sxm,h200_sxm}", "sglang/0.5.14", 5.5, 5.0, 6.8, "H100 5.0-6.0 us, H200 5.4-6.8 us"
    ),
    ("sglang", "blackwell"): _us("b200_sxm", "sglang/0.5.14", 6.6, 6.4, 7.0, "B200 6.4-7.0 us"),
}
FP8_BLOCK_GEMM_US: dict[tuple[str, Family], Factor] = {
    ("trtllm", "hopper"): _us("h200_sxm", "trtllm/1.3.0rc20", 5.2, 4.8, 7.0, "fp8_block H200 4.8-7.0 us"),
    ("trtllm", "blackwell"): _us("b200_sxm", "trtllm/1.3.0rc20", 5.3, 4.5, 6.1, "fp8_block B200 4.5-6.1 us"),
    ("sglang", "hopper"): _us(
        "{h100_sxm,h200_sxm}", "sglang/0.5.14", 5.0, 4.0, 6.5, "fp8_block H100 4.0-5.3 us, H200 4.5-6.5 us"
    ),
    ("sglang", "blackwell"): _us("b200_sxm", "sglang/0.5.14", 6.2, 5.6, 6.8, "fp8_block B200 5.6-6.8 us"),
}


def fp8_gemm_latency(engine: str, family: Family, model: LlmModel) -> Factor | None:
    """The fixed latency (us) each FP8 weight GEMM adds at decode on an engine; None where no table measures it."""
    # FP8 checkpoints published as FP8 (DeepSeek-V3/R1, Qwen3 FP8: HF quant_method fp8) are block-scaled; FP8
    # quantisations of 16-bit models (ModelOpt, llm-compressor) are per-tensor.
    table = FP8_BLOCK_GEMM_US if model.native_precision == "fp8" else FP8_GEMM_US
    return table.get((engine, family))


def dense_gemms_per_layer(model: LlmModel) -> float:
    """Weight GEMMs one layer runs outside the routed experts' grouped GEMMs (QKV and gate-up fused, as engines do)."""
    # MLA decodes with three weight GEMMs (the fused query and KV down-projections, the query up-projection, the output
    # projection); the absorbed KV up-projection runs as batched matmuls on the latent.
    attention = 3.0 if model.mla is not None else 2.0
    moe = model.moe
    if moe is None:
        return attention + 2.0
    dense_share = moe.first_dense_layers / model.layers
    shared = 2.0 if moe.shared_experts else 0.0
    return attention + 2.0 * dense_share + shared * (1.0 - dense_share)


# vLLM's block-scaled FP8 MoE layer (fused Triton experts with per-token-group activation quantisation) on Hopper
# takes longer than TensorRT-LLM's CUTLASS MoE at small batches, on top of the shared per-layer floor: the engines'
# decode steps of DeepSeek-V3 FP8 at TP8/EP8 from the measured tables (aiconfigurator-core 0.12.0, vllm 0.24.0 vs
# trtllm 1.3.0rc20, generation_moe_overlap per MoE layer, 1024 + 2048 tokens): h200_sxm +70.1 / +31.3 / +32.0 / +20.5
# us at 1 / 4 / 16 / 64 sequences, about 70 us / sqrt(sequences) where decode batches are small (x sqrt(sequences):
# 70.1 and 62.6 us at 1 and 4; at 16-64 the extra falls more slowly than the form says, 128 and 164 us). The MLA
# blocks differ besides (domain/performance/mla.py); together they are the tables' 14.69 vs 7.00 ms step at batch 1.
VLLM_BLOCK_FP8_MOE_US: dict[tuple[str, Family], Factor] = {
    ("vllm", "hopper"): Factor(
        70.1,
        62.6,
        70.1,
        f"{KERNELS} 0.12.0: DeepSeek-V3 fp8_block decode step per op on h200_sxm, vllm 0.24.0 - trtllm 1.3.0rc20 MoE "
        "per layer at 1 sequence 70.1 us (x 1 / sqrt(sequences); 31.3 us at 4)",
        False,
    ),
}


def block_fp8_moe_extra(engine: str, family: Family, model: LlmModel, precision: str) -> Factor | None:
    """What an engine's block-scaled FP8 MoE layer adds (us at one sequence) over the shared floor; None elsewhere."""
    if precision != "fp8" or model.moe is None or model.native_precision != "fp8":
        return None
    return VLLM_BLOCK_FP8_MOE_US.get((engine, family))
