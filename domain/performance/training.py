"""Training run times: 6ND at the efficiency table's factors, the stack, the layout's exchanges and its bubble."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Literal, NamedTuple

from domain.catalog import Gpu, LlmModel
from domain.hardware.collectives import INTER_NODE_GBPS, PCIE_GBPS
from domain.hardware.efficiency import Factor, FactorUse, Scenario, SharedName, factor, shared
from domain.hardware.links import link_gbps
from domain.hardware.peaks import compute_tflops
from domain.performance.fp8_training import low_precision_speedup
from domain.performance.layout import Bound
from domain.performance.lora_adapters import TRL_DROPOUT, TRL_TARGETS, AdapterCost, AdapterTargets
from domain.performance.memo import Memo
from domain.performance.memory import moe_split
from domain.performance.training_flops import forward_flops_per_token, training_flops_per_token

# A global batch of ~4M tokens per optimizer step, growing with the data-parallel ranks up to Llama 3's 16M
# (arXiv:2407.21783, Table 4: 16M tokens per batch on 8k and 16k H100).
TRAIN_BATCH_TOKENS = 4e6
MAX_BATCH_TOKENS = 16 * 2**20
# Share of the data-parallel exchange hidden behind compute (bucketed all-reduce / FSDP prefetch).
COMM_OVERLAP = 0.7
# Virtual pipeline stages per GPU of an interleaved schedule (Megatron-LM's usual 4-8), and the micro-batches per
# data-parallel rank and step that large runs keep (Llama 3: 16M-token batches at 16k GPUs).
PIPELINE_VIRTUAL_STAGES = 8
MICRO_BATCHES_PER_STEP = 16


# The training code a run executes: Megatron-Core with Transformer Engine's fused kernels and overlapped exchanges, or a
# PyTorch-native stack (FSDP/FSDP2 over PyTorch's or compiled kernels), which reaches a share of its MFU
# (`pytorch_train`).
Stack = Literal["megatron", "pytorch"]
PYTORCH_ENGINES = frozenset({"torchtitan", "nemo-automodel", "trl", "accelerate"})


def engine_stack(engine: str) -> Stack:
    """The training code of an engine: PyTorch-native for the FSDP stacks, Megatron-Core for the rest."""
    return "pytorch" if engine in PYTORCH_ENGINES else "megatron"


def training_launcher(fine_tuning_method: str | None, gpus: int) -> Literal["trl", "megatron"]:
    """The launch an estimate gives: TRL for adapters and one-GPU fine-tuning, Megatron-LM for the rest."""
    # Megatron-LM runs every layout of several GPUs faster (pytorch_train), data parallel alone included.
    if fine_tuning_method is not None and (fine_tuning_method != "full" or gpus == 1):
        return "trl"
    return "megatron"


# The adapters' factors of a fine-tuning method, in the order they apply (LoRA's skipped weight gradients are in its
# FLOPs, training_flops_per_token).
ADAPTER_FACTORS: dict[str, tuple[SharedName, ...]] = {
    "qlora": ("qlora_slowdown",),
}


@dataclass(frozen=True)
class TrainingRun:
    """Wall-clock time of a training or fine-tuning run in one scenario."""

    hours: float
    tokens_per_s: float
    bound: Bound


class TrainingSpeed:
    """A training workload of one model on one GPU in one scenario: everything a run's time needs but the layout."""

    # A search over layouts builds this once per GPU instead of once per layout; the efficiency of each tensor-parallel
    # size and the link of each GPU count are worked out once, when first used.

    __slots__ = (
        "_link_gbps",
        "_tensor_mfu",
        "adapter_factors",
        "adapters",
        "exchanges_gradients",
        "expert_share",
        "factors",
        "flops_per_token",
        "forward_flops",
        "gpu",
        "inter_node_gbps",
        "launch_method",
        "layers",
        "mfu",
        "params",
        "peak_tflops",
        "precision",
        "pytorch",
        "scenario",
        "sequence_length",
        "stack",
        "tp_overlap",
        "tp_ratio",
        "train_tokens",
        "work_s",
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
        fine_tuning: bool = False,
        stack: Stack | None = None,
        attention_tokens: int = 0,
        tp_comm_overlap: bool = True,
        adapter_targets: AdapterTargets = TRL_TARGETS,
        adapter_dropout: bool = TRL_DROPOUT > 0,
    ) -> None:
        self.gpu = gpu
        self.train_tokens = train_tokens
        self.layers = model.layers
        # Attention spans one sample: the sequence, or each of the short samples packed into it (attention_tokens).
        span = attention_tokens or sequence_length
        self.flops_per_token = training_flops_per_token(model, span, method)
        self.forward_flops = forward_flops_per_token(model, span)
        # FP8 speeds up the linear layers' GEMMs only: the run is a 16-bit run sped up by that share.
        low_precision = precision in ("fp8", "fp4")
        peak = (compute_tflops(gpu, "bf16") if low_precision else None) or compute_tflops(gpu, precision)
        self.peak_tflops: float = peak or 1.0
        # The compute efficiency's factors (the first before the cost of tensor parallelism), multiplied in order.
        efficiency = [factor(gpu, "train_mfu")]
        if model.moe is not None:
            efficiency.append(shared("moe_train"))
        self.mfu = math.prod(item.at(scenario) for item in efficiency)
        if low_precision:
            self.mfu *= low_precision_speedup(model, gpu, precision, span, scenario)
        self.sequence_length = sequence_length
        # QLoRA's dequantisation.
        adapters = [shared(name) for name in ADAPTER_FACTORS.get(method, ())]
        self.adapter_factors: tuple[float, ...] = tuple(adapter.at(scenario) for adapter in adapters)
        # The adapters' own branches, beside the frozen GEMMs (lora_adapters.py; the TRL command's: every linear layer,
        # with a dropout on the input).
        self.adapters = (
            AdapterCost(model, gpu, adapter_targets, dropout=adapter_dropout, scenario=scenario)
            if method in ("lora", "qlora")
            else None
        )
        self.precision = precision
        # Every table factor this speed model reads: what its estimate states (the stack's where a layout runs it).
        gain = [shared("fp8_train_other_work")] if low_precision else []  # FP8's share of the step (fp8_training.py)
        self.factors: tuple[Factor, ...] = (*efficiency, *gain, *adapters)
        # The stack a source ran, else (None) the one each layout's launch command runs.
        self.stack = stack
        self.launch_method = method if fine_tuning else None
        self.pytorch = shared("pytorch_train")
        self.scenario: Scenario = scenario
        # Adapter gradients are tiny: LoRA and QLoRA exchange only the frozen weights, and only when sharded.
        self.exchanges_gradients = method == "full"
        # Seconds of the whole run on one GPU at full peak, adapters' factors included: what layouts divide.
        self.work_s = train_tokens * self.flops_per_token / (self.peak_tflops * 1e12)
        for slowdown in self.adapter_factors:
            self.work_s *= slowdown
        self.params = model.params_b * 1e9
        # Tensor (sequence) parallelism moves 8 all-gathers or reduce-scatters of the 2-byte activations per layer
        # and token (4 forward, 4 backward; Korthikanti et al. 2022, arXiv:2205.05198), (t - 1) / t of them over
        # the link, against 1 / t of the layer's FLOPs: exchange over compute time per unit of bandwidth and t - 1.
        # The share of it hidden behind the GEMMs where the run overlaps it (Transformer Engine's userbuffers).
        self.tp_overlap = shared("tp_overlap") if tp_comm_overlap else None
        # Megatron-Core's adapters under sequence parallelism gather their input (or scatter their output) once more
        # each way; PyTorch-native LoRA keeps the branch in the layer's own sharding.
        gathered = self.adapters.exchanging if self.adapters is not None and stack == "megatron" else 0
        exchanges = 8 + 2 * gathered
        self.tp_ratio = (
            2.0
            * exchanges
            * model.hidden_size
            * model.layers
            * self.peak_tflops
            * 1e12
            * self.mfu
            / self.flops_per_token
        )
        # (always-held, routed-expert) parameters: expert parallelism splits only the second
        base = moe_split(model)[0]
        self.expert_share = (base, self.params - base)
        self.inter_node_gbps = INTER_NODE_GBPS.at(scenario)
        # Pure functions of this speed model (fixed above) and a group size.
        self._tensor_mfu = Memo(self._mfu_at)
        self._link_gbps = Memo(partial(link_gbps, gpu))

    def run(
        self,
        gpus: int,
        tensor_parallel: int,
        gpus_per_node: int,
        recompute_layers: int,
        pipeline: int = 1,
        expert: int = 1,
        *,
        zero: int = 1,
        micro_batch: int = 1,
        offload: bool = False,
        context: int = 1,
        global_batch: int = 0,
    ) -> TrainingRun:
        """The run on `gpus` GPUs, C / (n x peak x MFU) plus the exposed exchanges; ZeRO-1 unless told."""
        compute_s, comm_s = self.seconds(
            gpus,
            tensor_parallel,
            gpus_per_node,
            recompute_layers,
            pipeline,
            expert,
            zero,
            micro_batch,
            offload,
            context,
            global_batch,
        )
        seconds = compute_s + comm_s
        return TrainingRun(
            hours=seconds / 3600,
            tokens_per_s=self.train_tokens / seconds,
            bound="interconnect" if comm_s > 0.25 * compute_s else "compute",
        )

    def hours(self, gpus: int, tensor_parallel: int, gpus_per_node: int, recompute_layers: int) -> float:
        """The run's hours alone, as `run` gives them: what a layout search compares."""
        compute_s, comm_s = self.seconds(gpus, tensor_parallel, gpus_per_node, recompute_layers)
        return (compute_s + comm_s) / 3600

    def tensor_mfu(self, tensor_parallel: int) -> float:
        """MFU at this tensor-parallel size: the family's, less the tensor-parallel exchange compute does not hide."""
        return self._tensor_mfu(tensor_parallel)  # type: ignore[no-any-return]

    def _mfu_at(self, tensor_parallel: int) -> float:
        return self.mfu * _tensor_parallel_efficiency(self, tensor_parallel)

    def hardware_flops(self, recompute_layers: int) -> float:
        """FLOPs a step runs per token: the model's, and the forward pass again for each recomputed layer."""
        return self.flops_per_token + self.forward_flops * recompute_layers / self.layers

    def stack_of(self, gpus: int) -> Stack:
        """The training code a run on `gpus` GPUs runs: the source's where one is stated, else its launch command's."""
        if self.stack is not None:
            return self.stack
        return "pytorch" if training_launcher(self.launch_method, gpus) == "trl" else "megatron"

    def batch(
        self,
        gpus: int,
        tensor_parallel: int,
        pipeline: int,
        micro_batch: int,
        context: int = 1,
        global_batch: int = 0,
    ) -> tuple[float, float]:
        """(tokens per optimizer step, micro-batches per data-parallel rank and step); `global_batch` in sequences."""
        # Context-parallel ranks share one sequence.
        data_parallel = max(1, gpus // (tensor_parallel * pipeline * context))
        per_micro_batch = data_parallel * micro_batch * self.sequence_length
        # The global batch grows with the data-parallel ranks (Llama 3: 4M tokens, 16M at 8k-16k GPUs).
        step_tokens = min(MAX_BATCH_TOKENS, max(TRAIN_BATCH_TOKENS, MICRO_BATCHES_PER_STEP * per_micro_batch))
        if global_batch:
            step_tokens = global_batch * self.sequence_length
        micro_batches = max(1.0, round(step_tokens / per_micro_batch))
        return micro_batches * per_micro_batch, micro_batches

    def compute_bound_hours(self, gpus: int, tensor_parallel: int, pipeline: int) -> float:
        """Hours of compute alone, with no recomputation and micro-batches of 1: no layout of these sizes is faster."""
        # Larger micro-batches only lengthen the bubble.
        _, micro_batches = self.batch(gpus, tensor_parallel, pipeline, 1)
        compute_s = self.work_s / (gpus * self.tensor_mfu(tensor_parallel))
        return compute_s * (1 + self.bubble(pipeline, micro_batches)) / 3600

    def bubble(self, pipeline: int, micro_batches: float) -> float:
        """Interleaved 1F1B schedule: the bubble's share of a step, (p-1) / (micro-batches x virtual stages)."""
        if pipeline <= 1:
            return 0.0
        return (pipeline - 1) / (virtual_stages(self.layers, pipeline) * micro_batches)

    def seconds(
        self,
        gpus: int,
        tensor_parallel: int,
        gpus_per_node: int,
        recompute_layers: int,
        pipeline: int = 1,
        expert: int = 1,
        zero: int = 1,
        micro_batch: int = 1,
        offload: bool = False,
        context: int = 1,
        global_batch: int = 0,
    ) -> tuple[float, float]:
        """(compute seconds, exposed data-parallel and offload exchange seconds)."""
        mfu = self.tensor_mfu(tensor_parallel)
        if self.stack_of(gpus) == "pytorch":
            mfu *= self.pytorch.at(self.scenario)
        compute_s = self.train_tokens * self.hardware_flops(recompute_layers) / (gpus * self.peak_tflops * 1e12 * mfu)
        for slowdown in self.adapter_factors:
            compute_s *= slowdown
        if self.adapters is not None:
            compute_s += self.adapters.seconds(
                self.train_tokens, gpus, tensor_parallel, min(1.0, recompute_layers / self.layers)
            )

        step_tokens, micro_batches = self.batch(gpus, tensor_parallel, pipeline, micro_batch, context, global_batch)
        steps = max(1.0, self.train_tokens / step_tokens)
        compute_s *= 1 + self.bubble(pipeline, micro_batches)
        model_shard = tensor_parallel * pipeline
        data_parallel = max(1, gpus // model_shard)
        # Offloaded optimizer states: the rank's bf16 gradients go to the host and its weights come back over PCIe
        # every step, after the backward pass (ZeRO-Offload, Ren et al. 2021, arXiv:2101.06840).
        offload_s = steps * 4.0 * self.params / (model_shard * data_parallel) / (PCIE_GBPS * 1e9) if offload else 0.0
        sharded_frozen = not self.exchanges_gradients and zero == 3
        if data_parallel <= 1 or not (self.exchanges_gradients or sharded_frozen):
            return compute_s, offload_s
        # Frozen weights under ZeRO-3 are gathered for forward and backward, with no gradient to reduce.
        passes = 2.0 * micro_batches if sharded_frozen else zero_passes(zero, micro_batches)
        # 2-byte values of the parameters this rank holds: a tensor x pipeline shard, with routed experts split over
        # the expert-parallel ranks.
        base, experts = self.expert_share
        held = (base + experts / expert) / model_shard
        volume = passes * 2.0 * held * (data_parallel - 1) / data_parallel
        gbps = self.inter_node_gbps if gpus > gpus_per_node else self._link_gbps(gpus)
        per_step = volume / (gbps * 1e9)
        exposed = max(0.0, per_step - COMM_OVERLAP * compute_s / steps)
        return compute_s, exposed * steps + offload_s


# Data-parallel passes over the rank's parameter shard per step, by ZeRO stage (Rajbhandari et al. 2020,
# arXiv:1910.02054): stage 0 all-reduces the gradients and stage 1 reduce-scatters them and all-gathers the updated
# weights (2 passes, once per step); stage 2 reduce-scatters the gradients of every micro-batch; stage 3 also
# all-gathers the weights for every micro-batch's forward and backward.
def zero_passes(zero: int, micro_batches: float) -> float:
    """Passes of the parameter shard over the data-parallel group per optimizer step."""
    if zero <= 1:
        return 2.0
    return micro_batches + 1 if zero == 2 else 3.0 * micro_batches


def virtual_stages(layers: int, pipeline: int) -> int:
    """Model chunks per pipeline rank of the interleaved schedule: Megatron-LM's usual 8, one layer each at most."""
    return max(1, min(PIPELINE_VIRTUAL_STAGES, layers // pipeline))


def _tensor_parallel_efficiency(speed: TrainingSpeed, tensor_parallel: int) -> float:
    """1 / (1 + exposed share): the activations' exchange over the link, tp_overlap of it hidden behind GEMMs."""
    if tensor_parallel == 1:
        return 1.0
    gbps = link_gbps(speed.gpu, tensor_parallel)
    ratio = speed.tp_ratio * (tensor_parallel - 1) / (gbps * 1e9)
    hidden = speed.tp_overlap.at(speed.scenario) if speed.tp_overlap is not None else 0.0
    return 1.0 / (1.0 + (1.0 - hidden) * ratio)


def training_factors(speed: TrainingSpeed, gpus: int, tensor_parallel: int) -> tuple[FactorUse, ...]:
    """The factors a training speed model read for a run on `gpus` GPUs at this tensor-parallel size, as stated."""
    used = speed.factors
    if speed.stack_of(gpus) == "pytorch":
        used = (*used, speed.pytorch)
    if tensor_parallel > 1 and speed.tp_overlap is not None:
        used = (*used, speed.tp_overlap)
    uses = tuple(FactorUse(item.name, item.family, speed.precision, item) for item in used)
    if speed.adapters is None:
        return uses
    # The LoRA branches move their bytes at the share of the bandwidth a dense decode step reaches.
    bandwidth = speed.adapters.bandwidth
    return (*uses, FactorUse("lora_branch_bandwidth", bandwidth.family, speed.precision, bandwidth))


class Shape(NamedTuple):
    """One layout of a GPU count: parallel sizes, ZeRO stage, micro-batch, recomputed layers and optimizer offload."""

    # zero 3 = FSDP full shard; micro_batch is sequences per micro-batch; recompute is recomputed layers per pipeline
    # stage; offload: optimizer states live in host memory.

    tensor: int
    pipeline: int
    zero: int
    micro_batch: int
    recompute: int
    offload: bool = False

    def recomputed_layers(self, layers: int) -> int:
        """Recomputed layers over the whole model."""
        return min(layers, self.recompute * self.pipeline)
