"""The command that runs an option: the serving engine's for inference, the launcher's for training."""

from __future__ import annotations

from domain.catalog import Gpu, LlmModel
from domain.hardware.nodes import GPUS_PER_NODE
from domain.performance import mla
from domain.performance.layout import Layout
from domain.performance.serving import InstanceSpeed
from domain.performance.training import Shape, virtual_stages
from domain.workloads.requests import InferenceWorkload
from domain.workloads.results import Launch, Parallelism

# Checkpoints already stored in the weight precision need no quantization flag.
_NATIVE = {"fp8": "fp8", "mxfp4": "fp4", "bf16": "bf16", "fp16": "fp16", "fp32": "fp32"}
_QUANTIZATION = {"fp8": "fp8", "int8": "int8", "int4": "awq", "fp4": "mxfp4"}
AITER_ARCHITECTURES = frozenset({"CDNA 3", "CDNA 4"})


def hf_id(model: LlmModel) -> str:
    """The model's Hugging Face repository from its aliases, else its catalog id."""
    return next((alias for alias in model.aliases if "/" in alias), model.id)


def stage_span(layout: Layout, gpu: Gpu) -> tuple[int, int]:
    """(GPUs of one pipeline stage of a copy, NVLink domains of this GPU they span)."""
    stage = layout.gpus // layout.pipeline
    return stage, -(-stage // gpu.interconnect.domain_gpus)


def _span_comment(layout: Layout, gpu: Gpu) -> str:
    """Where a tensor or expert group wider than one 8-GPU node talks, as a note after the command."""
    group, domains = stage_span(layout, gpu)
    if group <= GPUS_PER_NODE:
        return ""
    domain = gpu.interconnect.domain_gpus
    if domains == 1:
        return f"  # each copy's {group}-GPU tensor/expert group inside one {domain}-GPU NVLink domain"
    exchange = "all-to-all" if layout.expert > 1 else "all-reduce"
    parts = f"{domains} nodes" if domain <= GPUS_PER_NODE else f"{domains} {domain}-GPU NVLink domains"
    return f"  # each copy's {group}-GPU tensor/expert group spans {parts}: {exchange} over the inter-node network"


def inference_launch(
    model: LlmModel,
    workload: InferenceWorkload,
    precision: str,
    kv_precision: str,
    speed: InstanceSpeed,
    copies: int,
    batch_cap: int,
) -> Launch:
    """`vllm serve`, `sglang.launch_server` or `trtllm-serve` for `copies` copies of the layout `speed` runs."""
    layout, gpu = speed.layout, speed.gpu
    repo = hf_id(model)
    quantize = _QUANTIZATION.get(precision) if _NATIVE.get(model.native_precision) != precision else None
    context = workload.input_tokens + workload.output_tokens
    engine = workload.engine
    # The CDNA 3/4 estimates are fit to runs with AMD's AITER kernels on: vLLM leaves them off (VLLM_ROCM_USE_AITER is
    # "False" in every release) and SGLang turns them on only in its ROCm images (-mi30x/-mi35x, ENV
    # SGLANG_USE_AITER=1), so the command says so. They are built for CDNA 3 and 4 only (gfx942, gfx950), not MI250X.
    aiter = gpu.architecture in AITER_ARCHITECTURES
    if engine == "sglang":
        gpus = layout.gpus // layout.pipeline
        flags = [f"--model-path {repo}", f"--tp-size {gpus}"]
        if layout.pipeline > 1:
            flags.append(f"--pp-size {layout.pipeline}")
        if layout.dp_attention:
            flags += [f"--dp-size {layout.expert}", "--enable-dp-attention"]
        if layout.expert > 1:
            flags.append(f"--ep-size {layout.expert}")
        flags.append(f"--max-running-requests {batch_cap}")
        backend = "aiter" if aiter else ""
        if kv_precision == "fp8":
            flags.append("--kv-cache-dtype fp8_e4m3")
            if mla.casts_fp8_pool(engine, speed.family, model, kv_precision):
                # The default backend would cast the whole FP8 pool to bf16 every layer (domain/performance/mla.py).
                backend = "flashmla --page-size 64"
        if backend:
            flags.append(f"--attention-backend {backend}")
        if quantize:
            flags.append(f"--quantization {quantize}")
        flags.append(f"--context-length {context}")
        command = ("SGLANG_USE_AITER=1 " if aiter else "") + "python -m sglang.launch_server " + " ".join(flags)
    elif engine == "trtllm":
        tensor = layout.gpus // layout.pipeline
        flags = [repo, f"--tp_size {tensor}", f"--pp_size {layout.pipeline}"]
        if layout.expert > 1:
            flags.append(f"--ep_size {layout.expert}")
        flags += [f"--max_batch_size {batch_cap}", f"--max_seq_len {context}"]
        command = "trtllm-serve " + " ".join(flags)
    else:
        flags = [repo, f"--tensor-parallel-size {layout.tensor}", f"--pipeline-parallel-size {layout.pipeline}"]
        if layout.dp_attention:
            flags.append(f"--data-parallel-size {layout.expert * max(1, copies)}")
        elif copies > 1:
            flags.append(f"--data-parallel-size {copies}")
        if layout.expert > 1:
            flags.append("--enable-expert-parallel")
        flags.append(f"--max-num-seqs {batch_cap}")
        flags.append(f"--kv-cache-dtype {'fp8' if kv_precision == 'fp8' else 'auto'}")
        if quantize:
            flags.append(f"--quantization {quantize}")
        flags.append(f"--max-model-len {context}")
        command = ("VLLM_ROCM_USE_AITER=1 " if aiter else "") + "vllm serve " + " ".join(flags)
    return Launch(engine=engine, command=command + _span_comment(layout, gpu))


def training_launch(
    model: LlmModel,
    parallelism: Parallelism,
    gpus: int,
    shape: Shape,
    sequence: int,
    precision: str,
    *,
    fine_tuning: bool,
    micro_batches: int,
) -> Launch:
    """The launcher: Accelerate with FSDP for a fine-tune sharded without model parallelism, else torchrun."""
    # Accelerate is Hugging Face's; torchrun takes Megatron-LM's names (tensor, pipeline, micro- and global batch,
    # recompute).
    nodes = max(1, -(-gpus // GPUS_PER_NODE))
    per_node = min(gpus, GPUS_PER_NODE)
    per_stage = -(-model.layers // shape.pipeline)
    if fine_tuning and shape.tensor == shape.pipeline == 1 and parallelism.data > 1 and shape.zero >= 2:
        if shape.offload:
            # Optimizer states alone on the host, as costed: DeepSpeed's ZeRO-Offload (FSDP's offload also moves
            # the parameters).
            flags = [
                "--use_deepspeed",
                f"--zero_stage {shape.zero}",
                "--offload_optimizer_device cpu",
                "--offload_param_device none",
            ]
            if shape.recompute:
                flags.append("--gradient_checkpointing true")
        else:
            flags = ["--use_fsdp", f"--fsdp_sharding_strategy {'FULL_SHARD' if shape.zero == 3 else 'SHARD_GRAD_OP'}"]
            if shape.recompute:
                flags.append("--fsdp_activation_checkpointing true")
        flags += [f"--num_machines {nodes}", f"--num_processes {gpus}"]
        command = (
            "accelerate launch "
            + " ".join(flags)
            + f" train.py --model_name_or_path {hf_id(model)} --per_device_train_batch_size {shape.micro_batch}"
            + f" --gradient_accumulation_steps {micro_batches} --max_seq_length {sequence}"
            + (" --bf16" if precision != "fp16" else " --fp16")
        )
        return Launch(engine="accelerate", command=command)
    flags = [
        f"--tensor-model-parallel-size {parallelism.tensor}",
        f"--pipeline-model-parallel-size {parallelism.pipeline}",
    ]
    if shape.pipeline > 1 and per_stage > 1:
        chunks = virtual_stages(model.layers, shape.pipeline)
        flags.append(f"--num-layers-per-virtual-pipeline-stage {max(1, per_stage // chunks)}")
    if shape.tensor > 1:
        flags.append("--sequence-parallel")
    flags += [
        f"--micro-batch-size {shape.micro_batch}",
        f"--global-batch-size {parallelism.global_batch}",
        f"--seq-length {sequence}",
    ]
    if shape.zero >= 1:
        flags.append("--use-distributed-optimizer")
    if shape.zero >= 2:
        strategy = "optim_grads_params" if shape.zero == 3 else "optim_grads"
        flags += ["--use-megatron-fsdp", f"--data-parallel-sharding-strategy {strategy}"]
    if shape.offload:
        flags.append("--optimizer-cpu-offload")
    flags.append("--fp8-format hybrid --bf16" if precision == "fp8" else "--fp16" if precision == "fp16" else "--bf16")
    if shape.recompute >= per_stage:
        flags += ["--recompute-granularity full", "--recompute-method uniform", "--recompute-num-layers 1"]
    elif shape.recompute:
        flags += [
            "--recompute-granularity full",
            "--recompute-method block",
            f"--recompute-num-layers {shape.recompute}",
        ]
    command = (
        f"torchrun --nnodes {nodes} --nproc-per-node {per_node} pretrain_gpt.py "
        + " ".join(flags)
        + f"  # data parallel {parallelism.data} ({model.name})"
    )
    return Launch(engine="megatron", command=command)
