"""Throughput, latency and run time: the roofline of perf-model.md with the efficiency table's factors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from domain.catalog import DiffusionModel, Gpu, LlmModel
from domain.efficiency import (
    FP8_PREFILL,
    INTER_NODE_GBPS,
    INTER_NODE_HOP_US,
    LINK_ALPHA_US,
    LORA_TIME,
    PCIE_GBPS,
    QLORA_SLOWDOWN,
    W4_DECODE,
    Scenario,
    factor,
)
from domain.memory import (
    BYTES_PER_PARAM,
    active_params,
    diffusion_scale,
    experts_touched,
    kv_bytes_per_sequence,
    moe_split,
)

Bound = Literal["memory", "compute", "interconnect"]

WEIGHT_ONLY = ("int4", "fp4")
# A global batch of ~4M tokens per optimizer step (Llama 3 used 4-16M); gradients are exchanged once per step.
TRAIN_BATCH_TOKENS = 4e6
# Share of the data-parallel exchange hidden behind compute (bucketed all-reduce / FSDP prefetch).
COMM_OVERLAP = 0.7
# FLOPs per parameter of one denoiser pass at 1024x1024 where the model card gives none: SDXL's UNet (6.76 TFLOP,
# 2.567B) and FLUX.1's transformer (74.4 TFLOP, 11.9B).
UNET_FLOP_PER_PARAM = 6.76e12 / 2.567e9
DIT_FLOP_PER_PARAM = 74.4e12 / 11.9e9
VAE_DECODE_TFLOP_1024 = 10.5


def compute_tflops(gpu: Gpu, precision: str) -> float | None:
    """Dense peak for the arithmetic a precision runs in; None when the GPU cannot run it at all.

    Weight-only int4/fp4 computes in 16-bit unless the GPU has FP4 tensor cores; GPUs without BF16 run FP16.
    """
    t = gpu.tflops
    half = t.bf16 or t.fp16
    if precision in ("bf16", "fp16"):
        return half or t.fp32
    if precision == "fp32":
        return t.tf32 or t.fp32
    if precision == "fp8":
        return t.fp8
    if precision == "int8":
        return t.int8 if half else None
    if precision == "fp4" and t.fp4:
        return t.fp4
    return half  # weight-only int4/fp4: 16-bit tensor cores needed


@dataclass(frozen=True)
class LinkModel:
    """The GPU link a tensor-parallel group uses."""

    gbps: float
    alpha_s: float


def tensor_link(gpu: Gpu, tensor_parallel: int, scenario: Scenario) -> LinkModel:
    """Bandwidth (one direction) and per-collective latency inside a tensor-parallel group."""
    kind = gpu.interconnect.kind
    if kind == "nvlink_bridge" and tensor_parallel > 2:
        kind = "pcie"  # bridges join pairs only; larger groups talk over PCIe
    bandwidth = PCIE_GBPS if kind == "pcie" else (gpu.interconnect.bandwidth_gbps or 2 * PCIE_GBPS) / 2
    return LinkModel(gbps=bandwidth, alpha_s=LINK_ALPHA_US[kind].at(scenario) * 1e-6)


def attention_flops_per_position(model: LlmModel) -> float:
    """FLOPs per token, per layer, per position of context (QK^T and AV); MLA with the latent absorbed."""
    if model.mla is not None:
        latent = model.mla.kv_lora_rank
        return (
            2.0 * model.attention_heads * (latent + model.mla.qk_rope_head_dim) + 2.0 * model.attention_heads * latent
        )
    return 4.0 * model.attention_heads * model.head_dim


def _collectives(model: LlmModel, layers: float) -> float:
    # Two all-reduces per dense layer; MoE layers add the expert dispatch/combine.
    if model.moe is None:
        return 2.0 * layers
    moe_share = (model.layers - model.moe.first_dense_layers) / model.layers
    return layers * (2.0 + moe_share)


def tensor_parallel_seconds(
    model: LlmModel, gpu: Gpu, tensor_parallel: int, tokens: float, layers: float, scenario: Scenario
) -> float:
    """All-reduces of `tokens` tokens' activations over `layers` layers: ring time alpha + 2(n-1)/n x M / link."""
    if tensor_parallel == 1:
        return 0.0
    link = tensor_link(gpu, tensor_parallel, scenario)
    message = tokens * model.hidden_size * 2.0
    ring = 2.0 * (tensor_parallel - 1) / tensor_parallel * message / (link.gbps * 1e9)
    return _collectives(model, layers) * (link.alpha_s + ring)


@dataclass(frozen=True)
class Step:
    """One decode step of the whole model instance."""

    seconds: float
    bound: Bound


