"""The command that runs an option: the serving engine's for inference, the launcher's for training."""

from __future__ import annotations

import math
import re
import shlex

from domain.catalog import Gpu, LlmModel
from domain.hardware.nodes import GPUS_PER_NODE
from domain.performance import mla
from domain.performance.layout import Layout
from domain.performance.lora_adapters import TRL_DROPOUT
from domain.performance.memory import InferenceMemory
from domain.performance.serving import InstanceSpeed
from domain.performance.training import Shape, training_launcher, virtual_stages
from domain.workloads.requests import FineTuningWorkload, InferenceWorkload, TrainingWorkload
from domain.workloads.results import Launch, Parallelism

# Checkpoints already stored in the weight precision need no quantization flag.
_NATIVE = {"fp8": "fp8", "mxfp4": "fp4", "bf16": "bf16", "fp16": "fp16", "fp32": "fp32"}
_QUANTIZATION = {"fp8": "fp8", "int8": "int8", "int4": "awq", "fp4": "mxfp4"}
AITER_ARCHITECTURES = frozenset({"CDNA 3", "CDNA 4"})
# Where FlashAttention-2 runs: TRL's padding-free packing needs its variable-length kernels to keep packed samples
# apart. Its README (Dao-AILab/flash-attention at 0251105a) lists Ampere, Ada and Hopper under CUDA and MI200x, MI250x,
# MI300x and MI355x under ROCm; its setup.py builds sm_100 and sm_120 (Blackwell) by default from CUDA 12.8.
PACKING_ARCHITECTURES = frozenset(
    {"Ampere", "Ada Lovelace", "Hopper", "Blackwell", "Blackwell Ultra", "CDNA 2", "CDNA 3", "CDNA 4"}
)


def hf_id(model: LlmModel) -> str:
    """The model's Hugging Face repository from its aliases, else its catalog id."""
    return next((alias for alias in model.aliases if "/" in alias), model.id)


def checkpoint_id(model: LlmModel, workload: InferenceWorkload | TrainingWorkload | FineTuningWorkload) -> str:
    """The weights a command loads: a pasted model's own path or name, else the model's Hugging Face repository."""
    custom = workload.custom_model
    if custom is None:
        return hf_id(model)
    named = (custom.hf_config or {}).get("_name_or_path")
    if isinstance(named, str) and named.strip():
        return shlex.quote(named.strip())
    # A name with a slash is a repository or a path already; anything else becomes a local directory name.
    return shlex.quote(custom.name) if "/" in custom.name else "./" + _slug(custom.name)


def serve_id(model: LlmModel, workload: InferenceWorkload) -> str:
    """What to serve: the instruct (chat) checkpoint when the catalog knows it, a pasted model's own path or name."""
    if workload.custom_model is not None:
        return checkpoint_id(model, workload)
    tuned = [a for a in model.aliases if "/" in a and ("instruct" in a.lower() or a.lower().endswith(("-it", "-chat")))]
    return tuned[0] if tuned else hf_id(model)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "model"


def max_model_len(model: LlmModel, workload: InferenceWorkload, memory: InferenceMemory) -> int:
    """The longest sequence the engine admits: the model's context, cut to what one sequence's KV cache can hold."""
    # Requests vary around the mean lengths the estimate uses; a limit at the mean would refuse every longer one.
    tokens = workload.input_tokens + workload.output_tokens
    per_token = memory.kv_bytes_per_sequence / tokens
    room = int(memory.kv_free_bytes / per_token) if per_token > 0 else model.max_context
    longest = min(model.max_context, room // 1024 * 1024 if room > 1024 else room)
    return max(tokens, longest)


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
    memory: InferenceMemory,
) -> Launch:
    """`vllm serve`, `sglang.launch_server` or `trtllm-serve` for `copies` copies of the layout `speed` runs."""
    layout, gpu = speed.layout, speed.gpu
    repo = serve_id(model, workload)
    quantize = _QUANTIZATION.get(precision) if _NATIVE.get(model.native_precision) != precision else None
    context = max_model_len(model, workload, memory)
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
    workload: TrainingWorkload | FineTuningWorkload,
    *,
    micro_batches: int,
    gpu: Gpu,
) -> Launch:
    """Fine-tuning with TRL (PEFT for LoRA, bitsandbytes for QLoRA) under Accelerate; Megatron-LM under torchrun for
    pre-training and for full fine-tuning on several GPUs."""
    # TRL is Hugging Face's maintained trainer: one CLI takes the LoRA rank, the 4-bit loading, the batch and the
    # sequence length, and Accelerate runs its data-parallel ranks with the plan's ZeRO stage (FSDP or DeepSpeed).
    # Megatron-LM runs tensor and pipeline parallel layouts with the plan's names, and is the faster stack
    # (domain.performance.training.training_launcher).
    method = workload.method if isinstance(workload, FineTuningWorkload) else None
    if training_launcher(method, gpus) == "trl":
        return _trl_launch(model, parallelism, gpus, shape, workload, micro_batches, gpu)  # type: ignore[arg-type]
    return _megatron_launch(model, parallelism, gpus, shape, workload, fine_tuning=method is not None)


