"""Training and fine-tuning: the GPU count and the layout (parallel sizes, ZeRO stage, micro-batch, recomputation)
that meet the deadline cheapest."""

from __future__ import annotations

from functools import cached_property
from typing import Literal

from domain.catalog import Gpu, LlmModel
from domain.hardware.efficiency import SCENARIOS, Scenario
from domain.hardware.nodes import GPUS_PER_NODE
from domain.narrative.launch import training_launch
from domain.performance.fp8_training import low_precision_speedup
from domain.performance.memory import GB
from domain.performance.training import TrainingSpeed
from domain.performance.training_memory import Activations, TrainingStates, training_usable_bytes
from domain.planning.facts import (
    TrainingBestFact,
    TrainingCauseFact,
    TrainingCheck,
    TrainingFirstFact,
    TrainingRunsFact,
    TrainingShape,
    TrainingSpeedFact,
)
from domain.planning.plan import Candidate, Excluded, Plan, as_range, headroom_pct
from domain.planning.rentals import check_limits, node_count, precision_check, rental_for, require_host, require_renter
from domain.planning.training_layouts import Found, LayoutMemory, describe, fits_any, search
from domain.planning.training_text import loss_cause, training_assumptions
from domain.workloads.requests import FineTuningWorkload, TrainingWorkload
from domain.workloads.results import MemoryUse, Parallelism, PerformanceEstimate, rounded

THIN_HEADROOM_PCT = 5.0


def _training_counts(plan: Plan) -> list[int]:
    if plan.fixed_count is not None:
        return [plan.fixed_count]
    nodes = 1 if plan.constraints.single_node else plan.constraints.max_nodes
    limit = min(plan.constraints.max_gpus, nodes * GPUS_PER_NODE)
    counts, n = [1, 2, 4], GPUS_PER_NODE
    while n <= limit:
        counts.append(n)
        n *= 2
    return [c for c in counts if c <= limit] or [1]


