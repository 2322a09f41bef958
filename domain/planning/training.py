"""Training and fine-tuning: the GPU count, tensor parallel size and recomputation that meet the deadline cheapest."""

from __future__ import annotations

from functools import cached_property
from typing import NamedTuple

from domain.catalog import Gpu, LlmModel
from domain.efficiency import FP8_TRAIN, INTER_NODE_GBPS, SCENARIOS, Scenario, factor
from domain.estimates import Assumption, MemoryUse, Parallelism, PerformanceEstimate
from domain.memory import GB, Activations, TrainingMemory, TrainingStates, training_usable_bytes
from domain.performance import TrainingSpeed, training_flops_per_token
from domain.planning.launch import training_launch
from domain.planning.plan import GPUS_PER_NODE, Candidate, Excluded, Plan, as_range, headroom_pct, rounded
from domain.planning.rentals import check_limits, node_count, precision_check, rental_for, require_host, require_renter
from domain.workloads import FineTuningWorkload, TrainingWorkload

TENSOR_PARALLEL = (1, 2, 4, 8)
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


class _TrainingLayout(NamedTuple):
    gpus: int
    tensor: int
    recompute_layers: int
    hours: float


class TrainingSizing:
    """A training request's memory figures that do not depend on the GPU, and its fitting layouts by GPU memory.

    Training memory depends on the GPU only through the memory it may fill, so GPUs with equal memory share the
    layouts found for the first of them.
    """

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
        self._sharding: dict[int, list[tuple[int, float, float]]] = {}
        self._shapes: dict[tuple[float, int], list[tuple[int, int]]] = {}
        self._first: dict[float, int | None] = {}
        self._speeds: dict[tuple[str, Scenario], TrainingSpeed] = {}

    @cached_property
    def one_gpu_bytes(self) -> float:
        """What one GPU would hold with every layer recomputed (training_memory's, with its default LoRA rank)."""
        states = TrainingStates.of(self.model, method=self.method, optimizer=self.workload.optimizer)
        return states.weights_bytes(1, 1) + states.optimizer_bytes(1) + self.activations.bytes(1, self.model.layers)

    def speed(self, gpu: Gpu, scenario: Scenario) -> TrainingSpeed:
        """How fast the workload trains on this GPU in a scenario, for any layout."""
        speed = self._speeds.get((gpu.id, scenario))
        if speed is None:
            speed = self._speeds[(gpu.id, scenario)] = TrainingSpeed(
                self.model,
                gpu,
                method=self.method,
                precision=self.workload.precision,
                train_tokens=self.workload.train_tokens,
                sequence_length=self.workload.sequence_length,
                scenario=scenario,
            )
        return speed

    def first_fitting(self, usable_bytes: float) -> int | None:
        """Index in `counts` of the fewest GPUs with a layout that fits in `usable_bytes` each; None if none does."""
        if usable_bytes not in self._first:
            self._first[usable_bytes] = next(
                (i for i, gpus in enumerate(self.counts) if self.shapes(usable_bytes, gpus)), None
            )
        return self._first[usable_bytes]

    def machine_sizes(self, first: int) -> set[int]:
        """GPUs per machine the layouts from counts[first] on need."""
        return {min(gpus, GPUS_PER_NODE) for gpus in self.counts[first:]}

    def shapes(self, usable_bytes: float, gpus: int) -> list[tuple[int, int]]:
        """(tensor parallel, recomputed layers) of every layout of `gpus` GPUs that fits in `usable_bytes` each."""
        key = (usable_bytes, gpus)
        shapes = self._shapes.get(key)
        if shapes is None:
            shapes = self._shapes[key] = self._fitting(usable_bytes, gpus)
        return shapes

    def _fitting(self, usable_bytes: float, gpus: int) -> list[tuple[int, int]]:
        shapes = []
        for tensor, weights, optimizer in self._sharded(gpus):
            recompute_layers = self.activations.recompute_layers_needed(usable_bytes - weights - optimizer, tensor)
            if recompute_layers <= self.model.layers:
                shapes.append((tensor, recompute_layers))
        return shapes

    def _sharded(self, gpus: int) -> list[tuple[int, float, float]]:
        """(tensor parallel, weights, optimizer states) per GPU for every tensor-parallel size `gpus` GPUs allow."""
        sharded = self._sharding.get(gpus)
        if sharded is None:
            sharded = self._sharding[gpus] = [
                (tensor, self.states.weights_bytes(gpus, tensor), self.states.optimizer_bytes(gpus))
                for tensor in TENSOR_PARALLEL
                if tensor <= min(gpus, GPUS_PER_NODE) and not gpus % tensor and not self.model.attention_heads % tensor
            ]
        return sharded

    def memory(self, usable_bytes: float, gpus: int, tensor: int, recompute_layers: int) -> TrainingMemory:
        """Per-GPU memory of one layout (what `training_memory` gives for it)."""
        return TrainingMemory(
            usable_bytes=usable_bytes,
            weights_bytes=self.states.weights_bytes(gpus, tensor),
            optimizer_bytes=self.states.optimizer_bytes(gpus),
            activations_bytes=self.activations.bytes(tensor, recompute_layers),
        )


