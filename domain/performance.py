"""Throughput, latency and run time: the roofline of perf-model.md with the efficiency table's factors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from domain.catalog import DiffusionModel, Gpu, LinkKind, LlmModel
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


def tensor_link_gbps(gpu: Gpu, tensor_parallel: int) -> float:
    """Bandwidth (one direction) of the GPU link inside a tensor-parallel group."""
    if _link_kind(gpu, tensor_parallel) == "pcie":
        return PCIE_GBPS
    return (gpu.interconnect.bandwidth_gbps or 2 * PCIE_GBPS) / 2


def _link_kind(gpu: Gpu, tensor_parallel: int) -> LinkKind:
    kind = gpu.interconnect.kind
    if kind == "nvlink_bridge" and tensor_parallel > 2:
        return "pcie"  # bridges join pairs only; larger groups talk over PCIe
    return kind


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
    speed = InstanceSpeed(model, gpu, precision, kv_precision, tensor_parallel, pipeline, input_tokens, output_tokens)
    return speed.point(batch, scenario)


class InstanceSpeed:
    """One model instance (tensor x pipeline GPUs of one kind) serving requests of one shape.

    What depends on neither the batch nor the scenario is computed once, and the prefill once per scenario, so a
    search over batch sizes and the three scenarios of an answer cost a few float operations per point.
    """

    def __init__(
        self,
        model: LlmModel,
        gpu: Gpu,
        precision: str,
        kv_precision: str,
        tensor_parallel: int,
        pipeline: int,
        input_tokens: int,
        output_tokens: int,
    ) -> None:
        self.model, self.gpu, self.precision = model, gpu, precision
        self.tensor_parallel, self.pipeline = tensor_parallel, pipeline
        self.input_tokens, self.output_tokens = input_tokens, output_tokens
        self.gpus = tensor_parallel * pipeline
        context = input_tokens + output_tokens / 2  # the mean context while decoding
        self.layers = model.layers / pipeline  # per pipeline stage
        self.base_params, self.expert_params = moe_split(model)
        self.bytes_per_param = BYTES_PER_PARAM[precision]
        self.kv_bytes_per_sequence = kv_bytes_per_sequence(model, kv_precision, context, tensor_parallel, pipeline)
        self.bandwidth = gpu.memory_bandwidth_gbps * 1e9
        peak = compute_tflops(gpu, precision) or 1.0
        self.peak_flops = peak * 1e12
        self.all_peak_flops = self.gpus * peak * 1e12
        self.active_flops = 2.0 * active_params(model)  # per token through the weights
        self.attention_flops = attention_flops_per_position(model) * context * model.layers  # per decoded token
        self.mbu = factor(gpu, "decode_mbu_moe" if model.moe else "decode_mbu_dense")
        self.mfu = factor(gpu, "prefill_mfu")
        self.floor_us = factor(gpu, "step_floor_us_moe" if model.moe else "step_floor_us_dense")
        self.link_alpha_us = LINK_ALPHA_US[_link_kind(gpu, tensor_parallel)]
        self.ring_share = 2.0 * (tensor_parallel - 1) / tensor_parallel
        self.link_bytes_per_s = tensor_link_gbps(gpu, tensor_parallel) * 1e9
        self.step_collectives = _collectives(model, self.layers)
        self.prefill_collectives = _collectives(model, model.layers)
        self._prefills: dict[Scenario, tuple[float, float]] = {}

    def point(self, batch: int, scenario: Scenario) -> ServingPoint:
        """`batch` sequences at a time in a scenario (see `serving_point`)."""
        tpot_s, bound = self.step(batch, scenario)
        alone, prefill_compute = self.prefill(scenario)
        output_tokens = self.output_tokens
        cycle = output_tokens * tpot_s + batch * prefill_compute
        tokens_per_s = batch * output_tokens / cycle
        return ServingPoint(
            batch=batch,
            tpot_s=tpot_s,
            ttft_s=alone + tpot_s,
            tokens_per_s=tokens_per_s,
            requests_per_s=tokens_per_s / output_tokens,
            bound=bound,
        )

    def step(self, batch: int, scenario: Scenario) -> tuple[float, Bound]:
        """TPOT at `batch` sequences of the mean context: roofline + collectives + per-step floor; and its bound."""
        weight_params = self.base_params + experts_touched(self.model, batch) * self.expert_params
        weight_bytes = weight_params * self.bytes_per_param / self.gpus
        kv_bytes = batch * self.kv_bytes_per_sequence
        mbu = self.mbu.at(scenario)
        if self.precision in WEIGHT_ONLY:
            mbu *= W4_DECODE.at(scenario)
        t_memory = (weight_bytes + kv_bytes) / (self.bandwidth * mbu)

        flops = (self.active_flops * batch + self.attention_flops * batch) / self.gpus
        t_compute = flops / (self.peak_flops * self.mfu.at(scenario))

        t_comm = self._tensor_parallel_seconds(batch, self.step_collectives, scenario)
        stage = max(t_memory, t_compute) + t_comm + self.layers * self.floor_us.at(scenario) * 1e-6
        seconds = self.pipeline * stage + (self.pipeline - 1) * INTER_NODE_HOP_US.at(scenario) * 1e-6
        if t_comm > max(t_memory, t_compute):
            return seconds, "interconnect"
        return seconds, "memory" if t_memory >= t_compute else "compute"

    def prefill(self, scenario: Scenario) -> tuple[float, float]:
        """(time to prefill one sequence alone, the compute part that also competes with decoding under load)."""
        prefill = self._prefills.get(scenario)
        if prefill is None:
            prefill = self._prefills[scenario] = self._prefill(scenario)
        return prefill

    def _prefill(self, scenario: Scenario) -> tuple[float, float]:
        model, tokens = self.model, self.input_tokens
        d_attn = model.attention_heads * model.head_dim
        flops = self.active_flops * tokens + 2.0 * model.layers * tokens * tokens * d_attn
        mfu = self.mfu.at(scenario)
        if self.precision in ("fp8", "int8"):
            mfu *= FP8_PREFILL.at(scenario)
        t_compute = flops / (self.all_peak_flops * mfu)
        weights = model.params_b * 1e9 * self.bytes_per_param / self.gpus
        t_memory = weights / (self.bandwidth * self.mbu.at(scenario))
        t_comm = self._tensor_parallel_seconds(tokens, self.prefill_collectives, scenario)
        return max(t_compute, t_memory) + t_comm, t_compute + t_comm

    def _tensor_parallel_seconds(self, tokens: float, collectives: float, scenario: Scenario) -> float:
        """`collectives` all-reduces of `tokens` tokens' activations: ring time alpha + 2(n-1)/n x M / link each."""
        if self.tensor_parallel == 1:
            return 0.0
        alpha_s = self.link_alpha_us.at(scenario) * 1e-6
        message = tokens * self.model.hidden_size * 2.0
        ring = self.ring_share * message / self.link_bytes_per_s
        return collectives * (alpha_s + ring)


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
    speed = TrainingSpeed(
        model,
        gpu,
        method=method,
        precision=precision,
        train_tokens=train_tokens,
        sequence_length=sequence_length,
        scenario=scenario,
    )
    return speed.run(gpus, tensor_parallel, gpus_per_node, recompute_layers)


