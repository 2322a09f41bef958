"""Calibration points: public measurements with the conditions they were taken under, and their reproductions."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import date
from typing import Literal

import msgspec

from domain.hardware.efficiency import Family

Kind = Literal["inference", "training", "fine_tuning", "image_generation"]


class CalibrationPoint(msgspec.Struct, kw_only=True, frozen=True):
    """One public measurement with the conditions it was taken under."""

    id: str
    kind: Kind
    gpu: str
    gpu_count: int = 1
    model: str
    precision: str
    engine: str = "unknown"
    engine_version: str = ""  # the engine release the source ran ("" when it does not say)
    tensor: int = 1
    pipeline: int = 1
    expert: int = 1
    context: int = 1  # context-parallel ranks sharing one sequence (training)
    kv_cache_precision: str = "bf16"
    input_tokens: int = 0
    output_tokens: int = 0
    concurrency: int = 1
    max_batch: int = 0  # sequences in flight per copy the source set (max_num_seqs); 0: the engine's default
    # Sequences per copy the server's KV cache held at once where the source's own data shows it (a build whose cache
    # layout the model does not know); 0: the model's capacity.
    kv_cache_sequences: int = 0
    sequence_length: int = 4096
    method: str = "full"
    recompute: bool = False  # activation checkpointing of every layer (the forward pass runs twice)
    # Share of the forward pass recomputed where not every layer is: torchtitan's per-op selective checkpointing saves
    # every compute op's output "except every second mm", so half the forward GEMMs run again in the backward (0.5).
    recompute_share: float = 0.0
    # Sequences per optimizer step where the source gives them (GBS; Llama 3's tokens per batch / sequence length):
    # with the data-parallel ranks they set the micro-batches per step and so the pipeline bubble; 0: the model's rule.
    global_batch: int = 0
    # Mean tokens per sample where short samples are packed into each sequence: attention spans one sample, not the
    # pack (FlashAttention's variable-length kernels, Transformer Engine's THD layout); 0: one sample per sequence.
    # NVIDIA counts packed SQuAD this way: NeMo 24.07's 682 model TFLOP/s at 17,120 tokens/s per GPU for Llama 2 7B SFT
    # is 39.8 GFLOP per token, 6 x its 6.6B matmul parameters and almost no attention.
    sample_tokens: int = 0
    # Whether the run hid part of its tensor-parallel exchange behind the GEMMs (Transformer Engine's userbuffers, as
    # the launch commands turn on); false where the source's recipe leaves it off.
    tp_comm_overlap: bool = True
    # The layers a LoRA run adapted and whether a dropout preceded its adapters (domain/performance/lora_adapters.py):
    # by default the TRL command's; NeMo's performance recipes adapt the fused qkv projection alone, with no dropout.
    lora_targets: Literal["qkv", "all_linear"] = "all_linear"
    lora_dropout: bool = True
    # The training code the source ran where its engine does not say it: "megatron" (Megatron-Core / Transformer
    # Engine) or "pytorch" (PyTorch-native FSDP stacks); "": from the engine (domain/performance/training.py).
    stack: Literal["", "megatron", "pytorch"] = ""
    steps: int = 0
    width: int = 1024
    height: int = 1024
    batch: int = 1
    metric: str
    value: float
    date: date
    source: str
    quote: str = ""
    notes: str = ""


_DECODER = msgspec.convert


def parse_calibration(text: str) -> list[CalibrationPoint]:
    """The points of a calibration TOML document."""
    raw = tomllib.loads(text).get("points", [])
    return [_DECODER(point, CalibrationPoint) for point in raw]


@dataclass(frozen=True)
class Reproduction:
    """A point as the model predicts it: expected and the band of the pessimistic/optimistic scenarios."""

    point: CalibrationPoint
    family: Family
    expected: float
    low: float
    high: float

    @property
    def error(self) -> float:
        """Signed relative error of the expected value."""
        return (self.expected - self.point.value) / self.point.value