class TrainingSizing:
    """A training request's memory figures that do not depend on the GPU, and which counts fit by GPU memory."""

    # Training memory depends on the GPU only through the memory it may fill, so GPUs with equal memory share what was
    # found for the first of them.

    def __init__(self, plan: Plan, model: LlmModel, workload: TrainingWorkload | FineTuningWorkload) -> None:
        self.counts = _training_counts(plan)
        self.target_hours, self.target_name = _target_hours(workload)
        self.model = model
        self.workload = workload
        self.method = workload.method if isinstance(workload, FineTuningWorkload) else "full"
        self.states = TrainingStates.of(
            model,
            method=self.method,
            optimizer=workload.optimizer,
            lora_rank=workload.lora_rank if isinstance(workload, FineTuningWorkload) else 16,
        )
        self.activations = Activations(model, workload.sequence_length)
        self.layouts = LayoutMemory(model, self.states, self.activations, full=self.method == "full")
        # Fine-tuning stacks (FSDP, DeepSpeed) move optimizer states to host memory when nothing else fits.
        self.offload = isinstance(workload, FineTuningWorkload) and self.method == "full"
        self._plan = plan
        # Everything but the deadline and the limits: requests of one shape share their speeds and layouts.
        self.shape = TrainingShape(
            kind=type(workload).__name__,
            method=self.method,
            optimizer=workload.optimizer,
            lora_rank=workload.lora_rank if isinstance(workload, FineTuningWorkload) else None,
            sequence_length=workload.sequence_length,
            precision=workload.precision,
            train_tokens=workload.train_tokens,
        )

    @cached_property
    def one_gpu_bytes(self) -> float:
        """What one GPU would hold with every layer recomputed (training_memory's, with its default LoRA rank)."""
        states = TrainingStates.of(self.model, method=self.method, optimizer=self.workload.optimizer)
        return states.weights_bytes(1, 1) + states.optimizer_bytes(1) + self.activations.bytes(1, self.model.layers)

    @cached_property
    def check(self) -> TrainingCheck:
        """What the checks before a GPU's layout search depend on besides the GPU."""
        plan = self._plan
        return TrainingCheck(
            shape=self.shape,
            counts=tuple(self.counts),
            offers=plan.offers_key,
            require_offer=plan.constraints.require_offer,
        )

    def speed(self, gpu: Gpu, scenario: Scenario) -> TrainingSpeed:
        """How fast the workload trains on this GPU in a scenario, for any layout."""
        return self._plan.derived(
            TrainingSpeedFact,
            lambda: TrainingSpeed(
                self.model,
                gpu,
                method=self.method,
                precision=self.workload.precision,
                train_tokens=self.workload.train_tokens,
                sequence_length=self.workload.sequence_length,
                scenario=scenario,
                fine_tuning=isinstance(self.workload, FineTuningWorkload),
            ),
            shape=self.shape,
            gpu=gpu.id,
            scenario=scenario,
        )

    def first_fitting(self, usable_bytes: float) -> int | None:
        """Index in `counts` of the fewest GPUs with a layout that fits in `usable_bytes` each; None if none does."""
        return self._plan.derived(
            TrainingFirstFact,
            lambda: next(
                (i for i, gpus in enumerate(self.counts) if fits_any(self.layouts, usable_bytes, gpus, self.offload)),
                None,
            ),
            shape=self.shape,
            usable_bytes=usable_bytes,
            counts=tuple(self.counts),
        )

    def machine_sizes(self, first: int) -> set[int]:
        """GPUs per machine the layouts from counts[first] on need."""
        return {min(gpus, GPUS_PER_NODE) for gpus in self.counts[first:]}

    def best(self, usable: float, gpu: Gpu, gpus: int) -> tuple[Found, Found | None] | None:
        """The fastest layout of `gpus` GPUs within `usable` bytes each in the expected scenario, and the runner-up."""
        return self._plan.derived(
            TrainingBestFact,
            lambda: search(self.layouts, self.speed(gpu, "expected"), usable, gpus, self.offload),
            shape=self.shape,
            gpu=gpu.id,
            usable=usable,
            gpus=gpus,
        )


def size_training(plan: Plan) -> TrainingSizing:
    """A training or fine-tuning request's sizing."""
    workload, model = plan.resolved.workload, plan.resolved.model
    assert isinstance(workload, TrainingWorkload | FineTuningWorkload) and isinstance(model, LlmModel)
    return TrainingSizing(plan, model, workload)


def training_sizing(plan: Plan) -> TrainingSizing:
    """The plan's training sizing (built once per plan)."""
    sizing = plan.sizing
    assert isinstance(sizing, TrainingSizing)
    return sizing


def _first_count(plan: Plan, sizing: TrainingSizing, gpu: Gpu, usable: float) -> int:
    """Index in the counts of the fewest GPUs that fit, once the GPU is known to run the precision and be rented."""
    precision_check(gpu, sizing.workload.precision)
    first = sizing.first_fitting(usable)
    if first is None:
        gpus = sizing.counts[-1]
        raise Excluded("does_not_fit", gpus=gpus, needed_gb=sizing.one_gpu_bytes / GB, usable_gb=usable * gpus / GB)
    require_renter(plan, gpu)
    require_host(plan, gpu, sizing.machine_sizes(first))
    return first


def _target_hours(workload: TrainingWorkload | FineTuningWorkload) -> tuple[float | None, str]:
    if isinstance(workload, TrainingWorkload):
        return (workload.target_days * 24 if workload.target_days else None), "target_days"
    return workload.target_hours, "target_hours"