def decode_step(
    model: LlmModel,
    gpu: Gpu,
    precision: str,
    kv_precision: str,
    tensor_parallel: int,
    pipeline: int,
    batch: int,
    context: float,
    scenario: Scenario,
) -> Step:
    """TPOT at `batch` sequences of mean context `context`: roofline + collectives + per-step floor."""
    gpus_per_stage = tensor_parallel
    layers = model.layers / pipeline
    base, per_expert = moe_split(model)
    weight_params = base + experts_touched(model, batch) * per_expert
    weight_bytes = weight_params * BYTES_PER_PARAM[precision] / (tensor_parallel * pipeline)
    kv_bytes = batch * kv_bytes_per_sequence(model, kv_precision, context, tensor_parallel, pipeline)
    mbu = factor(gpu, "decode_mbu_moe" if model.moe else "decode_mbu_dense").at(scenario)
    if precision in WEIGHT_ONLY:
        mbu *= W4_DECODE.at(scenario)
    t_memory = (weight_bytes + kv_bytes) / (gpu.memory_bandwidth_gbps * 1e9 * mbu)

    peak = compute_tflops(gpu, precision) or 1.0
    flops = (
        2.0 * active_params(model) * batch + attention_flops_per_position(model) * context * model.layers * batch
    ) / (gpus_per_stage * pipeline)
    t_compute = flops / (peak * 1e12 * factor(gpu, "prefill_mfu").at(scenario))

    t_comm = tensor_parallel_seconds(model, gpu, tensor_parallel, batch, layers, scenario)
    floor_us = factor(gpu, "step_floor_us_moe" if model.moe else "step_floor_us_dense").at(scenario)
    stage = max(t_memory, t_compute) + t_comm + layers * floor_us * 1e-6
    seconds = pipeline * stage + (pipeline - 1) * INTER_NODE_HOP_US.at(scenario) * 1e-6
    if t_comm > max(t_memory, t_compute):
        bound: Bound = "interconnect"
    else:
        bound = "memory" if t_memory >= t_compute else "compute"
    return Step(seconds=seconds, bound=bound)


def prefill_seconds(
    model: LlmModel, gpu: Gpu, precision: str, tensor_parallel: int, pipeline: int, tokens: int, scenario: Scenario
) -> tuple[float, float]:
    """(time to prefill one sequence alone, the compute part that also competes with decoding under load)."""
    d_attn = model.attention_heads * model.head_dim
    flops = 2.0 * active_params(model) * tokens + 2.0 * model.layers * tokens * tokens * d_attn
    gpus = tensor_parallel * pipeline
    mfu = factor(gpu, "prefill_mfu").at(scenario)
    if precision in ("fp8", "int8"):
        mfu *= FP8_PREFILL.at(scenario)
    peak = compute_tflops(gpu, precision) or 1.0
    t_compute = flops / (gpus * peak * 1e12 * mfu)
    weights = model.params_b * 1e9 * BYTES_PER_PARAM[precision] / gpus
    mbu = factor(gpu, "decode_mbu_moe" if model.moe else "decode_mbu_dense").at(scenario)
    t_memory = weights / (gpu.memory_bandwidth_gbps * 1e9 * mbu)
    t_comm = tensor_parallel_seconds(model, gpu, tensor_parallel, tokens, model.layers, scenario)
    return max(t_compute, t_memory) + t_comm, t_compute + t_comm


@dataclass(frozen=True)
class ServingPoint:
    """One model instance serving `batch` sequences at a time, in one scenario."""

    batch: int
    tpot_s: float
    ttft_s: float
    tokens_per_s: float
    requests_per_s: float
    bound: Bound


def serving_point(
    model: LlmModel,
    gpu: Gpu,
    precision: str,
    kv_precision: str,
    tensor_parallel: int,
    pipeline: int,
    batch: int,
    input_tokens: int,
    output_tokens: int,
    scenario: Scenario,
) -> ServingPoint:
    """Continuous batching: decode steps and the batch's prefills share the GPUs."""
    context = input_tokens + output_tokens / 2
    step = decode_step(model, gpu, precision, kv_precision, tensor_parallel, pipeline, batch, context, scenario)
    alone, prefill_compute = prefill_seconds(model, gpu, precision, tensor_parallel, pipeline, input_tokens, scenario)
    cycle = output_tokens * step.seconds + batch * prefill_compute
    tokens_per_s = batch * output_tokens / cycle
    return ServingPoint(
        batch=batch,
        tpot_s=step.seconds,
        ttft_s=alone + step.seconds,
        tokens_per_s=tokens_per_s,
        requests_per_s=tokens_per_s / output_tokens,
        bound=step.bound,
    )