def _training_layout(plan: Plan, usable: float, speed: TrainingSpeed, gpus: int) -> _TrainingLayout | None:
    """The fastest layout of `gpus` GPUs that fits in `usable` bytes each (the first on equal hours); None if none
    fits."""
    best: _TrainingLayout | None = None
    for tensor, recompute_layers in training_sizing(plan).shapes(usable, gpus):
        hours = speed.hours(gpus, tensor, speed.gpu.interconnect.domain_gpus, recompute_layers)
        if best is None or hours < best.hours:
            best = _TrainingLayout(gpus, tensor, recompute_layers, hours)
    return best


def training_sizing(plan: Plan) -> TrainingSizing:
    sizing = plan.memo.get("training")
    if sizing is None:
        workload, model = plan.resolved.workload, plan.resolved.model
        assert isinstance(workload, TrainingWorkload | FineTuningWorkload) and isinstance(model, LlmModel)
        sizing = plan.memo["training"] = TrainingSizing(plan, model, workload)
    return sizing


def _target_hours(workload: TrainingWorkload | FineTuningWorkload) -> tuple[float | None, str]:
    if isinstance(workload, TrainingWorkload):
        return (workload.target_days * 24 if workload.target_days else None), "target_days"
    return workload.target_hours, "target_hours"


