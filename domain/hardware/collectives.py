"""Links and collectives: all-reduce latency by link, the growth of per-layer floors with the group, PCIe and
inter-node bandwidth, expert all-to-alls; each figure with its source."""

from __future__ import annotations

from typing import Literal

from domain.catalog import LinkKind
from domain.hardware.efficiency import KERNELS, Factor, Family

_LINK = "gpu-advisor default: small-message all-reduce latency"
_AR = f"{KERNELS} (all-reduce tables: H100 NVLink 3-5 us at TP2-TP8; L40S PCIe 6/17/27 us at TP2/4/8)"
# Latency (alpha) of one all-reduce between two GPUs, microseconds. Switched fabrics add little per extra GPU; PCIe
# groups share the host bridge, so alpha grows with the peers as (n-1)^ALPHA_EXPONENT.
LINK_ALPHA_US: dict[LinkKind | Literal["pcie_host"], Factor] = {
    "nvswitch": Factor(4, 3, 7, f"{_LINK} on NVLink/NVSwitch; {_AR}", higher_is_faster=False),
    "nvlink": Factor(4, 3, 7, f"{_LINK} on NVLink; {_AR}", higher_is_faster=False),
    "nvlink_bridge": Factor(6, 4, 10, f"{_LINK} over NVLink bridges (pairs)", higher_is_faster=False),
    "infinity_fabric": Factor(
        8, 5, 14, f"{_LINK}: RCCL over Infinity Fabric (custom all-reduce)", higher_is_faster=False
    ),
    "ethernet": Factor(12, 8, 20, f"{_LINK}: Gaudi on-die RoCE", higher_is_faster=False),
    "hccs": Factor(12, 8, 20, f"{_LINK}: Ascend HCCS", higher_is_faster=False),
    "pcie": Factor(6, 4, 10, f"{_LINK} over PCIe with peer-to-peer; {_AR}", higher_is_faster=False),
    "pcie_host": Factor(15, 10, 25, f"{_LINK} over PCIe through host memory (no P2P)", higher_is_faster=False),
}
ALPHA_EXPONENT: dict[LinkKind | Literal["pcie_host"], float] = {
    "nvswitch": 0.1,
    "nvlink": 0.1,
    "nvlink_bridge": 0.75,
    "infinity_fabric": 0.2,
    "ethernet": 0.2,
    "hccs": 0.2,
    "pcie": 0.75,
    "pcie_host": 0.75,
}
# vLLM's custom all-reduce on fully NVLinked groups of 3-8 GPUs runs one stage (every peer's message read) below these
# sizes and two (reduce-scatter + all-gather, 2(n-1)/n of the message) from them; pairs always take one stage, and
# messages of 8 MiB and more go to NCCL (github.com/vllm-project/vllm/blob/c9eabec7d862b69d943f516580c883c20bea5a0e/
# csrc/custom_all_reduce.cuh: "if (world_size_ == 2) { KL(ngpus, cross_device_reduce_1stage); } else if (full_nvlink_)
# { if ((world_size_ <= 4 && bytes < 512 * 1024) || (world_size_ <= 8 && bytes < 256 * 1024)) {
# KL(ngpus, cross_device_reduce_1stage); } else { KL(ngpus, cross_device_reduce_2stage); }"; vllm/distributed/
# device_communicators/custom_all_reduce.py at 0ad80649: "max_size=8192 * 1024", "return inp_size < self.max_size").
# The measured tables agree: 1 MiB at TP8 takes vLLM 0.24.0 14.1 / 15.0 us on H200 / H100 and TensorRT-LLM 1.3.0rc20,
# still one-shot there, 25.7 / 26.0 us (aiconfigurator-core 0.12.0 custom_allreduce_perf).
TWO_STAGE_ALL_REDUCE_FROM_BYTES = {4: 512 * 1024, 8: 256 * 1024}
CUSTOM_ALL_REDUCE_MAX_BYTES = 8192 * 1024
# Large (ring) all-reduces move 2(n-1)/n of the message at a share of the link's one-way bandwidth, by group size.
# aiconfigurator-core 0.12.0 custom_allreduce_perf tables (github.com/ai-dynamo/aiconfigurator, systems/data/<system>/
# comm/<engine>/<release>/custom_allreduce_perf.parquet), 16,777,216 bf16 elements (32 MiB, a 2,048-token prefill of
# an 8,192-wide model), the median of each engine's newest release, us at TP2 / TP4 / TP8:
# - H200 (450 GB/s): TensorRT-LLM 1.3.0rc20 139.5 / 172.8 / 194.4, vLLM 0.24.0 144.8 / 179.6 / 165.9, SGLang 0.5.14
#   136.0 / 172.6 / 196.8: 139.5 / 172.8 / 194.4. (The H100 tables are test-set sources.)
# - A100 SXM (300 GB/s): TensorRT-LLM 1.0.0 225.9 / 291.4 / 374.5, SGLang 0.5.10 222.9 / 288.6 / 370.7: 224.4 / 290.0 /
#   372.6. (Its vLLM tables are a test-set source.)
# - B200 (900 GB/s): TensorRT-LLM 1.3.0rc20 86.6 / 123.1 / 146.5, vLLM 0.24.0 87.2 / 119.0 / 111.3, SGLang 0.5.14
#   86.6 / 121.8 / 169.7: 86.6 / 121.8 / 146.5.
# - MI300X (8 x 7 Infinity Fabric links of 64 GB/s: 448 GB/s at TP8): RCCL 2.22.3 all_reduce_perf on 8 GPUs, 33,554,432
#   bytes, 243.4 us with graphs, out of place (256.0 us in place; rocm.blogs.amd.com/software-tools-optimization/
#   mi300x-rccl-xgmi, March 2025). A group of 2 or 4 reaches only its peers' links (links.py); it takes TP8's share.
# A share is what the message's bytes take once the ring's own hops and latency (RING_HOP_US, LINK_ALPHA_US) are
# subtracted, so the ring reproduces the median; its band runs from the slowest engine's time to the fastest's.
# Families without tables move at the link's rate.
_RING = f"{KERNELS}: custom_allreduce_perf, 32 MiB, share of the link net of the ring's hops"
RING_LINK_SHARE: dict[Family, dict[int, Factor]] = {
    "hopper": {
        2: Factor(0.56, 0.54, 0.58, f"{_RING}: H200 TP2"),
        4: Factor(0.70, 0.67, 0.70, f"{_RING}: H200 TP4"),
        8: Factor(0.77, 0.76, 0.93, f"{_RING}: H200 TP8"),
    },
    "ampere": {
        2: Factor(0.51, 0.51, 0.52, f"{_RING}: A100 SXM TP2"),
        4: Factor(0.61, 0.60, 0.61, f"{_RING}: A100 SXM TP4"),
        8: Factor(0.56, 0.56, 0.57, f"{_RING}: A100 SXM TP8"),
    },
    "cdna3": {
        8: Factor(
            0.62,
            0.59,
            0.62,
            "rocm.blogs.amd.com/software-tools-optimization/mi300x-rccl-xgmi: RCCL all_reduce_perf, 8 x MI300X",
        ),
    },
    "blackwell": {
        2: Factor(0.47, 0.46, 0.47, f"{_RING}: B200 TP2"),
        4: Factor(0.52, 0.51, 0.53, f"{_RING}: B200 TP4"),
        8: Factor(0.54, 0.45, 0.76, f"{_RING}: B200 TP8"),
    },
}


