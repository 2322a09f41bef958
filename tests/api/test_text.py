"""What the answers say: Chinese answers in Chinese, one way to write money, providers and "utilization", sources a
reader can follow, and infeasible answers that say what would work.

The walk asks the in-process app (recommendation, estimate, TCO, comparison) for each workload kind in Chinese and
fails on any English word in the sentences, allowing product names (GPUs, providers, models, vendors, software
stacks) and units.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from domain.catalog import Catalog
from domain.hardware import collectives, efficiency
from domain.narrative.explain import assumption_name, money, provider_name, say
from domain.narrative.messages import MESSAGES
from domain.narrative.summaries import estimate_summary
from domain.performance import mla
from domain.workloads.results import Option

Client = AsyncTestClient[Litestar]
WORD = re.compile(r"[A-Za-z][A-Za-z_-]*[A-Za-z]|[A-Za-z]")

# Units, precisions, interconnects, software and hardware terms that Chinese technical writing keeps in Latin letters.
TERMS = {
    "GPU", "GPUs", "CPU", "GB", "TB", "GiB", "TFLOP", "TFLOPS", "FLOP", "FLOPs", "token", "tokens", "ms", "h", "W",
    "kW", "kWh", "MB", "USD", "CNY", "PUE", "BF", "FP", "INT", "KV", "TP", "PP", "DP", "MoE", "LoRA", "QLoRA", "MFU",
    "MBU", "ZeRO", "NVLink", "NVSwitch", "PCIe", "InfiniBand", "RoCE", "RDMA", "CUDA", "ROCm", "CANN", "SynapseAI",
    "Optimum", "Habana", "HBM", "Ada", "Hopper", "Blackwell", "CDNA", "Gaudi", "x", "purchase_usd", "VAE", "OAM",
    "DGX", "HGX", "SXM", "AdamW", "AWS",
    # Identifiers the answers name as the API and the engines write them.
    "TPOT", "TTFT", "EP", "FSDP", "ND", "M", "D", "POST", "tco", "vLLM", "SGLang", "TensorRT", "LLM", "HCCS",
    "Infinity", "Fabric", "chat", "agent", "batch", "adamw", "tpot_ms", "ttft_ms", "max_tpot_ms", "max_ttft_ms",
}  # fmt: skip


def product_words(catalog: Catalog) -> set[str]:
    """Every word of a product's name or id: GPUs, servers, providers, models."""
    names: list[str] = []
    for gpu in catalog.gpus:
        names += [gpu.id, gpu.name, gpu.vendor, gpu.architecture, gpu.memory_type, gpu.form_factor, *gpu.aliases]
    for provider in catalog.providers:
        names += [provider.id, provider.name]
    for system in catalog.systems:
        names += [system.id, system.name]
    for model in catalog.models:
        names += [model.id, model.name]
    return {word for name in names for word in WORD.findall(name)}


# A token with a digit in it (HBM3e, p5en, MI300X) is a product code, never an English word.
TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def english_words(text: str, allowed: set[str]) -> list[str]:
    return [
        word
        for token in TOKEN.findall(text)
        if not any(character.isdigit() for character in token)
        for word in WORD.findall(token)
        if word not in allowed and word not in TERMS
    ]


