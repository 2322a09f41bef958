"""Why an inference layout was chosen, what to watch, and the assumptions behind its figures."""

from __future__ import annotations

from functools import lru_cache

from domain.catalog import Gpu, LlmModel
from domain.hardware.links import link_kind
from domain.hardware.nodes import GPUS_PER_NODE
from domain.narrative.explain import layout_text, request_targets, say
from domain.narrative.factor_assumptions import factor_assumptions
from domain.narrative.launch import inference_launch, stage_span
from domain.performance.engines import ENGINES
from domain.performance.factor_record import serving_factors
from domain.performance.layout import Layout
from domain.performance.memory import (
    BYTES_PER_PARAM,
    GIB,
    GPU_MEMORY_UTILIZATION,
    kv_bytes_per_token,
    usable_memory_bytes,
)
from domain.performance.output_lengths import REASONING_SOURCE, drained_share, length_sigma, median_length
from domain.performance.serving import WEIGHT_ONLY
from domain.planning.facts import CopyAssumptionsFact
from domain.planning.inference_sizing import Choice, Copy, InferenceSizing
from domain.planning.plan import Candidate, Plan
from domain.workloads.requests import InferenceWorkload, Lang
from domain.workloads.results import Assumption

THIN_HEADROOM_PCT = 5.0


def layout_label(layout: Layout, copies: int, lang: Lang) -> str:
    """A layout as engines name it: TP, PP, EP and DP (copies), and data-parallel attention where used."""
    attention = layout.expert if layout.dp_attention else None
    return layout_text(layout.tensor, layout.pipeline, layout.expert, copies, attention, lang, sep=" ")


def _layout_reason(plan: Plan, sizing: InferenceSizing, chosen: Choice, other: Choice | None) -> str:
    label = layout_label(chosen.copy.layout, chosen.copies, plan.lang)
    if other is None:
        return plan.say("layout_only", layout=label)
    other_label = layout_label(other.copy.layout, other.copies, plan.lang)
    if len(other.unmet) > len(chosen.unmet):
        return plan.say("layout_targets", layout=label, other=other_label)
    if sizing.has_load and plan.fixed_count is None:

        def hourly(choice: Choice) -> str:
            if choice.rental is None:
                return f"{choice.gpus} GPUs"
            return f"${choice.rental.usd_per_hour:,.2f}/h"

        if hourly(chosen) != hourly(other):
            return plan.say(
                "layout_load", layout=label, cost=hourly(chosen), other=other_label, other_cost=hourly(other)
            )
    if plan.fixed_count is None and chosen.rental is not None and other.rental is not None:
        return plan.say(
            "layout_per_dollar",
            layout=label,
            per_dollar=chosen.throughput * 3600 / chosen.rental.usd_per_hour,
            other=other_label,
            other_per_dollar=other.throughput * 3600 / other.rental.usd_per_hour,
        )
    if plan.fixed_count is not None and not sizing.has_load and chosen.throughput < other.throughput:
        # Chosen among equals for its cost per token (see _prefer_cheaper_among_equals).
        priced = chosen.rental is not None and other.rental is not None
        return plan.say(
            "layout_tie_cost",
            layout=label,
            tokens=chosen.throughput,
            other=other_label,
            other_tokens=other.throughput,
            cost=_per_million(chosen, priced),
            other_cost=_per_million(other, priced),
        )
    return plan.say(
        "layout_throughput", layout=label, tokens=chosen.throughput, other=other_label, other_tokens=other.throughput
    )


def _per_million(choice: Choice, priced: bool) -> str:
    """What a million output tokens cost on this choice: dollars, or GPU-hours where not both layouts are priced."""
    per_million = choice.cost_per_token(priced) * 1e6
    return f"${per_million:,.2f}" if priced else f"{per_million:,.2f} GPU-h"


