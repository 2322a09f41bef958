"""Serving engines: the batch cap, KV-cache dtype and efficiency each one brings, with sources."""

from __future__ import annotations

from dataclasses import dataclass

from domain.catalog import Gpu, Vendor
from domain.performance.memory import GIB, usable_memory_bytes
from domain.workloads.requests import EngineName


@dataclass(frozen=True)
class Engine:
    """What an engine changes in an estimate."""

    name: str
    large_gpu_batch: int  # default cap on sequences in flight per copy on GPUs of 70 GiB and more
    small_gpu_batch: int
    fp8_kv_by_default: bool  # whether it stores the KV cache in FP8 when the weights are FP8
    decode_speedup: float  # decode-step efficiency relative to vLLM's
    vendors: frozenset[Vendor]
    source: str
    # Whether its custom all-reduce switches to two stages (reduce-scatter + all-gather) for larger messages on fully
    # NVLinked groups of more than two GPUs (domain/hardware/collectives.py TWO_STAGE_ALL_REDUCE_FROM_BYTES).
    two_stage_all_reduce: bool = False

    def batch_cap(self, gpu: Gpu) -> int:
        """The engine's default cap on sequences in flight per model copy on this GPU."""
        return self.large_gpu_batch if usable_memory_bytes(gpu) >= 70 * GIB else self.small_gpu_batch


ENGINES: dict[EngineName, Engine] = {
    "vllm": Engine(
        name="vLLM",
        large_gpu_batch=1024,
        small_gpu_batch=256,
        fp8_kv_by_default=False,
        decode_speedup=1.0,
        vendors=frozenset({"nvidia", "amd", "intel", "huawei"}),
        source="vLLM engine arguments: max_num_seqs defaults by device memory; kv_cache_dtype 'auto' (docs.vllm.ai)",
        two_stage_all_reduce=True,
    ),
    "sglang": Engine(
        name="SGLang",
        large_gpu_batch=1024,
        small_gpu_batch=256,
        fp8_kv_by_default=False,
        decode_speedup=1.0,
        vendors=frozenset({"nvidia", "amd", "intel"}),
        source="SGLang server arguments: max_running_requests, kv_cache_dtype 'auto' (docs.sglang.ai)",
    ),
    "trtllm": Engine(
        name="TensorRT-LLM",
        large_gpu_batch=2048,
        small_gpu_batch=256,
        fp8_kv_by_default=True,
        decode_speedup=1.05,
        vendors=frozenset({"nvidia"}),
        source="TensorRT-LLM trtllm-serve: max_batch_size 2048 by default; FP8 checkpoints with FP8 KV cache "
        "(nvidia.github.io/TensorRT-LLM)",
    ),
}