def sentences(answer: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """The sentences of an answer: summaries, reasons, warnings, notes and the reasons things were left out."""
    if isinstance(answer, dict):
        for key, value in answer.items():
            here = f"{path}.{key}"
            if key in ("summary", "reason", "notes", "layout_reason", "basis") and isinstance(value, str):
                yield here, value
            elif key == "assumptions" and isinstance(value, list):
                # Values are text; sources are citations and keep their own language.
                yield from ((f"{here}[].value", str(item.get("value"))) for item in value if isinstance(item, dict))
            elif key in ("reasons", "warnings") and isinstance(value, list):
                yield from ((f"{here}[]", item) for item in value if isinstance(item, str))
            else:
                yield from sentences(value, here)
    elif isinstance(answer, list):
        for item in answer:
            yield from sentences(item, f"{path}[]")


WORKLOADS = {
    "inference": {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 64, "max_ttft_ms": 200},
    "training": {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e10, "target_days": 1},
    "fine_tuning": {"kind": "fine_tuning", "model": "llama-3.1-70b", "method": "qlora"},
    "image_generation": {"kind": "image_generation", "model": "sdxl", "images_per_hour": 5000},
}
# Walked in Chinese besides the kinds above: each method, a mixture of experts, the batch use case.
VARIANTS = WORKLOADS | {
    "lora": {"kind": "fine_tuning", "model": "llama-3.1-8b", "method": "lora"},
    "full fine-tuning": {"kind": "fine_tuning", "model": "llama-3.1-70b", "method": "full"},
    "moe": {"kind": "inference", "model": "deepseek-r1", "concurrency": 50},
    "batch": {"kind": "inference", "model": "llama-3.1-8b", "use_case": "batch", "precision": "int4"},
}
ASKED: list[tuple[str, str, str, dict[str, Any] | None]] = [
    *((f"recommend {kind}", "POST", "/v1/recommendations", {"workload": w}) for kind, w in VARIANTS.items()),
    ("recommend fp8", "POST", "/v1/recommendations", {"workload": WORKLOADS["inference"] | {"precision": "fp8"}}),
    ("recommend under a budget", "POST", "/v1/recommendations", {
        "workload": WORKLOADS["inference"], "constraints": {"max_usd_per_hour": 2}}),
    *((f"estimate {kind}", "POST", "/v1/estimates", {"workload": w, "gpu": "h100-sxm", "gpu_count": 8})
      for kind, w in VARIANTS.items()),
    ("estimate infeasible", "POST", "/v1/estimates", {
        "workload": {"kind": "inference", "model": "deepseek-r1"}, "gpu": "h100-sxm", "gpu_count": 1}),
    ("tco gpu", "POST", "/v1/tco", {"gpu": "h100-sxm"}),
    ("tco system", "POST", "/v1/tco", {"system": "dgx-h100", "providers": ["lambda"], "years": 2}),
    ("compare", "GET", "/v1/gpus/compare?ids=h100-sxm,h200,mi300x", None),
    ("recommend out of reach", "POST", "/v1/recommendations", {"workload": {
        "kind": "inference", "model": "llama-3.1-405b", "max_tpot_ms": 5, "concurrency": 1000}}),
    ("recommend misses", "POST", "/v1/recommendations", {"workload": {
        "kind": "inference", "model": "llama-3.1-405b", "max_tpot_ms": 5}}),
    ("recommend excluded", "POST", "/v1/recommendations", {
        "workload": WORKLOADS["inference"], "constraints": {"vendors": ["amd"], "exclude_gpus": ["mi300x"]}}),
    ("estimate does not fit", "POST", "/v1/estimates", {
        "workload": {"kind": "training", "model": "llama-3.1-70b"}, "gpu": "l4", "gpu_count": 1}),
    ("estimate custom", "POST", "/v1/estimates", {"workload": {"kind": "inference", "custom_model": {
        "params_b": 7, "layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8}},
        "gpu": "l40s", "gpu_count": 1}),
]  # fmt: skip


async def ask(client: Client, method: str, url: str, body: dict[str, Any] | None, lang: str) -> Any:
    if method == "GET":
        response = await client.get(f"{url}&lang={lang}")
    else:
        assert body is not None
        response = await client.post(url, json=body | {"lang": lang})
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize(("name", "method", "url", "body"), ASKED, ids=[asked[0] for asked in ASKED])
async def test_chinese_answers_have_no_english_sentences(
    client: Client, reference: Catalog, name: str, method: str, url: str, body: dict[str, Any] | None
) -> None:
    answer = await ask(client, method, url, body, "zh")
    allowed = product_words(reference)
    found = {path: words for path, text in sentences(answer) if (words := english_words(text, allowed))}
    assert not found, found


def test_every_message_exists_in_both_languages_and_chinese_is_chinese(reference: Catalog) -> None:
    allowed = product_words(reference)
    for code, texts in MESSAGES.items():
        assert set(texts) == {"en", "zh"}, code
        fields = {field for _, field, _, _ in string.Formatter().parse(texts["zh"]) if field}
        # Names and figures filled in: only the message's own words are left to check.
        filled = say(code, "zh", **dict.fromkeys(fields, 1.0))
        assert not english_words(filled, allowed), (code, filled)


async def test_money_is_written_one_way_in_both_languages(client: Client) -> None:
    for lang in ("en", "zh"):
        assert "$1.50" in say("offer", lang, provider="RunPod", pricing="x", price=1.5, as_of="2026-01-01")
        assert "$2.00" in say("over_budget", lang, hourly=3.0, limit=2.0)
        compare = await ask(client, "GET", "/v1/gpus/compare?ids=h100-sxm,h200", None, lang)
        assert "美元" not in compare["summary"] and "US$" not in compare["summary"]
        assert re.search(r"\$\d+\.\d\d", compare["summary"]), compare["summary"]
    assert money(1234.5, "USD") == "$1,234" and money(1.5, "CNY") == "¥1.50"


async def test_providers_are_named_as_people_write_them(client: Client, reference: Catalog) -> None:
    assert provider_name(reference, "coreweave") == "CoreWeave" and provider_name(None, "coreweave") == "coreweave"
    for lang in ("en", "zh"):
        answer = await ask(client, "POST", "/v1/tco", {"gpu": "h100-sxm", "years": 1}, lang)
        best = answer["rent"][0]["provider"]
        name = provider_name(reference, best)
        assert name != best and name in answer["summary"] and f" {best} " not in answer["summary"]


async def test_recommendation_summaries_name_providers(client: Client, reference: Catalog) -> None:
    answer = await ask(client, "POST", "/v1/recommendations", {"workload": WORKLOADS["inference"]}, "en")
    provider = answer["options"][0]["offer"]["provider"]
    assert provider_name(reference, provider) in answer["summary"]


def test_utilization_is_the_one_spelling() -> None:
    for code, texts in MESSAGES.items():
        assert not any("utilis" in text for text in texts.values()), code
    from domain.narrative import summaries, tco_summary

    for module, name in (
        (tco_summary, "_TCO_SUMMARY"),
        (summaries, "_SUMMARY"),
        (summaries, "_ESTIMATE"),
        (summaries, "_OFFERS"),
    ):
        assert "utilis" not in repr(getattr(module, name)), name


def test_factor_sources_can_be_followed() -> None:
    factors = [
        *(factor for row in efficiency.EFFICIENCY.values() for factor in row.values()),
        *efficiency.SHARED.values(),
        *efficiency.BLOCK_FP8_MOE.values(),
        *(factor for factor, _ in efficiency.GEMM_SIZE.values()),
        *collectives.LINK_ALPHA_US.values(),
        *(factor for pair in mla.MLA_PREFILL.values() for factor in pair),
        *(
            value
            for module in (efficiency, collectives)
            for value in vars(module).values()
            if isinstance(value, efficiency.Factor)
        ),
    ]
    for factor in factors:
        source = factor.source
        # A public repository's README is a source a reader can follow; the project's own documents are not.
        internal = ".md" in source and "github.com/" not in source
        assert not internal and "section" not in source and "seed" not in source, source
        followable = source.startswith("gpu-advisor") or re.search(r"arXiv:\d|github\.com/|benchmark", source)
        assert followable, source


async def test_answers_cite_no_internal_documents_for_factors(client: Client) -> None:
    factor_names = {"decode_mbu", "prefill_mfu", "step_floor_us_per_layer", "train_mfu", "diffusion_mfu"}
    for workload in WORKLOADS.values():
        answer = await ask(client, "POST", "/v1/recommendations", {"workload": workload}, "en")
        for assumption in answer["options"][0]["assumptions"]:
            if assumption["name"] in factor_names:
                assert ".md" not in assumption["source"], assumption


INFEASIBLE = {"workload": {"kind": "inference", "model": "deepseek-r1"}, "gpu": "h100-sxm", "gpu_count": 1}
# At BF16 (2 bytes a parameter) both FP8 and INT4 weights would need fewer GPUs.
INFEASIBLE_BF16 = INFEASIBLE | {"workload": INFEASIBLE["workload"] | {"precision": "bf16"}}


@pytest.mark.parametrize(
    ("lang", "smallest"),
    [("en", "cannot run it: Does not fit on 1 GPU(s)"), ("zh", "能运行它的最小配置：16 张 NVIDIA H100")],
)
async def test_an_infeasible_estimate_names_the_smallest_configuration(
    client: Client, reference: Catalog, lang: str, smallest: str
) -> None:
    option = msgspec.convert(await ask(client, "POST", "/v1/estimates", INFEASIBLE, lang), Option)
    assert not option.feasible
    summary = estimate_summary("inference", option, lang, reference)
    assert smallest in summary, summary
    if lang == "en":
        assert "The smallest configuration that runs it: 16 x NVIDIA H100" in summary, summary


async def test_an_infeasible_estimate_says_a_lower_precision_fits_on_fewer_gpus(client: Client) -> None:
    option = await ask(client, "POST", "/v1/estimates", INFEASIBLE_BF16, "en")
    assert any(reason.startswith("At FP8 it fits on") for reason in option["reasons"]), option["reasons"]
    assert any(reason.startswith("At INT4 it fits on") for reason in option["reasons"]), option["reasons"]


async def test_no_fp8_exclusions_suggest_what_runs(client: Client) -> None:
    for lang, words in (("en", ("BF16", "INT4")), ("zh", ("BF16", "INT4"))):
        body = {"workload": WORKLOADS["inference"] | {"precision": "fp8"}}
        answer = await ask(client, "POST", "/v1/recommendations", body, lang)
        reasons = [item["reason"] for item in answer["excluded"] if item["code"] == "no_fp8"]
        assert reasons and all(all(word in reason for word in words) for reason in reasons), reasons


def test_assumption_names_in_both_languages() -> None:
    assert assumption_name("decode_mbu", "zh") == "解码显存带宽利用率"
    assert assumption_name("decode_mbu", "en") == "decode memory-bandwidth utilization"
    assert assumption_name("something_new", "en") == "something new"
