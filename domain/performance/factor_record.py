"""The factors a serving speed model read, in the order an estimate states them: what is stated is what was used."""

from __future__ import annotations

from domain.hardware.collectives import (
    ALL_TO_ALL_US,
    FLOOR_GROWTH_PER_DOUBLING,
    INTER_NODE_GBPS,
    INTER_NODE_HOP_US,
    MBU_DECAY_PER_DOUBLING,
)
from domain.hardware.efficiency import ALL_FAMILIES, Factor, FactorUse
from domain.performance import mla
from domain.performance.serving import InstanceSpeed

# What an estimate states a factor of the speed model as, by the role it plays there.
DECODE_SHARE_NAMES = {"fp8_decode": "fp8_decode_share_of_byte_saving", "w4_decode": "weight_only_decode"}
GEMM_PRECISION_NAMES = {
    "fp8_prefill": "fp8_gemm_rate",
    "fp4_compute": "fp4_compute",
    "w4_compute": "weight_only_compute",
}


def serving_factors(speed: InstanceSpeed) -> tuple[FactorUse, ...]:
    """Every factor `speed` applies to its steps and prefills, with the share it scaled it by."""
    uses: list[FactorUse] = []

    def use(name: str, factor: Factor, scale: float = 1.0) -> None:
        uses.append(FactorUse(name, factor.family or ALL_FAMILIES, speed.precision, factor, scale))

    use("decode_mbu", speed.mbu)
    # The GEMMs' 16-bit rate: the size curve's large-GEMM rate times this layer's share where the family has one,
    # the family's prefill MFU otherwise; attention kernels run at the prefill MFU either way.
    use("prefill_mfu", speed.gemm_mfu, speed.gemm_size_share)
    if speed.gemm_mfu is not speed.mfu:
        use("attention_mfu", speed.mfu)
    use("step_floor_us_per_layer", speed.floor_us)
    if speed.decode_share is not None:
        use(DECODE_SHARE_NAMES[speed.decode_share.name], speed.decode_share)
    if speed.gemm_precision is not None:
        use(GEMM_PRECISION_NAMES[speed.gemm_precision.name], speed.gemm_precision)
    if speed.model.moe is not None:
        use("moe_gemm_half_rows", speed.half_rows)
    if speed.block_fp8_moe is not None:
        use("block_fp8_moe_share", speed.block_fp8_moe)
    if speed.fp8_gemm_us is not None:
        use("fp8_gemm_latency_us", speed.fp8_gemm_us)
    if speed.mla_decode_us is not None:
        use("mla_decode_extra_us", speed.mla_decode_us)
    if speed.model.mla is not None:
        for name, factor in mla.prefill_factors(speed.family, speed.mla_bits):
            use(name, factor)
    if speed.moe_extra_us is not None:
        use("moe_layer_extra_us", speed.moe_extra_us)
    if speed.w4_moe is not None:
        use("w4_moe_layer_us", speed.w4_moe.layer_us)
        use("w4_moe_expert_us", speed.w4_moe.expert_us)
        use("w4_moe_expert_gbps", speed.w4_moe.gbps)
    if speed.all_reduces:
        # Stated between two GPUs; a group of n pays it x(n-1)^exponent.
        use("all_reduce_alpha_us", speed.link_alpha_us)
        if speed.ring_link_share is not None:
            use("ring_all_reduce_link_share", speed.ring_link_share)
    if speed.doublings:
        use("floor_growth_per_doubling", FLOOR_GROWTH_PER_DOUBLING)
        use("mbu_decay_per_doubling", MBU_DECAY_PER_DOUBLING)
    if speed.all_to_alls:
        use("expert_all_to_all_us", ALL_TO_ALL_US)
    crosses_nodes = speed.layout.pipeline > 1 or (speed.all_reduces and speed.tensor_off_domain)
    if crosses_nodes or (speed.all_to_alls and speed.expert_off_domain):
        use("inter_node_hop_us", INTER_NODE_HOP_US)
        if speed.tensor_off_domain or speed.expert_off_domain:
            use("inter_node_gbps", INTER_NODE_GBPS)
    return tuple(uses)