def describe_inference(
    plan: Plan, candidate: Candidate, sizing: InferenceSizing, chosen: Choice, other: Choice | None
) -> None:
    """Fill the candidate's reasons, warnings, assumptions, layout reason and launch command."""
    gpu, model, workload = candidate.gpu, sizing.model, sizing.workload
    layout = chosen.copy.layout
    fewest = sizing.layouts_for(gpu).fitting(chosen.copy.memory.usable_bytes / GPU_MEMORY_UTILIZATION)[0].layout.gpus
    weights_gb = model.params_b * BYTES_PER_PARAM[sizing.precision]
    reasons, warnings = candidate.reasons, candidate.warnings
    if layout.gpus == 1:
        reasons.append(plan.say("fits_one_gpu", gpu=gpu.name, weights_gb=weights_gb))
    elif layout.expert > 1:
        dp_text = ""
        if layout.dp_attention:
            dp_text = (
                ", attention data-parallel so each GPU keeps its own requests' latent cache"
                if plan.lang == "en"
                else "，注意力数据并行，每张卡只保存自己请求的潜变量缓存"
            )
        reasons.append(plan.say("expert_parallel", ep=layout.expert, dp_text=dp_text))
    elif layout.pipeline > 1 and layout.gpus > 8:
        reasons.append(plan.say("pipeline_nodes", nodes=layout.pipeline, pp=layout.pipeline))
    elif layout.pipeline > 1:
        reasons.append(plan.say("pipeline_in_node", pp=layout.pipeline, tp=layout.tensor))
    elif layout.gpus > fewest:
        reasons.append(plan.say("tensor_parallel_latency", tp=layout.tensor))
    else:
        reasons.append(plan.say("tensor_parallel", tp=layout.tensor, weights_gb=weights_gb))
    stage, domains = stage_span(layout, gpu)
    if stage > GPUS_PER_NODE:
        domain = gpu.interconnect.domain_gpus
        if domains == 1:
            reasons.append(plan.say("inside_nvlink_domain", gpus=stage, domain=domain))
        else:
            reasons.append(plan.say("across_nvlink_domains", gpus=stage, nodes=domains, domain=domain))
    if chosen.copies > 1:
        reasons.append(plan.say("replicas", replicas=chosen.copies, concurrency=chosen.in_flight))
    if workload.concurrency and chosen.busy_copies < chosen.copies:
        warnings.append(
            plan.say("idle_copies", busy=chosen.busy_copies, copies=chosen.copies, concurrency=workload.concurrency)
        )
    if layout.tensor > 1 and gpu.interconnect.kind == "pcie":
        warnings.append(plan.say("no_nvlink_inference", gpu=gpu.name))
    capacity = chosen.copies * chosen.copy.capacity
    if workload.concurrency and capacity < workload.concurrency:
        warnings.append(plan.say("queueing", capacity=capacity, concurrency=workload.concurrency))
    if candidate.nodes > 1 and model.params_b > 100 and layout.gpus > gpu.interconnect.domain_gpus:
        warnings.append(plan.say("infiniband"))
    if sizing.precision == "bf16" and not gpu.tflops.bf16:
        warnings.append(plan.say("fp16_for_bf16", gpu=gpu.name))
    if sizing.precision in WEIGHT_ONLY and not (sizing.precision == "fp4" and gpu.supports_fp4):
        warnings.append(plan.say("weight_only", gpu=gpu.name, precision=sizing.precision.upper()))
    # Engines fill the free memory with KV cache on purpose; what can run short is the room beside the weights.
    memory = chosen.copy.memory
    room = memory.kv_free_bytes - memory.kv_bytes_per_sequence
    if room < THIN_HEADROOM_PCT / 100 * memory.usable_bytes:
        warnings.append(plan.say("thin_headroom", headroom=max(0.0, 100 * room / memory.usable_bytes)))
    candidate.layout_reason = _layout_reason(plan, sizing, chosen, other)
    candidate.assumptions = _assumptions(plan, sizing, chosen)
    copy = chosen.copy
    candidate.launch = inference_launch(
        model, workload, sizing.precision, sizing.kv_precision, copy.speed, chosen.copies, copy.capacity, copy.memory
    )


def request_assumptions(
    model: LlmModel, workload: InferenceWorkload, precision: str, kv_precision: str, lang: Lang
) -> tuple[Assumption, ...]:
    """The assumptions every option of the request states alike, computed once per request shape."""
    try:
        return _shared_assumptions(model, workload, precision, kv_precision, lang)
    except TypeError:
        # A pasted config.json (a dict) makes the request unhashable: its assumptions are its own.
        return _request_assumptions(model, workload, precision, kv_precision, lang)