def plan_training(plan: Plan, gpu: Gpu) -> Candidate:
    """The fewest GPUs that meet the deadline (or fit), with the fastest layout of that count."""
    workload = plan.resolved.workload
    model = plan.resolved.model
    assert isinstance(workload, TrainingWorkload | FineTuningWorkload) and isinstance(model, LlmModel)
    precision_check(gpu, workload.precision)
    sizing = training_sizing(plan)
    target, target_name = sizing.target_hours, sizing.target_name
    usable = training_usable_bytes(gpu)
    first = sizing.first_fitting(usable)
    if first is None:
        raise Excluded("does_not_fit", gpus=sizing.counts[-1], needed_gb=sizing.one_gpu_bytes / GB)
    counts = sizing.counts[first:]
    require_renter(plan, gpu)
    require_host(plan, gpu, sizing.machine_sizes(first))
    expected = sizing.speed(gpu, "expected")
    layout: _TrainingLayout | None = None
    fewer: _TrainingLayout | None = None  # the count before the chosen one, which missed the deadline
    for gpus in counts:
        found = _training_layout(plan, usable, expected, gpus)
        if found is None:
            continue
        fewer, layout = layout, found
        if target is None or found.hours <= target:
            break
    assert layout is not None

    per_machine = min(layout.gpus, GPUS_PER_NODE)
    rental = rental_for(plan, gpu, layout.gpus, per_machine)
    if rental is not None and rental.gpus != layout.gpus and plan.fixed_count is None:
        layout = _training_layout(plan, usable, expected, rental.gpus) or layout
    gpus = layout.gpus
    nodes = node_count(rental, gpus)
    check_limits(plan, gpus, nodes)

    domain = gpu.interconnect.domain_gpus  # gradients leave the NVLink domain, not the machine, over the network
    runs = {s: sizing.speed(gpu, s).run(gpus, layout.tensor, domain, layout.recompute_layers) for s in SCENARIOS}
    unmet = [target_name] if target is not None and runs["expected"].hours > target else []
    mem = sizing.memory(usable, gpus, layout.tensor, layout.recompute_layers)
    capacity = mem.usable_bytes * gpus
    required = mem.required_bytes * gpus
    candidate = Candidate(
        gpu=gpu,
        gpu_count=gpus,
        nodes=nodes,
        parallelism=Parallelism(tensor=layout.tensor, pipeline=1, data=gpus // layout.tensor),
        rental=rental,
        memory=MemoryUse(
            capacity_gb=rounded(capacity / GB),
            required_gb=rounded(required / GB),
            weights_gb=rounded(mem.weights_bytes * gpus / GB),
            activations_gb=rounded(mem.activations_bytes * gpus / GB),
            optimizer_gb=rounded(mem.optimizer_bytes * gpus / GB),
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
    tp_text = recompute_text = ""
    if layout.tensor > 1:
        tp_text = f", tensor parallel {layout.tensor}" if plan.lang == "en" else f"，张量并行 {layout.tensor}"
    if layout.recompute_layers:
        recompute_text = (
            f", activations of {layout.recompute_layers} of {model.layers} layers recomputed"
            if plan.lang == "en"
            else f"，{model.layers} 层中 {layout.recompute_layers} 层激活重计算"
        )
    if gpus == 1:
        candidate.reasons.append(plan.say("training_one_gpu", gpu=gpu.name, recompute_text=recompute_text))
    else:
        candidate.reasons.append(plan.say("training_layout", gpus=gpus, tp_text=tp_text, recompute_text=recompute_text))
    if candidate.memory.headroom_pct < THIN_HEADROOM_PCT:
        candidate.warnings.append(plan.say("thin_headroom", headroom=candidate.memory.headroom_pct))
    if workload.sequence_length > model.max_context:
        candidate.warnings.append(
            plan.say("beyond_context", length=workload.sequence_length, model=model.name, context=model.max_context)
        )
    candidate.layout_reason = _layout_reason(plan, layout, fewer, target)
    candidate.launch = training_launch(
        model, candidate.parallelism, gpus, 1, layout.recompute_layers, workload.sequence_length
    )
    if gpus > 1 and gpu.interconnect.kind in ("pcie", "nvlink_bridge"):
        candidate.warnings.append(plan.say("no_nvlink_training", gpu=gpu.name))
    if nodes > 1 and model.params_b > 100:
        candidate.warnings.append(plan.say("infiniband"))
    if runs["expected"].hours > 24 * 60:
        candidate.warnings.append(plan.say("long_run", days=runs["expected"].hours / 24))
    if workload.precision == "bf16" and not gpu.tflops.bf16:
        candidate.warnings.append(plan.say("fp16_for_bf16", gpu=gpu.name))
    if workload.precision in ("bf16", "fp16") and gpu.tflops.fp8 and sizing.method == "full":
        # Transformer Engine's FP8 recipes reach about the BF16 MFU of the FP8 peak on GPUs that have one.
        half = gpu.tflops.bf16 or gpu.tflops.fp16 or gpu.tflops.fp8
        speedup = gpu.tflops.fp8 / half * FP8_TRAIN.expected
        if speedup > 1.2:
            candidate.reasons.append(plan.say("fp8_training", speedup=speedup, hours=runs["expected"].hours / speedup))
    mfu = factor(gpu, "train_mfu")
    per_token = training_flops_per_token(model, workload.sequence_length)
    candidate.assumptions = [
        Assumption(
            name="compute",
            value=f"6ND + attention = {per_token:.3g} FLOP per token"
            + (
                f", x{1 + layout.recompute_layers / (3 * model.layers):.2f} for recomputed layers"
                if layout.recompute_layers
                else ""
            ),
            source="Kaplan et al. 2020 (arXiv:2001.08361): 6ND; Korthikanti et al. 2022 (arXiv:2205.05198)",
        ),
        Assumption(name="train_mfu", value=mfu.describe(), source=mfu.source),
        Assumption(
            name="sharding",
            value=(
                f"ZeRO-3 over {gpus} GPUs, tensor parallel {layout.tensor}, " if gpus > 1 else "one GPU, no sharding, "
            )
            + f"micro-batch 1 x {workload.sequence_length} tokens"
            + (", paged optimizer states in CPU memory" if sizing.method == "qlora" else ""),
            source="Rajbhandari et al. 2020, ZeRO (arXiv:1910.02054); Dettmers et al. 2023, QLoRA (arXiv:2305.14314)",
        ),
        Assumption(
            name="optimizer_states",
            value=f"{workload.optimizer}: {16 if workload.optimizer == 'adamw' else 10} bytes per trainable parameter",
            source="Rajbhandari et al. 2020, ZeRO (arXiv:1910.02054): 16 bytes per parameter with mixed-precision Adam",
        ),
    ]
    if nodes > 1:
        candidate.assumptions.append(
            Assumption(
                name="inter_node_bandwidth",
                value=f"{INTER_NODE_GBPS.describe()} GB/s per GPU",
                source=INTER_NODE_GBPS.source,
            )
        )
    return candidate


# ---------------------------------------------------------------- image generation


def _layout_reason(plan: Plan, layout: _TrainingLayout, fewer: _TrainingLayout | None, target: float | None) -> str:
    """Why this count: the fewest that meet the deadline (what the next fewer take), or the fewest that fit."""
    if target is not None and fewer is not None:
        return plan.say(
            "training_count_deadline", gpus=layout.gpus, hours=layout.hours, fewer=fewer.gpus, fewer_hours=fewer.hours
        )
    if target is not None and layout.hours > target:
        return plan.say("training_count_largest", gpus=layout.gpus, hours=layout.hours)
    return plan.say("training_count_fewest", gpus=layout.gpus, hours=layout.hours)
