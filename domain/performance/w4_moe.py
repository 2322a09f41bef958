"""4-bit weight-only routed experts at decode: fixed latencies per MoE layer and per expert, bytes at a set rate."""

from __future__ import annotations

from dataclasses import dataclass

from domain.catalog import LlmModel
from domain.hardware.efficiency import KERNELS, Factor, Family, Scenario

# aiconfigurator-core 0.12.0 moe tables (systems/data/<system>/moe/<engine>/<version>/moe_perf.parquet, moe_dtype
# int4_wo, a DeepSeek-V3-style layer with 384 experts as in Kimi K2: hidden 7168, inter 2048, top-8, balanced routing)
# put a 4-bit weight-only MoE layer at 1-256 tokens under tensor-parallel experts (moe_ep_size 1, moe_tp_size 1-32) at a
# fixed latency per layer, a latency per expert the GPU runs and the expert bytes at a rate the SMs set, not the memory:
# at TP8 vLLM 0.24.0 (Marlin MoE) takes 40.7 us at 1 token, 111 at 8 and 466 at 64 on H200, where 8 experts' 4-bit
# bytes (22 MB per GPU) take 4.6 us at its full bandwidth. Fitted to relative error over each engine's tables (the rows
# at 1-256 tokens; a balanced step of T tokens runs min(experts, 8 T) experts, each reading 3 x 7168 x 2048 /
# moe_tp_size weights at 0.53 bytes, group-128 scales included): vLLM 0.24.0 Hopper on the H200 table alone, median
# 1.4%, worst 14.2% (1 token at TP32), its band the fits over the TP 1-4 and TP 8-32 halves of those rows (an expert's
# bytes fall with moe_tp_size, which is what tells the rate from the per-expert latency); Blackwell (B200, B300, GB200,
# GB300) 3.0%, worst 28.5%; SGLang 0.5.14 (Marlin MoE on Hopper, FlashInfer's TensorRT-LLM MoE on Blackwell) Hopper
# 7.2%, worst 21.5%, Blackwell 2.3%, worst 18.3%. Engines and families without int4_wo tables (TensorRT-LLM; Ampere
# and Ada, whose rows fit no such line) keep the bandwidth times the weight-only share, and so do expert-parallel
# layouts: the tables' moe_ep_size rows run 1.1-2.4x what the same per-GPU experts take at moe_ep_size 1 and fit no
# such line either. vLLM 0.19.0's older Marlin kernel (vllm_marlin_int4_moe) paid 62-75 us at 1 token at TP8 on H200
# and B200, ~1.6x 0.24.0's.
_MOE = KERNELS + " 0.12.0: systems/data/{}/moe/{}/moe_perf.parquet, int4_wo, moe_ep_size 1, 1-256 tokens"


@dataclass(frozen=True)
class W4MoeLatency:
    """What one MoE layer of 4-bit weight-only routed experts costs on one GPU at decode."""

    layer_us: Factor  # fixed, per MoE layer
    expert_us: Factor  # per routed expert the GPU runs a slice of
    gbps: Factor  # the expert bytes' rate
    source: str

    def seconds(self, layers: float, experts: float, expert_bytes: float, scenario: Scenario) -> float:
        """`layers` MoE layers each running `experts` experts, reading `expert_bytes` expert bytes in all."""
        latency = self.layer_us.at(scenario) + experts * self.expert_us.at(scenario)
        return layers * latency * 1e-6 + expert_bytes / (self.gbps.at(scenario) * 1e9)

    def describe(self) -> str:
        return (
            f"{self.layer_us.describe()} us per MoE layer + {self.expert_us.describe()} us per expert + "
            f"expert bytes at {self.gbps.describe()} GB/s"
        )


def _entry(systems: str, engine: str, layer: tuple[float, float, float], expert: tuple[float, float, float],
           gbps: tuple[float, float, float], figures: str) -> W4MoeLatency:  # fmt: skip
    source = f"{_MOE.format(systems, engine)}: {figures}"
    return W4MoeLatency(
        Factor(*layer, source, False), Factor(*expert, source, False), Factor(*gbps, source, True), source
    )


# By (engine, family): the joint fit's value, the band the per-GPU fits span (vLLM Hopper: the H200 fit's value, the
# band its fits over the TP 1-4 and TP 8-32 rows span).
W4_MOE: dict[tuple[str, Family], W4MoeLatency] = {
    ("vllm", "hopper"): _entry(
        "h200_sxm",
        "vllm/0.24.0",
        (35.3, 34.8, 37.4),
        (0.296, 0.271, 0.308),
        (3421, 3406, 3507),
        "TP8 H200 40.7 us at 1 token, 111 us at 8, 466 us at 64",
    ),
    ("vllm", "blackwell"): _entry(
        "{b200_sxm,b300_sxm,gb200,gb300}",
        "vllm/0.24.0",
        (35.6, 33.6, 37.3),
        (0.252, 0.247, 0.259),
        (4270, 4055, 4420),
        "TP8 1 token B200 45.4 us, B300 41.9, GB200 38.0, GB300 39.6",
    ),
    ("sglang", "hopper"): _entry(
        "{h100_sxm,h200_sxm}",
        "sglang/0.5.14",
        (22.8, 22.6, 23.0),
        (0.230, 0.219, 0.234),
        (3134, 2782, 3432),
        "TP8 1 token H100 30.9 us, H200 30.8 us",
    ),
    ("sglang", "blackwell"): _entry(
        "{b200_sxm,b300_sxm,gb200,gb300}",
        "sglang/0.5.14",
        (25.5, 24.8, 26.7),
        (0.096, 0.089, 0.101),
        (4068, 3827, 4188),
        "TP8 1 token B200 39.1 us, B300 35.9, GB200 37.0, GB300 36.2",
    ),
}


def w4_moe_latency(
    engine: str, family: Family, model: LlmModel, precision: str, expert_parallel: int
) -> W4MoeLatency | None:
    """The measured cost of 4-bit weight-only routed experts on an engine; None where no table measures it."""
    # The tables measure int4 (AWQ/GPTQ) experts; MXFP4 experts on parts without FP4 tensor cores run other kernels.
    moe = model.moe
    if precision != "int4" or moe is None or moe.routed_experts <= moe.experts_per_token or expert_parallel > 1:
        return None
    return W4_MOE.get((engine, family))