@dataclass(frozen=True)
class TrainingRun:
    """Wall-clock time of a training or fine-tuning run in one scenario."""

    hours: float
    tokens_per_s: float
    bound: Bound


def training_flops_per_token(model: LlmModel, sequence_length: int) -> float:
    """6N plus attention, 12 x layers x d x S per token (N = active parameters)."""
    return 6.0 * active_params(model) + 12.0 * model.layers * model.hidden_size * sequence_length


def training_run(
    model: LlmModel,
    gpu: Gpu,
    *,
    method: str,
    precision: str,
    train_tokens: float,
    sequence_length: int,
    gpus: int,
    tensor_parallel: int,
    gpus_per_node: int,
    recompute_layers: int,
    scenario: Scenario,
) -> TrainingRun:
    """T = C / (n x peak x MFU) plus the data-parallel exchange that compute does not hide."""
    peak = compute_tflops(gpu, precision) or 1.0
    mfu = factor(gpu, "train_mfu").at(scenario) * _tensor_parallel_efficiency(gpu, tensor_parallel)
    # Recomputing a layer repeats its forward pass: 2 of the 6 FLOPs per parameter and token.
    hardware_flops = training_flops_per_token(model, sequence_length) * (1 + recompute_layers / (3 * model.layers))
    compute_s = train_tokens * hardware_flops / (gpus * peak * 1e12 * mfu)
    if method in ("lora", "qlora"):
        compute_s *= LORA_TIME.at(scenario)
        if method == "qlora":
            compute_s *= QLORA_SLOWDOWN.at(scenario)

    data_parallel = gpus // tensor_parallel
    comm_s = 0.0
    if data_parallel > 1 and method == "full":
        steps = max(1.0, train_tokens / TRAIN_BATCH_TOKENS)
        # ZeRO-3: reduce-scatter of gradients plus two all-gathers of bf16 weights per step.
        volume = 3 * 2.0 * model.params_b * 1e9 / tensor_parallel * (data_parallel - 1) / data_parallel
        gbps = INTER_NODE_GBPS.at(scenario) if gpus > gpus_per_node else tensor_link(gpu, gpus, scenario).gbps
        per_step = volume / (gbps * 1e9)
        exposed = max(0.0, per_step - COMM_OVERLAP * compute_s / steps)
        comm_s = exposed * steps
    seconds = compute_s + comm_s
    return TrainingRun(
        hours=seconds / 3600,
        tokens_per_s=train_tokens / seconds,
        bound="interconnect" if comm_s > 0.25 * compute_s else "compute",
    )


def _tensor_parallel_efficiency(gpu: Gpu, tensor_parallel: int) -> float:
    # Tensor parallelism costs a little on NVLink-class links and a lot over PCIe.
    if tensor_parallel == 1:
        return 1.0
    fast = gpu.interconnect.kind in ("nvswitch", "nvlink", "infinity_fabric", "ethernet", "hccs")
    if fast:
        return {2: 0.95, 4: 0.92}.get(tensor_parallel, 0.88)
    return 0.8 if tensor_parallel == 2 and gpu.interconnect.kind == "nvlink_bridge" else 0.6


def denoiser_tflop_per_pass(model: DiffusionModel) -> float:
    """TFLOP of one denoiser pass at 1024x1024: the model card's figure, else scaled from SDXL or FLUX.1."""
    if model.tflop_per_pass_1024:
        return model.tflop_per_pass_1024
    per_param = UNET_FLOP_PER_PARAM if "unet" in model.denoiser.architecture.lower() else DIT_FLOP_PER_PARAM
    return model.denoiser.params_b * 1e9 * per_param / 1e12


def image_tflop(model: DiffusionModel, width: int, height: int, steps: int) -> float:
    """TFLOP per image: steps x passes x denoiser pass, plus the VAE decode."""
    scale = diffusion_scale(width, height)
    vae = model.vae_decode_tflop_1024 or VAE_DECODE_TFLOP_1024
    return (steps * model.passes_per_step * denoiser_tflop_per_pass(model) + vae) * scale


def image_seconds(
    model: DiffusionModel, gpu: Gpu, precision: str, width: int, height: int, steps: int, scenario: Scenario
) -> float:
    """Seconds per image on one GPU: compute-bound from batch 1 at these sizes."""
    peak = compute_tflops(gpu, precision) or 1.0
    mfu = factor(gpu, "diffusion_mfu").at(scenario)
    if precision in ("fp8", "int8"):
        mfu *= FP8_PREFILL.at(scenario)
    return image_tflop(model, width, height, steps) / (peak * mfu)