class TrainingSpeed:
    """A training workload of one model on one GPU in one scenario: everything a run's time needs but the layout.

    A search over GPU counts and tensor-parallel sizes builds this once per GPU instead of once per layout; the
    efficiency of each tensor-parallel size and the link of each GPU count are worked out once, when first used.
    """

    __slots__ = (
        "_link_gbps",
        "_mfu",
        "adapter_factors",
        "exchanged_bytes",
        "exchanges_gradients",
        "flops_per_token",
        "gpu",
        "inter_node_gbps",
        "layers",
        "mfu",
        "peak_tflops",
        "steps",
        "train_tokens",
    )

    def __init__(
        self,
        model: LlmModel,
        gpu: Gpu,
        *,
        method: str,
        precision: str,
        train_tokens: float,
        sequence_length: int,
        scenario: Scenario,
    ) -> None:
        self.gpu = gpu
        self.train_tokens = train_tokens
        self.layers = model.layers
        self.flops_per_token = training_flops_per_token(model, sequence_length)
        self.peak_tflops = compute_tflops(gpu, precision) or 1.0
        self.mfu = factor(gpu, "train_mfu").at(scenario)  # before the cost of tensor parallelism
        # LoRA's time, then QLoRA's dequantisation, applied in this order.
        self.adapter_factors: tuple[float, ...] = ()
        if method in ("lora", "qlora"):
            self.adapter_factors = (LORA_TIME.at(scenario),)
            if method == "qlora":
                self.adapter_factors += (QLORA_SLOWDOWN.at(scenario),)
        self.exchanges_gradients = method == "full"  # LoRA and QLoRA runs have no data-parallel exchange modelled
        self.exchanged_bytes = 3 * 2.0 * model.params_b * 1e9  # per step before the tensor-parallel split
        self.steps = max(1.0, train_tokens / TRAIN_BATCH_TOKENS)  # optimizer steps of the run
        self.inter_node_gbps = INTER_NODE_GBPS.at(scenario)
        self._mfu: dict[int, float] = {}
        self._link_gbps: dict[int, float] = {}

    def run(self, gpus: int, tensor_parallel: int, gpus_per_node: int, recompute_layers: int) -> TrainingRun:
        """The run on `gpus` GPUs (see `training_run`)."""
        compute_s, comm_s = self._seconds(gpus, tensor_parallel, gpus_per_node, recompute_layers)
        seconds = compute_s + comm_s
        return TrainingRun(
            hours=seconds / 3600,
            tokens_per_s=self.train_tokens / seconds,
            bound="interconnect" if comm_s > 0.25 * compute_s else "compute",
        )

    def hours(self, gpus: int, tensor_parallel: int, gpus_per_node: int, recompute_layers: int) -> float:
        """The run's hours alone, as `run` gives them: what a layout search compares."""
        compute_s, comm_s = self._seconds(gpus, tensor_parallel, gpus_per_node, recompute_layers)
        return (compute_s + comm_s) / 3600

    def _seconds(
        self, gpus: int, tensor_parallel: int, gpus_per_node: int, recompute_layers: int
    ) -> tuple[float, float]:
        """(compute seconds, exposed data-parallel exchange seconds)."""
        mfu = self._mfu.get(tensor_parallel)
        if mfu is None:
            mfu = self._mfu[tensor_parallel] = self.mfu * _tensor_parallel_efficiency(self.gpu, tensor_parallel)
        # Recomputing a layer repeats its forward pass: 2 of the 6 FLOPs per parameter and token.
        hardware_flops = self.flops_per_token * (1 + recompute_layers / (3 * self.layers))
        compute_s = self.train_tokens * hardware_flops / (gpus * self.peak_tflops * 1e12 * mfu)
        for slowdown in self.adapter_factors:
            compute_s *= slowdown

        data_parallel = gpus // tensor_parallel
        if data_parallel <= 1 or not self.exchanges_gradients:
            return compute_s, 0.0
        # ZeRO-3: reduce-scatter of gradients plus two all-gathers of bf16 weights per step.
        volume = self.exchanged_bytes / tensor_parallel * (data_parallel - 1) / data_parallel
        if gpus > gpus_per_node:
            gbps = self.inter_node_gbps
        else:
            link_gbps = self._link_gbps.get(gpus)
            if link_gbps is None:
                link_gbps = self._link_gbps[gpus] = tensor_link_gbps(self.gpu, gpus)
            gbps = link_gbps
        per_step = volume / (gbps * 1e9)
        exposed = max(0.0, per_step - COMM_OVERLAP * compute_s / self.steps)
        return compute_s, exposed * self.steps


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
    return seconds_per_image(image_tflop(model, width, height, steps), gpu, precision, scenario)


def seconds_per_image(tflop: float, gpu: Gpu, precision: str, scenario: Scenario) -> float:
    """Seconds for an image of `tflop` TFLOP (`image_tflop`) on one GPU."""
    peak = compute_tflops(gpu, precision) or 1.0
    mfu = factor(gpu, "diffusion_mfu").at(scenario)
    if precision in ("fp8", "int8"):
        mfu *= FP8_PREFILL.at(scenario)
    return tflop / (peak * mfu)
