"""Assumptions built from the factors an estimate recorded: each states the value the estimate used."""

from __future__ import annotations

from collections.abc import Iterable

from domain.hardware.efficiency import FactorUse
from domain.narrative.explain import say
from domain.workloads.requests import Lang
from domain.workloads.results import Assumption, FactorUsed

_W4_MOE = ("w4_moe_layer_us", "w4_moe_expert_us", "w4_moe_expert_gbps")
_TENSOR_PARALLEL = ("all_reduce_alpha_us", "floor_growth_per_doubling", "mbu_decay_per_doubling")


def stated(use: FactorUse) -> Assumption:
    """A recorded factor as an assumption: its value and band as applied, where it came from."""
    factor, scale = use.factor, use.scale
    used = FactorUsed(
        name=factor.name or use.name,
        family=use.family,
        precision=use.precision,
        expected=factor.expected * scale,
        low=factor.low * scale,
        high=factor.high * scale,
    )
    return Assumption(name=use.name, value=use.describe(), source=factor.source, factor=used)


def factor_assumptions(uses: Iterable[FactorUse], lang: Lang, gpus: int, link: str) -> list[Assumption]:
    """One assumption per recorded factor; the 4-bit MoE latencies and the tensor-parallel costs as one each.

    `gpus` and `link` name the all-reduce group (its size and link kind as the text shows it)."""
    uses = list(uses)
    named = {use.name: use for use in uses}
    items = [
        stated(use)
        for use in uses
        if use.name not in _W4_MOE and not (use.name in _TENSOR_PARALLEL and "all_reduce_alpha_us" in named)
    ]
    if all(name in named for name in _W4_MOE):
        layer, expert, gbps = (named[name] for name in _W4_MOE)
        items.append(
            Assumption(
                name="w4_moe_decode_latency",
                value=f"{layer.describe()} us per MoE layer + {expert.describe()} us per expert + "
                f"expert bytes at {gbps.describe()} GB/s",
                source=layer.factor.source,
            )
        )
    alpha = named.get("all_reduce_alpha_us")
    if alpha is not None:
        growth, decay = named["floor_growth_per_doubling"], named["mbu_decay_per_doubling"]
        items.append(
            Assumption(
                name="tensor_parallel",
                value=say(
                    "a_tensor_parallel",
                    lang,
                    gpus=gpus,
                    link=link,
                    alpha=alpha.describe(),
                    growth=growth.value("expected"),
                    decay=decay.value("expected"),
                ),
                source=alpha.factor.source,
            )
        )
    return items
