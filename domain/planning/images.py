"""Image generation: one pipeline per GPU, as many GPUs as the asked rate needs."""

from __future__ import annotations

import math

from domain.catalog import DiffusionModel, Gpu
from domain.hardware.efficiency import SCENARIOS, Scenario, family_of
from domain.narrative.factor_assumptions import stated
from domain.narrative.image_launch import image_launch
from domain.performance.diffusion_gemms import SOURCE as GEMM_SHARE_SOURCE
from domain.performance.diffusion_gemms import gemm_share
from domain.performance.images import image_factors, image_tflop, seconds_per_image
from domain.performance.memory import GB, DiffusionMemory, DiffusionPipeline, usable_memory_bytes
from domain.planning.facts import ImageCheck, ImageSpeedFact
from domain.planning.plan import Candidate, Excluded, Plan, as_range, headroom_pct
from domain.planning.rentals import check_limits, node_count, precision_check, rental_for, require_renter
from domain.workloads.requests import ImageGenerationWorkload
from domain.workloads.results import Assumption, MemoryUse, Parallelism, PerformanceEstimate, rounded


class ImageSizing:
    """The pipeline's memory figures and the TFLOP of one image, neither of which depends on the GPU."""

    def __init__(self, plan: Plan) -> None:
        workload, model = plan.resolved.workload, plan.resolved.model
        assert isinstance(workload, ImageGenerationWorkload) and isinstance(model, DiffusionModel)
        assert workload.steps is not None
        self.pipeline = DiffusionPipeline.of(model, workload.precision, workload.width, workload.height)
        self.tflop = image_tflop(model, workload.width, workload.height, workload.steps)
        # The checks and their exclusions are the same for every request of this shape, offers, rule and language.
        self.check = ImageCheck(
            precision=workload.precision,
            width=workload.width,
            height=workload.height,
            steps=workload.steps,
            offers=plan.offers_key,
            require_offer=plan.constraints.require_offer,
        )


def image_sizing(plan: Plan) -> ImageSizing:
    """The plan's image sizing (built once per plan)."""
    sizing = plan.sizing
    assert isinstance(sizing, ImageSizing)
    return sizing


def plan_images(plan: Plan, gpu: Gpu) -> Candidate:
    """The GPUs that make the asked images per hour (one when no rate is asked)."""
    workload = plan.resolved.workload
    model = plan.resolved.model
    assert isinstance(workload, ImageGenerationWorkload) and isinstance(model, DiffusionModel)
    assert workload.steps is not None and workload.width is not None and workload.height is not None
    sizing = image_sizing(plan)
    pipeline, tflop = sizing.pipeline, sizing.tflop
    passes = workload.steps * model.passes_per_step

    def speed() -> tuple[DiffusionMemory, int, dict[Scenario, float]]:
        memory = pipeline.memory(usable_memory_bytes(gpu))
        if not memory.fits:
            return memory, 0, {}
        shares = {b: gemm_share(model, family_of(gpu), workload.width, workload.height, b) for b in BATCHES}
        batch = _batch(memory, tflop, gpu, workload.precision, passes, shares)
        share = shares[batch]
        seconds = {
            s: seconds_per_image(tflop, gpu, workload.precision, s, passes, batch=batch, gemm_share=share)
            for s in SCENARIOS
        }
        return memory, batch, seconds

    def checked_speed() -> tuple[DiffusionMemory, int, dict[Scenario, float]]:
        precision_check(gpu, workload.precision)
        # Memory, batch and seconds per image are the same for every request of this image shape on this GPU.
        memory, batch, seconds = plan.derived(
            ImageSpeedFact,
            speed,
            gpu=gpu.id,
            precision=workload.precision,
            width=workload.width,
            height=workload.height,
            steps=workload.steps,
        )
        if not memory.fits:
            usable_gb = memory.usable_bytes / GB
            raise Excluded("does_not_fit", gpus=1, needed_gb=memory.required_bytes / GB, usable_gb=usable_gb)
        require_renter(plan, gpu)
        return memory, batch, seconds

    memory, batch, seconds = plan.checked(sizing.check, gpu, checked_speed)
    per_gpu = 3600.0 / seconds["expected"]
    gpus = plan.fixed_count or (math.ceil(workload.images_per_hour / per_gpu) if workload.images_per_hour else 1)
    rental = rental_for(plan, gpu, gpus, 1)
    if rental is not None and plan.fixed_count is None:
        gpus = rental.gpus
    nodes = node_count(rental, gpus)
    check_limits(plan, gpus, nodes)
    total = {s: 3600.0 / t * gpus for s, t in seconds.items()}
    unmet = ["images_per_hour"] if workload.images_per_hour and total["expected"] < workload.images_per_hour else []
    capacity = memory.usable_bytes * gpus
    activations = memory.activations_bytes * batch
    required = (memory.weights_bytes + activations) * gpus
    candidate = Candidate(
        gpu=gpu,
        gpu_count=gpus,
        nodes=nodes,
        parallelism=Parallelism(tensor=1, pipeline=1, data=gpus),
        rental=rental,
        memory=MemoryUse(
            capacity_gb=rounded(capacity / GB),
            required_gb=rounded(required / GB),
            weights_gb=rounded(memory.weights_bytes * gpus / GB),
            activations_gb=rounded(activations * gpus / GB),
            headroom_pct=headroom_pct(capacity, required),
        ),
        performance=PerformanceEstimate(images_per_hour=as_range(total), bound="compute"),
        unmet=unmet,
        perf_value=total["expected"],
        need_value=workload.images_per_hour,
    )
    candidate.reasons.append(plan.say("images_per_gpu", per_gpu=per_gpu))
    flops = tflop
    candidate.assumptions = [
        Assumption(
            name="image_tflop",
            value=plan.say(
                "a_image_tflop",
                tflop=flops,
                steps=workload.steps,
                passes=model.passes_per_step,
                width=workload.width,
                height=workload.height,
            ),
            source="Podell et al. 2023, SDXL (arXiv:2307.01952); the model card's denoiser size",
        ),
        # The factors seconds_per_image read: the MFU, the 8-bit gain where it applies, the per-pass floor.
        *(stated(use) for use in image_factors(gpu, workload.precision)),
        Assumption(
            name="denoiser_gemm_share",
            value=f"{gemm_share(model, family_of(gpu), workload.width, workload.height, batch):.3g}",
            source=GEMM_SHARE_SOURCE,
        ),
        Assumption(
            name="batch",
            value=plan.say("a_image_batch", batch=batch),
            source="Hugging Face diffusers optimization guide (huggingface.co/docs/diffusers)",
        ),
    ]
    if batch > 1:
        candidate.reasons.append(plan.say("image_batch", batch=batch))
    candidate.launch = image_launch(model, workload, gpus, batch)
    return candidate


BATCHES = (1, 2, 4, 8)


def _batch(
    memory: DiffusionMemory, tflop: float, gpu: Gpu, precision: str, passes: int, shares: dict[int, float]
) -> int:
    """The smallest batch within 3% of the best throughput whose activations fit beside the weights."""
    fitting = [b for b in BATCHES if memory.weights_bytes + b * memory.activations_bytes <= memory.usable_bytes]
    seconds = {
        b: seconds_per_image(tflop, gpu, precision, "expected", passes, batch=b, gemm_share=shares[b])
        for b in fitting or [1]
    }
    best = min(seconds.values())
    return next(b for b in sorted(seconds) if seconds[b] <= best * 1.03)
