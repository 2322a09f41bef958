"""What a training option says about its layout: why it beat the runner-up, and the assumptions behind it."""

from __future__ import annotations

from domain.catalog import Gpu, LlmModel
from domain.hardware.collectives import INTER_NODE_GBPS
from domain.hardware.efficiency import factor
from domain.performance.training import Shape, TrainingSpeed, training_flops_per_token
from domain.planning.plan import Plan
from domain.planning.training_layouts import Found
from domain.workloads.results import Assumption

ZERO_SOURCE = "Rajbhandari et al. 2020, ZeRO (arXiv:1910.02054)"


def _costs(speed: TrainingSpeed, found: Found, layers: int) -> dict[str, float]:
    """Each cost of a layout as a factor on its ideal compute time."""
    shape = found.shape
    recomputed = shape.recomputed_layers(layers)
    compute, exposed = speed.seconds(
        found.gpus,
        shape.tensor,
        speed.gpu.interconnect.domain_gpus,
        recomputed,
        shape.pipeline,
        1,
        shape.zero,
        shape.micro_batch,
        shape.offload,
    )
    _, micro_batches = speed.batch(found.gpus, shape.tensor, shape.pipeline, shape.micro_batch)
    return {
        "cause_tensor": speed.mfu / speed.tensor_mfu(shape.tensor),
        "cause_recompute": 1 + recomputed / (3 * layers),
        "cause_bubble": 1 + speed.bubble(shape.pipeline, micro_batches),
        "cause_exchange": 1 + exposed / compute,
    }


def loss_cause(speed: TrainingSpeed, chosen: Found, runner_up: Found, layers: int) -> str:
    """The message code of the cost that grows most from the chosen layout to the runner-up."""
    mine, theirs = _costs(speed, chosen, layers), _costs(speed, runner_up, layers)
    return max(mine, key=lambda name: theirs[name] / mine[name])


def training_assumptions(
    plan: Plan,
    model: LlmModel,
    method: str,
    gpu: Gpu,
    shape: Shape,
    gpus: int,
    nodes: int,
    global_batch: int,
    bubble: float,
) -> list[Assumption]:
    """Compute, efficiency, layout and optimizer-state assumptions of a training option."""
    workload = plan.resolved.workload
    sequence = workload.sequence_length  # type: ignore[union-attr]
    optimizer = workload.optimizer  # type: ignore[union-attr]
    recomputed = shape.recomputed_layers(model.layers)
    mfu = factor(gpu, "train_mfu")
    per_token = training_flops_per_token(model, sequence)
    data = gpus // (shape.tensor * shape.pipeline)
    if data > 1:
        zero = {0: "replicated", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3/FSDP"}[shape.zero]
        sharding = f"{zero} over {data} data-parallel ranks"
        if shape.offload:
            sharding += ", optimizer states offloaded to host memory"
    else:
        sharding = "one model copy, no data-parallel sharding" if gpus > 1 else "one GPU, no sharding"
    layout = (
        f"{sharding}; tensor {shape.tensor} x pipeline {shape.pipeline} x data {data}; micro-batch "
        f"{shape.micro_batch} x {sequence} tokens, global batch {global_batch} sequences"
        + (f", pipeline bubble {100 * bubble:.1f}% (interleaved 1F1B)" if shape.pipeline > 1 else "")
        + (", paged optimizer states in CPU memory" if method == "qlora" else "")
    )
    sources = "Narayanan et al. 2021 (arXiv:2104.04473): interleaved pipeline schedule"
    if data > 1:
        sources = f"{ZERO_SOURCE}; {sources}"
    if method == "qlora":
        sources += "; Dettmers et al. 2023, QLoRA (arXiv:2305.14314)"
    state_bytes = 16 if optimizer == "adamw" else 10
    assumptions = [
        Assumption(
            name="compute",
            value=f"6ND + attention = {per_token:.3g} FLOP per token"
            + (f", x{1 + recomputed / (3 * model.layers):.2f} for recomputed layers" if recomputed else ""),
            source="Kaplan et al. 2020 (arXiv:2001.08361): 6ND; Korthikanti et al. 2022 (arXiv:2205.05198)",
        ),
        Assumption(name="train_mfu", value=mfu.describe(), source=mfu.source),
        Assumption(name="sharding", value=layout, source=sources),
        Assumption(
            name="optimizer_states",
            value=f"{optimizer}: {state_bytes} bytes per trainable parameter",
            source="Rajbhandari et al. 2020 (arXiv:1910.02054): 16 bytes per parameter with mixed-precision Adam",
        ),
    ]
    if nodes > 1:
        assumptions.append(
            Assumption(
                name="inter_node_bandwidth",
                value=f"{INTER_NODE_GBPS.describe()} GB/s per GPU",
                source=INTER_NODE_GBPS.source,
            )
        )
    return assumptions