def _request_assumptions(
    model: LlmModel, workload: InferenceWorkload, precision: str, kv_precision: str, lang: Lang
) -> tuple[Assumption, ...]:
    """The assumptions every option of the request states alike: weights, KV cache, sequence, engine."""
    engine = ENGINES[workload.engine]
    return (
        Assumption(
            name="weights",
            value=say("a_weights", lang, precision=precision, bytes=BYTES_PER_PARAM[precision]),
            source="Kipply, 'Transformer inference arithmetic' (kipp.ly/transformer-inference-arithmetic)",
        ),
        Assumption(
            name="kv_cache",
            value=say("a_kv_cache", lang, precision=kv_precision, bytes=kv_bytes_per_token(model, kv_precision)),
            source="the model's config.json: " + "; ".join(model.sources[:1]),
        ),
        Assumption(
            name="sequence",
            value=say("a_sequence", lang, input=workload.input_tokens, output=workload.output_tokens),
            source="request",
        ),
        Assumption(
            name="engine",
            value=say(
                "a_engine",
                lang,
                engine=engine.name,
                large=engine.large_gpu_batch,
                small=engine.small_gpu_batch,
                kv=kv_precision,
                speedup=engine.decode_speedup,
            ),
            source=engine.source,
        ),
        *_length_assumptions(model, workload, lang),
        Assumption(
            name="use_case",
            value=request_targets(workload, lang) or "",
            source="request (use_case, max_tpot_ms, max_ttft_ms); defaults: chat keeps ahead of a reader (100 ms per "
            "token = 10 tokens/s) with a 2 s wait for the first; an agent waits for each step's whole output before "
            "its next call, so the same 100 ms per token, and 5 s for its long, mostly cached prompts",
        ),
        Assumption(
            name="latency_definitions",
            value=say("a_latency_definitions", lang),
            source="vLLM chunked prefill (docs.vllm.ai, 'Optimization and Tuning')",
        ),
    )


_shared_assumptions = lru_cache(maxsize=1024)(_request_assumptions)

# The offline job the length assumption states its drain for: a hundred batches of 256 sequences.
EXAMPLE_SLOTS = 256
EXAMPLE_REQUESTS = 100 * EXAMPLE_SLOTS


def _length_assumptions(model: LlmModel, workload: InferenceWorkload, lang: Lang) -> tuple[Assumption, ...]:
    """The output-length distribution of a reasoning model and the drain it costs a finite job; none otherwise."""
    sigma = length_sigma(model.id)
    if sigma is None:
        return ()
    mean = workload.output_tokens
    cap = max(mean, model.max_context - workload.input_tokens)
    share = drained_share(EXAMPLE_REQUESTS, EXAMPLE_SLOTS, mean, sigma, cap)
    value = say(
        "a_output_lengths",
        lang,
        sigma=sigma,
        median=median_length(mean, sigma),
        mean=mean,
        requests=EXAMPLE_REQUESTS,
        slots=EXAMPLE_SLOTS,
        share=share,
    )
    return (Assumption(name="output_lengths", value=value, source=REASONING_SOURCE),)


def _assumptions(plan: Plan, sizing: InferenceSizing, chosen: Choice) -> list[Assumption]:
    shared = request_assumptions(sizing.model, sizing.workload, sizing.precision, sizing.kv_precision, plan.lang)
    copy = chosen.copy
    memory, factors = plan.derived(
        CopyAssumptionsFact,
        lambda: _copy_assumptions(sizing, copy, plan.lang),
        shape=sizing.shape,
        gpu=copy.gpu.id,
        layout=copy.layout,
        lang=plan.lang,
    )
    batch = Assumption(
        name="batch",
        value=say("a_batch", plan.lang, batch=chosen.batch, capacity=copy.capacity),
        source="request, or the largest within the targets",
    )
    return [*shared, memory, batch, *factors]


def memory_assumption(gpu: Gpu, lang: Lang) -> Assumption:
    """The share of a GPU's memory an engine fills: the capacity answers compare against."""
    return Assumption(
        name="gpu_memory_utilization",
        value=say("a_memory", lang, share=GPU_MEMORY_UTILIZATION, gib=usable_memory_bytes(gpu) / GIB),
        source="vLLM engine arguments: gpu_memory_utilization 0.9 (docs.vllm.ai)",
    )


# Interconnects as their makers write them, for the Chinese text (the English keeps the API's kind).
_LINK_NAMES = {
    "nvswitch": "NVSwitch",
    "nvlink": "NVLink",
    "nvlink_bridge": "NVLink",
    "infinity_fabric": "Infinity Fabric",
    "ethernet": "RoCE",
    "hccs": "HCCS",
    "pcie": "PCIe",
}


def _copy_assumptions(sizing: InferenceSizing, copy: Copy, lang: Lang) -> tuple[Assumption, tuple[Assumption, ...]]:
    """What a copy's estimate assumes apart from the request and the batch: the same for every request of its shape."""
    gpu, layout = copy.gpu, copy.layout
    memory = memory_assumption(gpu, lang)
    # Built from the factors the copy's own speed model read: what is stated is what the estimate used.
    tensor = layout.attention_tensor
    kind = link_kind(gpu, tensor)
    link = kind if lang == "en" else _LINK_NAMES.get(kind, kind)
    items = factor_assumptions(serving_factors(copy.speed), lang, tensor, link)
    return memory, tuple(items)