def ring_link_share(family: Family, tensor: int) -> Factor | None:
    """The share of the link a large all-reduce reaches (the measured group size nearest below `tensor`); None: all."""
    shares = RING_LINK_SHARE.get(family)
    if not shares:
        return None
    sizes = [size for size in sorted(shares) if size <= tensor] or [min(shares)]
    return shares[sizes[-1]]


# A ring all-reduce pays one hop per step; large messages (prefill) take the ring, small ones the one-shot path.
RING_HOP_US = 1.5
# Per doubling of the tensor-parallel group: the per-layer floor grows and GEMM shards shrink below what saturates
# HBM. Fitted to measured-kernel decode steps at TP1-TP8 (70B FP8 on H200 13.3 ms at batch 64 and TP8). The decay
# follows the group a weight is split over, not the copy's GPUs: expert parallelism reads whole experts.
FLOOR_GROWTH_PER_DOUBLING = Factor(0.25, 0.15, 0.35, f"{KERNELS}: decode step TP1->TP8", higher_is_faster=False)
MBU_DECAY_PER_DOUBLING = Factor(0.94, 0.90, 0.97, f"{KERNELS}: GEMV bandwidth of TP shards")
# Infinity Fabric platforms join eight GPUs in a fully connected mesh: seven links per GPU, one to each peer (AMD
# MI300X: 7 x 128 GB/s bidirectional; ~50 GB/s measured per link one way,
# www.scalarlm.com/blog/scalarlm-benchmarking-mi300x-memcpy-peer).
MESH_LINKS = 7
# PCIe 4.0 x16 moves ~20 GB/s each way between peers in all-reduce tables; through host memory about half.
PCIE_GBPS = 20.0
PCIE_HOST_GBPS = 10.0
# Beyond a pair, PCIe peers reach each other through the CPU's root complex at this share of the pair's rate. The
# L40S all-reduce table of aiconfigurator-core 0.12.0 (github.com/ai-dynamo/aiconfigurator; systems/data/l40s/comm/
# vllm/0.22.0/custom_allreduce_perf) moves 33.5 MB (2048 x 8192 bf16) in 1.78 / 13.60 / 30.06 ms at TP2/4/8: each
# GPU takes the message from its n - 1 peers at 18.9 GB/s in a pair, 7.4 and 7.8 GB/s at TP4 and TP8 (0.39, 0.41).
PCIE_BEYOND_PAIR = 0.40
# Inter-node fabric per GPU for data-parallel gradients (400G InfiniBand/RoCE).
INTER_NODE_GBPS = Factor(
    45, 35, 50, "github.com/NVIDIA/nccl-tests: ~45 GB/s per GPU achievable on 400 Gb/s InfiniBand/RoCE"
)
INTER_NODE_HOP_US = Factor(
    20, 10, 50, "gpu-advisor default: one pipeline hop across nodes (InfiniBand RDMA latency)", higher_is_faster=False
)
# Expert-parallel dispatch and combine per MoE layer: two all-to-alls, latency-bound in decode.
ALL_TO_ALL_US = Factor(
    12, 8, 25, "github.com/deepseek-ai/DeepEP: low-latency dispatch+combine per MoE layer", higher_is_faster=False
)
