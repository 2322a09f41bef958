"""Engine releases: a measurement on an older release is reproduced with what that release lacked."""

from __future__ import annotations

from datetime import date

import msgspec
import pytest

from api.adapters.storage.reference import calibration_points
from domain.calibration.harness import reproduce
from domain.catalog import Catalog
from domain.performance.engine_releases import (
    decode_effects,
    diffusion_slowdown,
    fine_tuning_slowdown,
    kv_read_slowdown,
)
from domain.performance.release_history import RELEASES, parse_version
from tests.conftest import llm

WHEN = date(2023, 12, 1)
# Releases whose effect is what a step reads (weights, KV heads per query head), not a factor or host time.
WEIGHTS_OR_READS = ("absorbed_mla_decode", "gqa_decode_attention")


def point(point_id: str):  # type: ignore[no-untyped-def]
    return next(p for p in calibration_points() if p.id == point_id)


def test_versions_parse_with_suffixes() -> None:
    assert parse_version("0.6.1") == (0, 6, 1)
    assert parse_version("v0.8.0rc1") == (0, 8, 0)
    assert parse_version("0.9.0.1") == (0, 9, 0, 1)
    assert parse_version("0.8a") == (0, 8)


def test_every_release_carries_its_source_and_figure() -> None:
    for release in RELEASES:
        assert release.source.startswith("https://"), release
        # A release slows a step by a factor, adds host time to it or adds the weights it reads.
        effect = release.factor > 1 or release.host_us > 0 or release.applies in WEIGHTS_OR_READS
        assert effect and release.quote, release


def test_tensorrt_llm_before_xqa_reads_each_kv_head_once_per_query_head(reference: Catalog) -> None:
    # The group size, from the model and the kernel, not a factor chosen from a measurement: Llama-2-70B groups 64
    # query heads on 8 KV heads; a multi-head model has nothing to gain; v0.8 and later read each KV head once.
    gqa = llm(reference, "llama-2-70b")
    assert gqa.attention_heads / (gqa.kv_heads or gqa.attention_heads) == 8
    assert kv_read_slowdown(gqa, "trtllm", "0.6.1", WHEN) == 8
    assert kv_read_slowdown(gqa, "trtllm", "0.8.0", WHEN) == 1.0
    assert kv_read_slowdown(gqa, "vllm", "0.6.1", WHEN) == 1.0
    assert kv_read_slowdown(llm(reference, "llama-2-7b"), "trtllm", "0.6.1", WHEN) == 1.0
    old = point("trtllm-0.6.1-llama2-70b-h100-fp8-tp2-bs64-2048-2048")
    today = msgspec.structs.replace(old, engine_version="")
    assert reproduce(reference, old).expected < reproduce(reference, today).expected


def test_diffusers_before_pytorch_2_runs_vanilla_attention(reference: Catalog) -> None:
    old = point("hf-blog-2022-12-sd-a100-80gb-fp16-bs1")
    assert diffusion_slowdown(old.engine, old.engine_version, old.date) == 2.69 / 1.98
    assert diffusion_slowdown("diffusers", "0.13.0", old.date) == 1.0
    assert diffusion_slowdown("diffusers", "", date(2023, 6, 1)) == 1.0
    today = msgspec.structs.replace(old, date=date(2024, 1, 1))
    assert reproduce(reference, old).expected == reproduce(reference, today).expected * 2.69 / 1.98


def test_a_version_that_is_not_a_number_is_dated_instead() -> None:
    diffusers = next(release for release in RELEASES if release.engine == "diffusers")
    assert not diffusers.lacks("diffusers", "main", date(2024, 1, 1))
    assert diffusers.lacks("diffusers", "main", date(2022, 12, 1))


def test_nemo_automodel_before_0_5_ran_tensor_parallel_lora_slower(reference: Catalog) -> None:
    dense, moe = llm(reference, "llama-3.1-70b"), llm(reference, "deepseek-v3")
    october, february = date(2025, 10, 2), date(2026, 2, 15)
    assert fine_tuning_slowdown(dense, "lora", 2, "nemo-automodel", "", october) == pytest.approx(1091.85 / 608.42)
    assert fine_tuning_slowdown(dense, "lora", 2, "nemo-automodel", "", february) == pytest.approx(1091.85 / 658.62)
    assert fine_tuning_slowdown(dense, "lora", 2, "nemo-automodel", "0.4.0", date(2026, 6, 1)) > 1.0
    assert fine_tuning_slowdown(dense, "lora", 2, "nemo-automodel", "0.5.0", october) == 1.0
    # Only what the measurements covered: dense-model adapters under tensor parallelism in this engine.
    assert fine_tuning_slowdown(dense, "lora", 1, "nemo-automodel", "", october) == 1.0
    assert fine_tuning_slowdown(dense, "full", 2, "nemo-automodel", "", october) == 1.0
    assert fine_tuning_slowdown(moe, "lora", 2, "nemo-automodel", "", october) == 1.0
    assert fine_tuning_slowdown(dense, "lora", 2, "nemo", "", october) == 1.0


def test_an_old_nemo_automodel_lora_run_reproduces_slower_than_todays(reference: Catalog) -> None:
    old = point("nemo-automodel-lora-llama33-70b-h100-8gpu-bf16-seq4096")
    today = msgspec.structs.replace(old, date=date(2026, 5, 1))
    assert reproduce(reference, old).expected == pytest.approx(reproduce(reference, today).expected * 608.42 / 1091.85)
    assert abs(reproduce(reference, old).error) < 0.3


def test_deepseek_on_amd_before_aiter_decoded_and_prefilled_slower(reference: Catalog) -> None:
    deepseek, llama = llm(reference, "deepseek-r1"), llm(reference, "llama-3.1-70b")
    early = decode_effects(deepseek, "fp8", "vllm", "0.7.3.dev138", date(2025, 3, 18), 128, "cdna3")
    # AMD's AITER on/off measurement: 24.82 ms more per decode step of 61 layers; prefill 52% shorter with AITER,
    # so 2.08x longer without.
    assert early.host_s == pytest.approx(24.82e-3, rel=1e-3)
    assert early.prefill == pytest.approx(2.083, rel=1e-3)
    assert decode_effects(deepseek, "fp8", "sglang", "0.4.2.post4", date(2025, 3, 18), 4, "cdna3").host_s > 0
    # Releases with AITER's MLA decode, NVIDIA GPUs and models without MLA are untouched.
    for effects in (
        decode_effects(deepseek, "fp8", "vllm", "0.8.5", date(2025, 5, 1), 128, "cdna3"),
        decode_effects(deepseek, "fp8", "sglang", "0.4.7", date(2025, 6, 1), 128, "cdna3"),
        decode_effects(deepseek, "fp8", "vllm", "0.7.3", date(2025, 3, 18), 128, "hopper"),
        decode_effects(llama, "fp8", "vllm", "0.7.3", date(2025, 3, 18), 128, "cdna3"),
    ):
        assert effects.host_s == 0 and effects.prefill == 1


def test_the_early_mi300x_deepseek_sweep_reproduces_with_the_pre_aiter_stack(reference: Catalog) -> None:
    for point_id in ("dstack-2025-03-r1-mi300x-vllm-3200-800", "dstack-2025-03-r1-mi300x-vllm-3200-800-c4"):
        old = point(point_id)
        today = msgspec.structs.replace(old, engine_version="0.9.0")
        # The pre-AITER stack brings the early sweep closer; today's stack misses it by more than a fifth.
        assert abs(reproduce(reference, old).error) < abs(reproduce(reference, today).error)
        assert abs(reproduce(reference, today).error) > 0.2
