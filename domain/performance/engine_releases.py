"""Engine releases that changed serving efficiency: what a measurement on an older release ran without.

The planner estimates today's engines; a calibration point measured on an older release is reproduced with what
that release lacked, so an old figure neither drags the current model down nor counts as its error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date

from domain.catalog import LlmModel
from domain.hardware.efficiency import Family
from domain.performance.memory import BYTES_PER_PARAM
from domain.performance.mla import absorbed_decode_params
from domain.performance.release_history import RELEASES, Applies, Release

# MoEs with at least this many routed experts took the moe_wna16 path (#13236 tested 60, 64 and 256 experts).
MANY_EXPERTS = 60


def _lacks(applies: Applies, engine: str, version: str, measured: date) -> bool:
    """Whether a run of `engine` at `version` lacked a change of this kind."""
    return any(r.applies == applies and r.lacks(engine, version, measured) for r in RELEASES)


def _slowdown(applies: Applies, engine: str, version: str, measured: date) -> float:
    slowdown = 1.0
    for release in RELEASES:
        if release.applies == applies and release.lacks(engine, version, measured):
            slowdown *= release.factor
    return slowdown


def kv_read_slowdown(model: LlmModel, engine: str, version: str, measured: date) -> float:
    """How many times more KV cache than today's release a decode step of `engine` at `version` reads: the group
    size of a grouped-query model on a release that read each KV head once per query head."""
    group = model.attention_heads / (model.kv_heads or model.attention_heads)
    if model.attention != "gqa" or group <= 1:
        return 1.0
    return group if _lacks("gqa_decode_attention", engine, version, measured) else 1.0


def diffusion_slowdown(engine: str, version: str, measured: date) -> float:
    """How many times longer than today's release a run of `engine` at `version` takes per image."""
    return _slowdown("diffusion_attention", engine, version, measured)


def _lacking(applies: Applies, engine: str, version: str, measured: date, family: Family | None) -> list[Release]:
    """The releases of kind `applies` a run lacked; `family` None: a kind no release limits to families."""
    return [
        r
        for r in RELEASES
        if r.applies == applies and r.lacks(engine, version, measured) and (not r.families or family in r.families)
    ]


def _host_seconds(applies: Applies, engine: str, version: str, measured: date, family: Family | None = None) -> float:
    return 1e-6 * sum(r.host_us for r in _lacking(applies, engine, version, measured, family))


def diffusion_step_host_seconds(engine: str, version: str, measured: date) -> float:
    """Host time a release without a CUDA-graphed denoising step adds to each step of `engine` at `version`."""
    return _host_seconds("eager_diffusion_step", engine, version, measured)


def decode_slowdown(model: LlmModel, precision: str, engine: str, version: str, measured: date, batch: int) -> float:
    """How many times longer than today's release a decode step of `batch` sequences took on `engine` at `version`."""
    if precision != "int4" or model.moe is None or model.moe.routed_experts < MANY_EXPERTS:
        return 1.0
    slowdown = 1.0
    for release in RELEASES:
        if release.applies == "w4_moe_decode" and release.lacks(engine, version, measured):
            slowdown *= release.factor_at(batch)
    return slowdown


def fine_tuning_slowdown(model: LlmModel, method: str, tensor: int, engine: str, version: str, measured: date) -> float:
    """How many times longer than today's release a fine-tuning step on `engine` at `version` took."""
    if method not in ("lora", "qlora") or model.moe is not None or tensor <= 1:
        return 1.0
    return _slowdown("tp_dense_lora_step", engine, version, measured)


def absorbed_decode(model: LlmModel, precision: str, engine: str, version: str, measured: date) -> tuple[float, float]:
    """(weight bytes, parameters) of all layers a decode step of `engine` at `version` read beyond today's release."""
    if not _lacks("absorbed_mla_decode", engine, version, measured):
        return 0.0, 0.0
    absorbed, rope, replaced = absorbed_decode_params(model)
    # FP8 checkpoints requantised the products to FP8; every other precision held them in the activations' 16 bits.
    absorbed_bytes = 1.0 if precision == "fp8" else 2.0
    extra = absorbed * absorbed_bytes + rope * 2.0 - replaced * BYTES_PER_PARAM[precision]
    return model.layers * extra, model.layers * (absorbed + rope - replaced)


def decode_host_seconds(model: LlmModel, engine: str, version: str, measured: date, family: Family) -> float:
    """Time a release without today's CUDA graphs or AMD kernels adds to each decode step of `engine` at `version`."""
    if model.attention != "mla":
        return 0.0
    per_layer = _host_seconds("eager_mla_decode", engine, version, measured)
    per_layer += _host_seconds("rocm_pre_aiter_mla", engine, version, measured, family)
    return model.layers * per_layer


def prefill_slowdown(model: LlmModel, engine: str, version: str, measured: date, family: Family) -> float:
    """How many times longer than today's release a prefill took on `engine` at `version` on `family`."""
    if model.attention != "mla":
        return 1.0
    return math.prod(r.prefill for r in _lacking("rocm_pre_aiter_mla", engine, version, measured, family))


@dataclass(frozen=True)
class DecodeEffects:
    """What an old release changes in a decode step and a prefill; the defaults are today's engines."""

    kv_read: float = 1.0  # the KV cache is read as if this many times larger
    step: float = 1.0  # the whole step takes this many times longer
    host_s: float = 0.0  # host time added to each step
    extra_bytes: float = 0.0  # weight bytes of all layers read beyond the checkpoint's
    extra_params: float = 0.0  # and the parameters they hold
    prefill: float = 1.0  # the prefill takes this many times longer


TODAY = DecodeEffects()


def decode_effects(
    model: LlmModel, precision: str, engine: str, version: str, measured: date, batch: int, family: Family
) -> DecodeEffects:
    """Everything `engine` at `version` on `family` lacked in serving `batch` sequences, against today's release."""
    extra_bytes, extra_params = absorbed_decode(model, precision, engine, version, measured)
    return DecodeEffects(
        kv_read=kv_read_slowdown(model, engine, version, measured),
        step=decode_slowdown(model, precision, engine, version, measured, batch),
        host_s=decode_host_seconds(model, engine, version, measured, family),
        extra_bytes=extra_bytes,
        extra_params=extra_params,
        prefill=prefill_slowdown(model, engine, version, measured, family),
    )