def _nodes(gpus: int) -> tuple[int, int]:
    return max(1, -(-gpus // GPUS_PER_NODE)), min(gpus, GPUS_PER_NODE)


def _trl_launch(
    model: LlmModel,
    parallelism: Parallelism,
    gpus: int,
    shape: Shape,
    workload: FineTuningWorkload,
    micro_batches: int,
    gpu: Gpu,
) -> Launch:
    nodes, _ = _nodes(gpus)
    # Every GPU is a data-parallel rank under Accelerate: the plan's global batch sets the accumulation.
    global_batch = parallelism.global_batch or shape.micro_batch * micro_batches
    accumulation = max(1, round(global_batch / (shape.micro_batch * gpus)))
    flags = [f"--num_machines {nodes}", f"--num_processes {gpus}"]
    if nodes > 1:
        flags += ["--machine_rank $NODE_RANK", "--main_process_ip $HEAD_NODE", "--main_process_port 29500"]
    sharded = shape.tensor * shape.pipeline > 1  # TRL runs no tensor or pipeline parallelism: FSDP shards instead
    if shape.offload:
        # Optimizer states alone on the host, as costed: DeepSpeed's ZeRO-Offload (FSDP's offload moves the weights).
        flags += [
            "--use_deepspeed",
            f"--zero_stage {max(shape.zero, 2)}",
            "--offload_optimizer_device cpu",
            "--offload_param_device none",
        ]
    elif gpus > 1 and (shape.zero >= 2 or sharded):
        strategy = "FULL_SHARD" if shape.zero == 3 or sharded else "SHARD_GRAD_OP"
        flags += ["--use_fsdp", f"--fsdp_sharding_strategy {strategy}"]
    elif gpus > 1 and shape.zero == 1:
        flags += ["--use_deepspeed", "--zero_stage 1"]
    elif gpus > 1:
        flags.append("--multi_gpu")
    precision = "fp16" if workload.precision == "fp16" else "bf16"
    flags.append(f"--mixed_precision {precision}")
    args = [
        f"--model_name_or_path {checkpoint_id(model, workload)}",
        "--dataset_name $DATASET",
        f"--per_device_train_batch_size {shape.micro_batch}",
        f"--gradient_accumulation_steps {accumulation}",
        f"--max_length {workload.sequence_length}",
        f"--{precision}",
    ]
    # The estimate costs every sequence at its full length: packed samples, each attending only to itself, fill it.
    packs = gpu.architecture in PACKING_ARCHITECTURES
    if packs:
        args += ["--packing", "--attn_implementation flash_attention_2"]
    if shape.recompute:
        args.append("--gradient_checkpointing")
    if workload.method != "full":
        args += [
            "--use_peft",
            f"--lora_r {workload.lora_rank}",
            f"--lora_alpha {2 * workload.lora_rank}",
            "--lora_target_modules all-linear",
            f"--lora_dropout {TRL_DROPOUT}",
        ]
    if workload.method == "qlora":
        args += ["--load_in_4bit", "--bnb_4bit_quant_type nf4", "--use_bnb_nested_quant"]
    if workload.optimizer == "adamw_8bit":
        args.append("--optim adamw_bnb_8bit")
    args.append(f"--output_dir {_slug(model.name)}-{workload.method}")
    command = "accelerate launch " + " ".join(flags) + " -m trl.scripts.sft " + " ".join(args)
    note = f"  # global batch {parallelism.global_batch} sequences"
    if sharded:
        note += f"; FSDP over the {gpus} GPUs in place of the plan's TP{shape.tensor} x PP{shape.pipeline}"
    if not packs:
        note += (
            f"; unpacked: FlashAttention-2, which packing needs, does not run on {gpu.architecture}, so padded "
            "batches run below the estimate"
        )
    return Launch(engine="trl", command=command + note)


def _model_flags(model: LlmModel) -> list[str]:
    """The model's shape in Megatron-LM's flags: its attention and, for mixture-of-experts models, its experts."""
    # A Llama-style decoder: Megatron-LM's defaults are GPT-2's (GeLU, LayerNorm, learned positions, biases).
    flags = [
        f"--num-layers {model.layers}",
        f"--hidden-size {model.hidden_size}",
        f"--ffn-hidden-size {model.intermediate_size}",
        f"--num-attention-heads {model.attention_heads}",
        "--swiglu",
        "--normalization RMSNorm",
        "--position-embedding-type rope",
        "--disable-bias-linear",
    ]
    if not model.tied_embeddings:
        flags.append("--untie-embeddings-and-output-weights")
    if model.qkv_bias:
        flags.append("--add-qkv-bias")
    if model.qk_norm:
        flags.append("--qk-layernorm")
    if model.mla is not None:
        latent = model.mla
        flags.append("--multi-latent-attention")
        if latent.q_lora_rank:
            flags.append(f"--q-lora-rank {latent.q_lora_rank}")
        flags += [
            f"--kv-lora-rank {latent.kv_lora_rank}",
            f"--qk-head-dim {latent.qk_nope_head_dim}",
            f"--qk-pos-emb-head-dim {latent.qk_rope_head_dim}",
            f"--v-head-dim {latent.v_head_dim}",
        ]
    else:
        # Megatron-LM derives the head size from hidden / heads unless told (Qwen3, Gemma 3 and gpt-oss differ).
        if model.head_dim * model.attention_heads != model.hidden_size:
            flags.append(f"--kv-channels {model.head_dim}")
        if model.kv_heads is not None and model.kv_heads < model.attention_heads:
            flags += ["--group-query-attention", f"--num-query-groups {model.kv_heads}"]
    experts = model.moe
    if experts is None:
        return flags
    flags += [
        f"--num-experts {experts.routed_experts}",
        f"--moe-router-topk {experts.experts_per_token}",
        f"--moe-ffn-hidden-size {experts.expert_intermediate_size}",
        "--moe-grouped-gemm",
        "--moe-token-dispatcher-type alltoall",
    ]
    if experts.shared_experts:
        shared = experts.shared_experts * experts.expert_intermediate_size
        flags.append(f"--moe-shared-expert-intermediate-size {shared}")
    if experts.first_dense_layers:
        dense, sparse = experts.first_dense_layers, model.layers - experts.first_dense_layers
        flags.append(f"--moe-layer-freq '([0]*{dense}+[1]*{sparse})'")
    return flags


def _megatron_launch(
    model: LlmModel,
    parallelism: Parallelism,
    gpus: int,
    shape: Shape,
    workload: TrainingWorkload | FineTuningWorkload,
    *,
    fine_tuning: bool,
) -> Launch:
    nodes, per_node = _nodes(gpus)
    sequence, precision = workload.sequence_length, workload.precision
    per_stage = -(-model.layers // shape.pipeline)
    flags = [
        f"--tensor-model-parallel-size {parallelism.tensor}",
        f"--pipeline-model-parallel-size {parallelism.pipeline}",
    ]
    if shape.pipeline > 1 and per_stage > 1:
        chunks = virtual_stages(model.layers, shape.pipeline)
        flags.append(f"--num-layers-per-virtual-pipeline-stage {max(1, per_stage // chunks)}")
    if shape.tensor > 1:
        # The estimate hides part of the tensor-parallel exchange behind the GEMMs (tp_overlap, fitted to runs that
        # overlap it with Transformer Engine's userbuffers): the command turns that overlap on.
        flags += ["--sequence-parallel", "--tp-comm-overlap"]
    global_batch = parallelism.global_batch or 1
    flags += _model_flags(model)
    flags += [
        f"--micro-batch-size {shape.micro_batch}",
        f"--global-batch-size {global_batch}",
        f"--seq-length {sequence}",
        f"--max-position-embeddings {max(sequence, model.max_context)}",
        f"--train-iters {max(1, math.ceil(workload.train_tokens / (global_batch * sequence)))}",
    ]
    if shape.zero >= 1:
        flags.append("--use-distributed-optimizer")
    if shape.zero == 1 and parallelism.data > 1:
        # The estimate hides most of the data-parallel exchange behind the backward and forward passes (COMM_OVERLAP).
        flags += ["--overlap-grad-reduce", "--overlap-param-gather"]
    if shape.zero >= 2:
        strategy = "optim_grads_params" if shape.zero == 3 else "optim_grads"
        flags += ["--use-megatron-fsdp", f"--data-parallel-sharding-strategy {strategy}"]
    if shape.offload:
        flags.append("--optimizer-cpu-offload")
    flags.append("--fp8-format hybrid --bf16" if precision == "fp8" else "--fp16" if precision == "fp16" else "--bf16")
    # The data (an indexed dataset prefix from Megatron-LM's preprocess_data.py), the model's own tokenizer and the
    # learning rate are the user's to set, as TRL's $DATASET is.
    flags += [
        "--data-path $DATA_PREFIX",
        "--tokenizer-type HuggingFaceTokenizer",
        f"--tokenizer-model {checkpoint_id(model, workload)}",
        "--lr $LR",
    ]
    if shape.recompute >= per_stage:
        flags += ["--recompute-granularity full", "--recompute-method uniform", "--recompute-num-layers 1"]
    elif shape.recompute:
        flags += [
            "--recompute-granularity full",
            "--recompute-method block",
            f"--recompute-num-layers {shape.recompute}",
        ]
    if fine_tuning:
        # Continue from the released weights, converted to Megatron's checkpoint format, whose own settings (norms,
        # biases, rotary base, tied embeddings) override the model flags above.
        flags += [f"--load checkpoints/{_slug(model.name)}", "--finetune", "--use-checkpoint-args"]
    launcher = f"torchrun --nnodes {nodes} --nproc-per-node {per_node}"
    if nodes > 1:
        launcher += " --node-rank $NODE_RANK --master-addr $HEAD_NODE --master-port 29500"
    command = f"{launcher} pretrain_gpt.py " + " ".join(flags) + f"  # data parallel {parallelism.data} ({model.name})"
    return Launch(engine="megatron", command=command)
