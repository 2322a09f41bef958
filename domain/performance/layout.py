"""A model copy's layout over its GPUs, and one point it serves at."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from domain.hardware.nodes import GPUS_PER_NODE

Bound = Literal["memory", "compute", "interconnect"]


@dataclass(frozen=True, slots=True)
class Layout:
    """How one model copy spreads over its GPUs."""

    # tensor x pipeline GPUs; with `expert` > 1 the routed experts are split over the copy's GPUs (expert parallel), and
    # with `dp_attention` each GPU runs attention for its own requests (MLA's latent cache is then sharded by request
    # instead of replicated).

    tensor: int
    pipeline: int = 1
    expert: int = 1
    dp_attention: bool = False
    gpus: int = field(init=False)  # GPUs of one copy; read in every step of a search, so stored

    def __post_init__(self) -> None:
        group = self.expert if self.dp_attention else self.tensor
        object.__setattr__(self, "gpus", group * self.pipeline)

    @property
    def attention_tensor(self) -> int:
        """GPUs one request's attention (and its KV heads) is split over."""
        return 1 if self.dp_attention else self.tensor

    @property
    def nodes(self) -> int:
        return max(1, -(-self.gpus // GPUS_PER_NODE))


@dataclass(frozen=True, slots=True)
class ServingPoint:
    """One model copy serving `batch` sequences at a time, in one scenario."""

    # step_s is one pure decode step; tpot_s is the mean time between a request's output tokens as users observe it
    # under continuous batching with chunked prefill (steps that also carry other requests' prefills included); ttft_s
    # is the time to the first token: the prefill sharing the GPUs with decoding, one step, and the wait behind other
    # prefills at the given arrival rate.

    batch: int
    step_s: float
    tpot_s: float
    ttft_s: float
    tokens_per_s: float
    requests_per_s: float
    bound: Bound
