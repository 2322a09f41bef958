"""Calibration points: public measurements with their conditions, reproduced by the model."""

from __future__ import annotations

import math

from domain.calibration.points import CalibrationPoint, Reproduction
from domain.catalog import Catalog, DiffusionModel, Gpu, LlmModel
from domain.hardware.efficiency import SCENARIOS, Scenario, family_of, shared
from domain.hardware.peaks import compute_tflops
from domain.performance.diffusion_gemms import gemm_share
from domain.performance.engine_releases import (
    decode_effects,
    diffusion_slowdown,
    diffusion_step_host_seconds,
    fine_tuning_slowdown,
)
from domain.performance.engines import ENGINES
from domain.performance.images import image_tflop, seconds_per_image
from domain.performance.layout import Layout
from domain.performance.memory import InstanceShape, usable_memory_bytes
from domain.performance.serving import InstanceSpeed
from domain.performance.training import TrainingSpeed, engine_stack
from domain.performance.training_flops import training_flops_per_token

# Diffusion runtimes that compile the denoiser into one graph.
# Optimum Habana is not among them: every Gaudi diffusion measurement runs on it, so Gaudi's factor is its speed.
COMPILED_ENGINES = frozenset({"tensorrt", "onnxruntime", "ort", "stable-fast"})
# Compiled runtimes whose kernels gain less over eager than TensorRT's (compiled_diffusion otherwise).
ORT_ENGINES = frozenset({"onnxruntime", "ort"})


