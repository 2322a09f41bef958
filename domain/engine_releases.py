"""Engine releases that changed serving efficiency: what a measurement on an older release ran without.

The planner estimates today's engines; a calibration point measured on an older release is reproduced with what
that release lacked, so an old figure neither drags the current model down nor counts as its error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from domain.catalog import LlmModel

# What a change sped up: the decode step's KV-cache reads of grouped/multi-query attention.
Applies = Literal["gqa_decode_attention"]


@dataclass(frozen=True)
class Release:
    """A change that arrived in `engine` at version `since`: releases before it run `factor` x slower there."""

    engine: str
    since: tuple[int, ...]
    change: str
    applies: Applies
    factor: float
    source: str
    quote: str

    def lacks(self, engine: str, version: str) -> bool:
        """Whether a run of `engine` at `version` predates this change (an unrecorded version does not)."""
        return engine == self.engine and bool(version) and parse_version(version) < self.since


RELEASES: tuple[Release, ...] = (
    Release(
        engine="trtllm",
        since=(0, 8),
        change="XQA kernel: generation-phase MQA/GQA attention on tensor cores, each KV head read once per group",
        applies="gqa_decode_attention",
        # The end-to-end gain at 128/2048 on one GPU; the kernel alone gains at least this much, so applying it
        # to the attention's KV reads only is the conservative reading.
        factor=2.4,
        source="https://nvidia.github.io/TensorRT-LLM/blogs/XQA-kernel.html",
        quote="Llama-70B | 1 | 128 | 2048 | 1,227 | 2,941 | 2.4x ... will be included in the v0.8 releases.",
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


def kv_read_slowdown(model: LlmModel, engine: str, version: str) -> float:
    """How many times slower than today's release a run of `engine` at `version` reads the KV cache in decode."""
    slowdown = 1.0
    grouped = model.attention == "gqa" and (model.kv_heads or model.attention_heads) < model.attention_heads
    for release in RELEASES:
        if release.applies == "gqa_decode_attention" and grouped and release.lacks(engine, version):
            slowdown *= release.factor
    return slowdown
