"""What a training option says about its layout: why it beat the runner-up, and the assumptions behind it."""

from __future__ import annotations

from domain.catalog import Gpu, LlmModel
from domain.hardware.collectives import INTER_NODE_GBPS
from domain.hardware.efficiency import shared
from domain.narrative.explain import say
from domain.narrative.factor_assumptions import stated
from domain.performance.fp8_training import gemm_time_share, low_precision_speedup
from domain.performance.lora_adapters import AdapterCost
from domain.performance.training import Shape, TrainingSpeed, training_factors
from domain.performance.training_flops import linear_flops_per_param
from domain.planning.plan import Plan
from domain.planning.training_layouts import Found
from domain.workloads.requests import Lang
from domain.workloads.results import Assumption

ZERO_SOURCE = "Rajbhandari et al. 2020, ZeRO (arXiv:1910.02054)"
ADAPTER_SOURCE = (
    "Passes counted from PEFT's lora.Linear and NeMo 2.1's LoRALinear and ParallelLinearAdapter "
    "(github.com/NVIDIA/NeMo/blob/633cb602777bffefbe12066b0c915c87e7b469e9/nemo/collections/llm/peft/lora.py); "
    "TRL's ModelConfig: lora_dropout 0.05 (github.com/huggingface/trl, trl/trainer/model_config.py)"
)


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
    speed: TrainingSpeed,
) -> list[Assumption]:
    """Compute, efficiency, layout and optimizer-state assumptions of a training option."""
    workload = plan.resolved.workload
    sequence = workload.sequence_length  # type: ignore[union-attr]
    optimizer = workload.optimizer  # type: ignore[union-attr]
    recomputed = shape.recomputed_layers(model.layers)
    per_token = speed.flops_per_token
    data = gpus // (shape.tensor * shape.pipeline)
    lang = plan.lang
    if data > 1:
        zero = {0: say("a_replicated", lang), 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3/FSDP"}[shape.zero]
        sharding = say("a_sharding_data", lang, zero=zero, data=data)
        if shape.offload:
            sharding += say("a_offloaded", lang)
    else:
        sharding = say("a_one_copy" if gpus > 1 else "a_one_gpu", lang)
    layout = (
        say(
            "a_layout",
            lang,
            sharding=sharding,
            tp=shape.tensor,
            pp=shape.pipeline,
            dp=data,
            micro=shape.micro_batch,
            sequence=sequence,
            global_batch=global_batch,
        )
        + (say("a_bubble", lang, bubble=100 * bubble) if shape.pipeline > 1 else "")
        + (say("a_paged", lang) if method == "qlora" else "")
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
            value=say(
                "a_compute",
                lang,
                linear=linear_flops_per_param(method),
                flops=per_token,
                recompute=say("a_recompute", lang, factor=speed.hardware_flops(recomputed) / per_token)
                if recomputed
                else "",
            ),
            source="Kaplan et al. 2020 (arXiv:2001.08361): 6ND; Narayanan et al. 2021 (arXiv:2104.04473): the logit "
            "layer's FLOPs, none for the input embedding; Korthikanti et al. 2022 (arXiv:2205.05198)"
            + (
                "; Hu et al. 2021 (arXiv:2106.09685): frozen weights need no weight gradients"
                if method != "full"
                else ""
            ),
        ),
        # The efficiency factors the speed model read (the MFU, and FP8's, MoE's and the adapters' where they apply).
        *(stated(use) for use in training_factors(speed, gpus, shape.tensor)),
        Assumption(name="sharding", value=layout, source=sources),
        Assumption(
            name="optimizer_states",
            value=say("a_optimizer", lang, optimizer=optimizer, bytes=state_bytes),
            source="Rajbhandari et al. 2020 (arXiv:1910.02054): 16 bytes per parameter with mixed-precision Adam",
        ),
    ]
    if speed.adapters is not None:
        assumptions.append(_adapter_assumption(speed.adapters, shape.tensor, lang))
    precision = workload.precision  # type: ignore[union-attr]
    if precision in ("fp8", "fp4"):
        share = gemm_time_share(model, sequence, "expected")
        speedup = low_precision_speedup(model, gpu, precision, sequence, "expected")
        assumptions.append(
            Assumption(
                name="low_precision_share",
                value=say("a_low_precision", lang, precision=precision, share=share, speedup=speedup),
                source=shared("fp8_train_other_work").source,
            )
        )
    if nodes > 1:
        assumptions.append(
            Assumption(
                name="inter_node_bandwidth",
                value=say("a_inter_node", lang, gbps=INTER_NODE_GBPS.describe()),
                source=INTER_NODE_GBPS.source,
            )
        )
    return assumptions


def _adapter_assumption(branches: AdapterCost, tensor_parallel: int, lang: Lang) -> Assumption:
    return Assumption(
        name="adapter_branches",
        value=say(
            "a_adapters",
            lang,
            targets=say("a_adapters_qkv" if branches.targets == "qkv" else "a_adapters_all", lang),
            dropout=say("a_adapters_dropout", lang) if branches.dropout else "",
            mb=branches.bytes_per_token(tensor_parallel) / 1e6,
            gbps=branches.bytes_per_s / 1e9,
        ),
        source=ADAPTER_SOURCE,
    )
