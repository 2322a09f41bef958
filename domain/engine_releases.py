"""Engine releases that changed serving efficiency: what a measurement on an older release ran without.

The planner estimates today's engines; a calibration point measured on an older release is reproduced with what
that release lacked, so an old figure neither drags the current model down nor counts as its error.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

from domain.catalog import LlmModel

# What a change sped up: the decode step's KV-cache reads of grouped/multi-query attention; a diffusion pipeline's
# whole denoising loop (its attention layers).
Applies = Literal["gqa_decode_attention", "diffusion_attention"]


@dataclass(frozen=True)
class Release:
    """A change that arrived in `engine` at version `since`: releases before it run `factor` x slower there."""

    # Where a run names no version, the day `since_date` stands in for `since`.

    engine: str
    since: tuple[int, ...]
    change: str
    applies: Applies
    factor: float
    source: str
    quote: str
    since_date: date | None = None

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


def _slowdown(applies: Applies, engine: str, version: str, measured: date) -> float:
    slowdown = 1.0
    for release in RELEASES:
        if release.applies == applies and release.lacks(engine, version, measured):
            slowdown *= release.factor
    return slowdown


def kv_read_slowdown(model: LlmModel, engine: str, version: str, measured: date) -> float:
    """How many times slower than today's release a run of `engine` at `version` reads the KV cache in decode."""
    grouped = model.attention == "gqa" and (model.kv_heads or model.attention_heads) < model.attention_heads
    return _slowdown("gqa_decode_attention", engine, version, measured) if grouped else 1.0


def diffusion_slowdown(engine: str, version: str, measured: date) -> float:
    """How many times longer than today's release a run of `engine` at `version` takes per image."""
    return _slowdown("diffusion_attention", engine, version, measured)
