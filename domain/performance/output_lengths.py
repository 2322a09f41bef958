"""Output-length distributions per model kind, and the straggler tail that ends a finite offline job."""

from __future__ import annotations

import math

# Reasoning models' output lengths are heavy-tailed, close to log-normal: "median ≈ 500 p99 ≈ 5000" for a typical
# reasoning run's rollouts (jiahuanglin.xyz/all_lessons/RL/lessons/22b_longtail_rollouts.html), so the log-scale
# spread is ln(5000 / 500) / z(0.99) = ln 10 / 2.326 = 0.99.
REASONING_SIGMA = math.log(5000 / 500) / 2.326
REASONING_SOURCE = "jiahuanglin.xyz/all_lessons/RL/lessons/22b_longtail_rollouts.html (median ≈ 500, p99 ≈ 5000)"
# Models that think before answering by default (their cards and configs); others are read at their mean length.
REASONING_MODELS = frozenset({"deepseek-r1", "deepseek-r1-distill-qwen-32b", "gpt-oss-120b", "gpt-oss-20b"})


def length_sigma(model_id: str) -> float | None:
    """Log-scale spread of a model's output lengths; None where the request's mean is taken as every length."""
    return REASONING_SIGMA if model_id in REASONING_MODELS else None


def median_length(mean: float, sigma: float) -> float:
    """The median of a log-normal length of this mean: mean x e^(-sigma^2 / 2)."""
    return mean * math.exp(-sigma * sigma / 2)


def longest_of(count: int, mean: float, sigma: float, cap: float) -> float:
    """Typical longest of `count` log-normal lengths (extreme-value approximation), at most the length cap."""
    if count <= 1 or sigma <= 0:
        return min(mean, cap)
    return min(cap, mean * math.exp(sigma * math.sqrt(2 * math.log(count)) - sigma * sigma / 2))


def drained_share(requests: int, slots: int, mean: float, sigma: float | None, cap: float) -> float:
    """Share of a mean-length model's throughput an offline job of `requests` on `slots` sequences keeps."""
    # Continuous batching keeps the slots full while requests wait; the last `slots` admitted then drain, and the job
    # ends with its longest: mean-length arithmetic counts them at the mean. Steps at a small batch cost about what
    # full ones do (decode is bound by the weights' reads there), so the drain's steps are counted whole.
    if sigma is None or requests <= 0 or slots <= 0:
        return 1.0
    full = requests * mean / slots
    tail = longest_of(min(slots, requests), mean, sigma, cap) - mean
    return full / (full + max(tail, 0.0))