def _inference(catalog: Catalog, gpu: Gpu, model: LlmModel, point: CalibrationPoint, scenario: Scenario) -> float:
    dp_attention = point.expert > 1 and point.tensor == 1
    layout = Layout(tensor=point.tensor, pipeline=point.pipeline, expert=point.expert, dp_attention=dp_attention)
    copies = max(1, point.gpu_count // layout.gpus)
    shape = InstanceShape.of(
        model,
        point.precision,
        point.kv_cache_precision,
        point.input_tokens + point.output_tokens,
        layout.tensor,
        layout.pipeline,
        expert_parallel=layout.expert,
        dp_attention=dp_attention,
    )
    held = point.kv_cache_sequences or shape.max_concurrency(usable_memory_bytes(gpu))
    busy = min(copies, point.concurrency)
    engine = ENGINES.get(point.engine)  # type: ignore[call-overload]
    # The engine's default cap on sequences in flight, as the planner applies it.
    cap = point.max_batch or (engine.batch_cap(gpu) if engine else held)
    batch = max(1, min(held, cap, math.ceil(point.concurrency / copies)))
    speed = InstanceSpeed(
        model,
        gpu,
        point.precision,
        point.kv_cache_precision,
        layout,
        point.input_tokens,
        max(1, point.output_tokens),
        engine.decode_speedup if engine else 1.0,
        two_stage_all_reduce=engine.two_stage_all_reduce if engine else False,
        release=decode_effects(
            model, point.precision, point.engine, point.engine_version, point.date, batch, family_of(gpu)
        ),
        engine=point.engine,
    )
    serving = speed.point(batch, scenario)
    output = busy * serving.tokens_per_s
    metric = point.metric
    if metric == "output_tokens_per_s":
        return output
    if metric == "output_tokens_per_s_per_gpu":
        return output / point.gpu_count
    if metric == "total_tokens_per_s":
        return output * (point.input_tokens + point.output_tokens) / max(1, point.output_tokens)
    if metric == "tpot_ms":
        return serving.tpot_s * 1e3
    if metric == "ttft_ms":
        return serving.ttft_s * 1e3
    if metric == "decode_step_ms":
        return serving.step_s * 1e3
    if metric == "prefill_ms":
        # A batch of prompts prefilled together: their compute adds up, the weights are read once.
        alone, compute = speed.prefill(scenario)
        return (alone + (point.concurrency - 1) * compute) * 1e3
    raise ValueError(f"{point.id}: metric {metric!r} is not an inference metric")


def _training(gpu: Gpu, model: LlmModel, point: CalibrationPoint, scenario: Scenario) -> float:
    method = point.method if point.kind == "fine_tuning" else "full"
    tokens = 1e11
    speed = TrainingSpeed(
        model,
        gpu,
        method=method,
        precision=point.precision,
        train_tokens=tokens,
        sequence_length=point.sequence_length,
        scenario=scenario,
        fine_tuning=point.kind == "fine_tuning",
        stack=point.stack or engine_stack(point.engine),
        attention_tokens=point.sample_tokens,
        tp_comm_overlap=point.tp_comm_overlap,
        adapter_targets=point.lora_targets,
        adapter_dropout=point.lora_dropout,
    )
    # Recomputing half the forward GEMMs costs what recomputing half the layers does: half a forward pass.
    recompute = model.layers if point.recompute else round(point.recompute_share * model.layers)
    domain = gpu.interconnect.domain_gpus
    run = speed.run(
        point.gpu_count,
        point.tensor,
        domain,
        recompute,
        point.pipeline,
        point.expert,
        context=point.context,
        global_batch=point.global_batch,
    )
    slowdown = fine_tuning_slowdown(model, method, point.tensor, point.engine, point.engine_version, point.date)
    tokens_per_s = run.tokens_per_s / slowdown
    metric = point.metric
    if metric == "tokens_per_s":
        return tokens_per_s
    if metric == "tokens_per_s_per_gpu":
        return tokens_per_s / point.gpu_count
    if metric == "mfu_pct":
        peak = (compute_tflops(gpu, "bf16") or 1.0) * 1e12
        return 100 * tokens_per_s * training_flops_per_token(model, point.sequence_length) / (point.gpu_count * peak)
    raise ValueError(f"{point.id}: metric {metric!r} is not a training metric")


def _images(gpu: Gpu, model: DiffusionModel, point: CalibrationPoint, scenario: Scenario) -> float:
    steps = point.steps or model.default_steps
    tflop = image_tflop(model, point.width, point.height, steps)
    compiled = point.engine in COMPILED_ENGINES or "compile" in point.id
    passes = steps * model.passes_per_step
    seconds = seconds_per_image(
        tflop,
        gpu,
        point.precision,
        scenario,
        passes,
        compiled=compiled,
        batch=max(1, point.batch),
        speedup=shared("ort_cuda_diffusion" if point.engine in ORT_ENGINES else "compiled_diffusion"),
        gemm_share=gemm_share(model, family_of(gpu), point.width, point.height, point.batch),
    )
    seconds *= diffusion_slowdown(point.engine, point.engine_version, point.date)
    # One denoiser call per step serves the whole batch, so its host time is shared by the batch's images.
    seconds += steps * diffusion_step_host_seconds(point.engine, point.engine_version, point.date) / max(1, point.batch)
    if point.metric == "seconds_per_image":
        return seconds
    if point.metric == "images_per_hour":
        return 3600.0 / seconds * point.gpu_count
    raise ValueError(f"{point.id}: metric {point.metric!r} is not an image metric")


def reproduce(catalog: Catalog, point: CalibrationPoint) -> Reproduction:
    """The model's prediction for a point, in each scenario."""
    gpu, model = catalog.gpu(point.gpu), catalog.model(point.model)
    if gpu is None or model is None:
        raise ValueError(f"{point.id}: unknown gpu {point.gpu!r} or model {point.model!r}")
    values: dict[Scenario, float] = {}
    for scenario in SCENARIOS:
        if isinstance(model, DiffusionModel):
            values[scenario] = _images(gpu, model, point, scenario)
        elif point.kind == "inference":
            values[scenario] = _inference(catalog, gpu, model, point, scenario)
        else:
            values[scenario] = _training(gpu, model, point, scenario)
    ends = (values["pessimistic"], values["optimistic"])
    return Reproduction(point, family_of(gpu), values["expected"], min(ends), max(ends))