def plan_training(plan: Plan, gpu: Gpu) -> Candidate:
    """The fewest GPUs that meet the deadline (or fit), with the fastest layout of that count."""
    workload = plan.resolved.workload
    model = plan.resolved.model
    assert isinstance(workload, TrainingWorkload | FineTuningWorkload) and isinstance(model, LlmModel)
    sizing = training_sizing(plan)
    target, target_name = sizing.target_hours, sizing.target_name
    usable = training_usable_bytes(gpu)
    first = plan.checked(sizing.check, gpu, lambda: _first_count(plan, sizing, gpu, usable))
    counts = sizing.counts[first:]
    expected = sizing.speed(gpu, "expected")
    found: tuple[Found, Found | None] | None = None
    fewer: Found | None = None  # the count before the chosen one, which missed the deadline
    for gpus in counts:
        at_count = sizing.best(usable, gpu, gpus)
        if at_count is None:
            continue
        fewer, found = (found[0] if found else None), at_count
        if target is None or at_count[0].hours <= target:
            break
    assert found is not None

    per_machine = min(found[0].gpus, GPUS_PER_NODE)
    rental = rental_for(plan, gpu, found[0].gpus, per_machine)
    if rental is not None and rental.gpus != found[0].gpus and plan.fixed_count is None:
        found = sizing.best(usable, gpu, rental.gpus) or found
    layout, runner_up = found
    gpus, shape = layout.gpus, layout.shape
    nodes = node_count(rental, gpus)
    check_limits(plan, gpus, nodes)

    recomputed = shape.recomputed_layers(model.layers)
    layout_args = (shape.pipeline, 1)
    runs = plan.derived(
        TrainingRunsFact,
        lambda: {
            s: sizing.speed(gpu, s).run(
                gpus,
                shape.tensor,
                gpu.interconnect.domain_gpus,  # gradients leave the NVLink domain over the network
                recomputed,
                *layout_args,
                zero=shape.zero,
                micro_batch=shape.micro_batch,
                offload=shape.offload,
            )
            for s in SCENARIOS
        },
        shape=sizing.shape,
        gpu=gpu.id,
        gpus=gpus,
        layout=shape,
    )
    unmet = [target_name] if target is not None and runs["expected"].hours > target else []
    weights, grads, optimizer = sizing.layouts.state_bytes(gpus, shape)
    activations = sizing.layouts.activation_bytes(shape)
    required = (weights + grads + optimizer + activations) * gpus
    capacity = usable * gpus
    data = gpus // (shape.tensor * shape.pipeline)
    step_tokens, micro_batches = expected.batch(gpus, shape.tensor, shape.pipeline, shape.micro_batch)
    global_batch = round(step_tokens / workload.sequence_length)
    per_stage = -(-model.layers // shape.pipeline)
    recompute: Literal["none", "partial", "full"] = (
        "none" if not shape.recompute else "full" if shape.recompute >= per_stage else "partial"
    )
    candidate = Candidate(
        gpu=gpu,
        gpu_count=gpus,
        nodes=nodes,
        parallelism=Parallelism(
            tensor=shape.tensor,
            pipeline=shape.pipeline,
            data=data,
            zero_stage=shape.zero,
            micro_batch=shape.micro_batch,
            global_batch=global_batch,
            recompute=recompute,
            offload=shape.offload,
        ),
        rental=rental,
        memory=MemoryUse(
            capacity_gb=rounded(capacity / GB),
            required_gb=rounded(required / GB),
            weights_gb=rounded(weights * gpus / GB),
            activations_gb=rounded(activations * gpus / GB),
            optimizer_gb=rounded((grads + optimizer) * gpus / GB),
            headroom_pct=headroom_pct(capacity, required),
        ),
        performance=PerformanceEstimate(
            tokens_per_second=as_range({s: r.tokens_per_s for s, r in runs.items()}),
            tokens_per_second_per_gpu=as_range({s: r.tokens_per_s / gpus for s, r in runs.items()}),
            run_hours=as_range({s: r.hours for s, r in runs.items()}),
            bound=runs["expected"].bound,
        ),
        unmet=unmet,
        perf_value=1.0 / runs["expected"].hours,
    )
    text = describe(shape, gpus, model.layers, plan.lang)
    if gpus == 1:
        candidate.reasons.append(plan.say("training_one_gpu", gpu=gpu.name, layout=text))
    else:
        candidate.reasons.append(plan.say("training_layout", gpus=gpus, layout=text))
    if candidate.memory.headroom_pct < THIN_HEADROOM_PCT:
        candidate.warnings.append(plan.say("thin_headroom", headroom=candidate.memory.headroom_pct))
    if workload.sequence_length > model.max_context:
        candidate.warnings.append(
            plan.say("beyond_context", length=workload.sequence_length, model=model.name, context=model.max_context)
        )
    candidate.layout_reason = _layout_reason(plan, layout, runner_up, fewer, target, expected)
    candidate.launch = training_launch(
        model, candidate.parallelism, gpus, shape, workload, micro_batches=round(micro_batches), gpu=gpu
    )
    if gpus > 1 and gpu.interconnect.kind in ("pcie", "nvlink_bridge"):
        candidate.warnings.append(plan.say("no_nvlink_training", gpu=gpu.name))
    if gpus > gpu.interconnect.domain_gpus and model.params_b > 100:
        candidate.warnings.append(plan.say("infiniband"))  # inside an NVL72 rack the exchange stays on NVLink
    if runs["expected"].hours > 24 * 60:
        candidate.warnings.append(plan.say("long_run", days=runs["expected"].hours / 24))
    if workload.precision == "bf16" and not gpu.tflops.bf16:
        candidate.warnings.append(plan.say("fp16_for_bf16", gpu=gpu.name))
    if workload.precision in ("bf16", "fp16") and gpu.tflops.fp8 and sizing.method == "full":
        # FP8 speeds up the linear layers' GEMMs only (domain.performance.fp8_training).
        speedup = low_precision_speedup(model, gpu, "fp8", workload.sequence_length, "expected")
        if speedup > 1.2:
            candidate.reasons.append(plan.say("fp8_training", speedup=speedup, hours=runs["expected"].hours / speedup))
    candidate.assumptions = training_assumptions(
        plan,
        model,
        sizing.method,
        gpu,
        shape,
        gpus,
        nodes,
        global_batch,
        expected.bubble(shape.pipeline, micro_batches),
        expected,
    )
    return candidate


def _layout_reason(
    plan: Plan,
    layout: Found,
    runner_up: Found | None,
    fewer: Found | None,
    target: float | None,
    speed: TrainingSpeed,
) -> str:
    """Why this count (the fewest that meet the deadline, or fit) and why this layout over the runner-up."""
    if target is not None and fewer is not None:
        count = plan.say(
            "training_count_deadline", gpus=layout.gpus, hours=layout.hours, fewer=fewer.gpus, fewer_hours=fewer.hours
        )
    elif target is not None and layout.hours > target:
        count = plan.say("training_count_largest", gpus=layout.gpus, hours=layout.hours)
    else:
        count = plan.say("training_count_fewest", gpus=layout.gpus, hours=layout.hours)
    layers = plan.resolved.model.layers  # type: ignore[union-attr]
    chosen = describe(layout.shape, layout.gpus, layers, plan.lang)
    if runner_up is None:
        return count + " " + plan.say("training_layout_only", layout=chosen)
    cause = plan.derived(
        TrainingCauseFact,
        lambda: loss_cause(speed, layout, runner_up, layers),
        shape=training_sizing(plan).shape,
        gpu=speed.gpu.id,
        chosen=layout,
        runner_up=runner_up,
    )
    return (
        count
        + " "
        + plan.say(
            "training_layout_over",
            layout=chosen,
            hours=layout.hours,
            other=describe(runner_up.shape, runner_up.gpus, layers, plan.lang),
            other_hours=runner_up.hours,
            cause=plan.say(cause),
        )
    )
