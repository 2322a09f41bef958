"""Every option's command parses against its launcher's flags and carries the plan's figures.

The launchers (vLLM, SGLang, TensorRT-LLM, Accelerate with TRL, torchrun with Megatron-LM, diffusers) are too heavy
to install here, so their flags are kept as data: each list holds the flags of the release the commands are written
for, with whether the flag takes a value.
"""

from __future__ import annotations

import ast
import re
import shlex

import pytest

from domain.catalog import Catalog, LlmModel
from domain.narrative.launch import PACKING_ARCHITECTURES
from domain.performance.lora_adapters import TRL_DROPOUT
from domain.planning import RecommendationRequest, recommend
from domain.workloads.requests import (
    CustomModel,
    FineTuningWorkload,
    ImageGenerationWorkload,
    InferenceWorkload,
    TrainingWorkload,
    Workload,
)
from domain.workloads.results import Option
from tests.conftest import NOW, RATE, run_estimate

# flag -> takes a value
VLLM = {
    "--tensor-parallel-size": True,
    "--pipeline-parallel-size": True,
    "--data-parallel-size": True,
    "--enable-expert-parallel": False,
    "--max-num-seqs": True,
    "--kv-cache-dtype": True,
    "--quantization": True,
    "--max-model-len": True,
}
SGLANG = {
    "--model-path": True,
    "--tp-size": True,
    "--pp-size": True,
    "--dp-size": True,
    "--enable-dp-attention": False,
    "--ep-size": True,
    "--max-running-requests": True,
    "--kv-cache-dtype": True,
    "--attention-backend": True,
    "--page-size": True,
    "--quantization": True,
    "--context-length": True,
}
TRTLLM = {"--tp_size": True, "--pp_size": True, "--ep_size": True, "--max_batch_size": True, "--max_seq_len": True}
ACCELERATE = {
    "--num_machines": True,
    "--num_processes": True,
    "--machine_rank": True,
    "--main_process_ip": True,
    "--main_process_port": True,
    "--use_deepspeed": False,
    "--zero_stage": True,
    "--offload_optimizer_device": True,
    "--offload_param_device": True,
    "--use_fsdp": False,
    "--fsdp_sharding_strategy": True,
    "--multi_gpu": False,
    "--mixed_precision": True,
    "-m": True,
}
TRL_SFT = {
    "--model_name_or_path": True,
    "--dataset_name": True,
    "--per_device_train_batch_size": True,
    "--gradient_accumulation_steps": True,
    "--max_length": True,
    "--packing": False,
    "--attn_implementation": True,
    "--bf16": False,
    "--fp16": False,
    "--gradient_checkpointing": False,
    "--use_peft": False,
    "--lora_r": True,
    "--lora_alpha": True,
    "--lora_target_modules": True,
    "--lora_dropout": True,
    "--load_in_4bit": False,
    "--bnb_4bit_quant_type": True,
    "--use_bnb_nested_quant": False,
    "--optim": True,
    "--output_dir": True,
}
TORCHRUN = {
    "--nnodes": True,
    "--nproc-per-node": True,
    "--node-rank": True,
    "--master-addr": True,
    "--master-port": True,
}
# Megatron-LM's own flags (megatron/training/arguments.py and the TransformerConfig fields its ArgumentGroupFactory
# turns into flags, checked at NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553).
MEGATRON = {
    "--tensor-model-parallel-size": True, "--pipeline-model-parallel-size": True,
    "--num-layers-per-virtual-pipeline-stage": True, "--sequence-parallel": False, "--num-layers": True,
    "--hidden-size": True, "--ffn-hidden-size": True, "--num-attention-heads": True, "--group-query-attention": False,
    "--num-query-groups": True, "--micro-batch-size": True, "--global-batch-size": True, "--seq-length": True,
    "--max-position-embeddings": True, "--train-iters": True, "--use-distributed-optimizer": False,
    "--use-megatron-fsdp": False, "--data-parallel-sharding-strategy": True, "--optimizer-cpu-offload": False,
    "--fp8-format": True, "--bf16": False, "--fp16": False, "--recompute-granularity": True,
    "--recompute-method": True, "--recompute-num-layers": True, "--load": True, "--finetune": False,
    "--kv-channels": True, "--multi-latent-attention": False, "--q-lora-rank": True, "--kv-lora-rank": True,
    "--qk-head-dim": True, "--qk-pos-emb-head-dim": True, "--v-head-dim": True, "--num-experts": True,
    "--moe-router-topk": True, "--moe-ffn-hidden-size": True, "--moe-grouped-gemm": False,
    "--moe-token-dispatcher-type": True, "--moe-shared-expert-intermediate-size": True, "--moe-layer-freq": True,
    "--data-path": True, "--tokenizer-type": True, "--tokenizer-model": True, "--lr": True, "--swiglu": False,
    "--normalization": True, "--position-embedding-type": True, "--disable-bias-linear": False,
    "--untie-embeddings-and-output-weights": False, "--add-qkv-bias": False, "--qk-layernorm": False,
    "--use-checkpoint-args": False, "--tp-comm-overlap": False, "--overlap-grad-reduce": False,
    "--overlap-param-gather": False,
}  # fmt: skip


def parse(tokens: list[str], known: dict[str, bool]) -> tuple[dict[str, str | None], list[str]]:
    """Flags with their values, and the positional arguments; fails on a flag the launcher does not have."""
    flags: dict[str, str | None] = {}
    positional: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.startswith("-"):
            assert token in known, f"unknown flag {token}"
            assert token not in flags, f"{token} twice"
            if known[token]:
                flags[token] = tokens[index + 1]
                index += 1
            else:
                flags[token] = None
        else:
            positional.append(token)
        index += 1
    return flags, positional


def words(command: str) -> list[str]:
    return [t for t in shlex.split(command, comments=True) if "=" not in t or t.startswith("-")]


def _options(catalog: Catalog, workload: Workload, lang: str = "en") -> list[Option]:
    answer = recommend(catalog, RecommendationRequest(workload=workload, limit=6), now=NOW, lang=lang, rate=RATE)  # type: ignore[arg-type]
    assert answer.options, answer.summary
    return answer.options


def _serving_flags(option: Option) -> tuple[str, dict[str, str | None], list[str]]:
    assert option.launch is not None
    tokens = [t for t in words(option.launch.command) if not re.match(r"^[A-Z_]+=", t)]
    if tokens[:2] == ["vllm", "serve"]:
        flags, positional = parse(tokens[2:], VLLM)
        return "vllm", flags, positional
    if tokens[:3] == ["python", "-m", "sglang.launch_server"]:
        flags, positional = parse(tokens[3:], SGLANG)
        return "sglang", flags, [str(flags["--model-path"])]
    assert tokens[0] == "trtllm-serve", tokens
    flags, positional = parse(tokens[1:], TRTLLM)
    return "trtllm", flags, positional


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_serving_commands_parse_and_carry_the_plan(reference: Catalog, engine: str) -> None:
    for model in ("llama-3.1-70b", "deepseek-r1"):
        workload = InferenceWorkload(model=model, engine=engine, concurrency=64)  # type: ignore[arg-type]
        llm = reference.model(model)
        assert llm is not None
        for option in _options(reference, workload):
            name, flags, positional = _serving_flags(option)
            assert name == engine
            length = {"vllm": "--max-model-len", "sglang": "--context-length", "trtllm": "--max_seq_len"}[engine]
            longest = int(str(flags[length]))
            # Not the mean lengths: the model's context, cut only by what one sequence's KV cache can hold.
            assert 1024 + 256 < longest <= llm.max_context, option.launch
            if engine == "vllm":
                assert int(str(flags["--tensor-parallel-size"])) == option.parallelism.tensor
                assert ("--enable-expert-parallel" in flags) == (option.parallelism.expert > 1)
            if model == "llama-3.1-70b":
                assert positional == ["meta-llama/Llama-3.1-70B-Instruct"], positional


def test_a_pasted_model_is_served_from_its_own_path(reference: Catalog) -> None:
    config = {
        "_name_or_path": "/models/qwen2.5-32b", "model_type": "qwen2", "hidden_size": 5120,
        "intermediate_size": 27648, "num_attention_heads": 40, "num_hidden_layers": 64, "num_key_value_heads": 8,
        "vocab_size": 152064, "max_position_embeddings": 32768,
    }  # fmt: skip
    workload = InferenceWorkload(custom_model=CustomModel(name="qwen", hf_config=config))
    option = _options(reference, workload)[0]
    _, _, positional = _serving_flags(option)
    assert positional == ["/models/qwen2.5-32b"]
    named = InferenceWorkload(custom_model=CustomModel(name="My Model", params_b=7, layers=32, hidden_size=4096,
                                                       attention_heads=32, kv_heads=8))  # fmt: skip
    _, _, positional = _serving_flags(_options(reference, named)[0])
    assert positional == ["./My-Model"]


def test_a_pasted_model_trains_and_fine_tunes_from_its_own_path(reference: Catalog) -> None:
    named = CustomModel(name="My Model", params_b=7, layers=32, hidden_size=4096, attention_heads=32, kv_heads=8)
    workloads = [
        TrainingWorkload(custom_model=named, train_tokens=1e10),
        FineTuningWorkload(custom_model=named, method="lora"),
        FineTuningWorkload(custom_model=named, method="full"),
    ]
    for workload in workloads:
        for option in _options(reference, workload):
            assert option.launch is not None
            tokens = words(option.launch.command)
            if "pretrain_gpt.py" in tokens:
                flags, _ = parse(tokens[tokens.index("pretrain_gpt.py") + 1 :], MEGATRON)
                assert flags["--tokenizer-model"] == "./My-Model", option.launch.command
            else:
                flags, _ = parse(tokens[tokens.index("trl.scripts.sft") + 1 :], TRL_SFT)
                assert flags["--model_name_or_path"] == "./My-Model", option.launch.command


@pytest.mark.parametrize("method", ["lora", "qlora", "full"])
def test_fine_tuning_commands_parse_and_carry_the_plan(reference: Catalog, method: str) -> None:
    for model in ("llama-3.1-8b", "llama-3.1-70b"):
        workload = FineTuningWorkload(model=model, method=method, lora_rank=32, sequence_length=8192)  # type: ignore[arg-type]
        for option in _options(reference, workload):
            assert option.launch is not None
            tokens = words(option.launch.command)
            parallel = option.parallelism
            if tokens[0] == "torchrun":
                assert method == "full" and option.gpu_count > 1
                _check_megatron(tokens, option, 8192, fine_tuning=True)
                continue
            assert tokens[:2] == ["accelerate", "launch"], tokens
            split = tokens.index("trl.scripts.sft")
            launcher, _ = parse(tokens[2 : split + 1], ACCELERATE)
            assert launcher["-m"] == "trl.scripts.sft"
            trl, positional = parse(tokens[split + 1 :], TRL_SFT)
            assert not positional
            processes = int(str(launcher["--num_processes"]))
            assert processes == option.gpu_count
            micro = int(str(trl["--per_device_train_batch_size"]))
            accumulation = int(str(trl["--gradient_accumulation_steps"]))
            assert micro == parallel.micro_batch
            assert parallel.global_batch is not None
            assert abs(micro * accumulation * processes - parallel.global_batch) <= micro * processes
            assert trl["--max_length"] == "8192"
            assert ("--use_peft" in trl) == (method != "full")
            assert ("--load_in_4bit" in trl) == (method == "qlora")
            # Packed to the full length, as the estimate costs every sequence, where FlashAttention-2 keeps the
            # packed samples apart.
            card = reference.gpu(option.gpu.id)
            assert card is not None
            packs = card.architecture in PACKING_ARCHITECTURES
            assert ("--packing" in trl) == packs == (trl.get("--attn_implementation") == "flash_attention_2")
            assert ("unpacked" in option.launch.command) != packs
            if method != "full":
                # The adapters the estimate costs (lora_adapters.py): every linear layer, behind the dropout it states.
                assert trl["--lora_r"] == "32" and trl["--lora_target_modules"] == "all-linear"
                assert float(str(trl["--lora_dropout"])) == TRL_DROPOUT
            if parallel.zero_stage and parallel.zero_stage >= 2 and processes > 1:
                assert "--use_fsdp" in launcher or "--use_deepspeed" in launcher


def _check_megatron(tokens: list[str], option: Option, sequence: int, *, fine_tuning: bool) -> dict[str, str | None]:
    """Megatron-LM's flags of a command, checked against the option's plan."""
    script = tokens.index("pretrain_gpt.py")
    launcher, _ = parse(tokens[1:script], TORCHRUN)
    flags, positional = parse(tokens[script + 1 :], MEGATRON)
    assert not positional
    parallel = option.parallelism
    assert int(str(launcher["--nnodes"])) * int(str(launcher["--nproc-per-node"])) >= option.gpu_count
    assert int(str(flags["--tensor-model-parallel-size"])) == parallel.tensor
    assert int(str(flags["--pipeline-model-parallel-size"])) == parallel.pipeline
    assert int(str(flags["--micro-batch-size"])) == parallel.micro_batch
    assert int(str(flags["--global-batch-size"])) == parallel.global_batch
    assert int(str(flags["--seq-length"])) == sequence
    assert ("--finetune" in flags) == fine_tuning == ("--use-checkpoint-args" in flags)
    # A Llama-style decoder, not Megatron-LM's GPT-2 defaults.
    assert "--swiglu" in flags and flags["--normalization"] == "RMSNorm"
    assert flags["--position-embedding-type"] == "rope"
    assert flags["--tokenizer-type"] == "HuggingFaceTokenizer" and "--data-path" in flags and "--lr" in flags
    # The exchanges the estimate hides behind compute are overlapped by the command (tp_overlap, COMM_OVERLAP).
    assert ("--sequence-parallel" in flags) == ("--tp-comm-overlap" in flags) == (parallel.tensor > 1)
    overlapped = parallel.data > 1 and parallel.zero_stage == 1
    assert ("--overlap-grad-reduce" in flags) == ("--overlap-param-gather" in flags) == overlapped
    return flags


def test_training_commands_parse_and_carry_the_plan(reference: Catalog) -> None:
    for model in ("llama-3.1-8b", "llama-3.1-70b"):
        for option in _options(reference, TrainingWorkload(model=model, train_tokens=1e11)):
            assert option.launch is not None and option.launch.engine == "megatron"
            _check_megatron(words(option.launch.command), option, 4096, fine_tuning=False)


@pytest.mark.parametrize("model_id", ["gemma-3-27b", "llama-3.1-8b"])
def test_a_model_trains_with_as_many_embedding_matrices_as_it_has(reference: Catalog, model_id: str) -> None:
    # Untying a tied model (Gemma 3) adds a second vocab x hidden matrix: 1.41B parameters it does not have.
    model = reference.model(model_id)
    assert isinstance(model, LlmModel)
    (option,) = _options(reference, TrainingWorkload(model=model_id, train_tokens=1e11))[:1]
    assert option.launch is not None
    flags = _check_megatron(words(option.launch.command), option, 4096, fine_tuning=False)
    assert ("--untie-embeddings-and-output-weights" in flags) == (not model.tied_embeddings)


@pytest.mark.parametrize(
    ("model_id", "qkv_bias", "qk_norm"),
    [
        ("qwen2.5-72b", True, False),
        ("qwen3-32b", False, True),
        ("gemma-3-27b", False, True),
        ("llama-3.1-70b", False, False),
    ],
)
def test_a_model_trains_with_its_attention_biases_and_norms(
    reference: Catalog, model_id: str, qkv_bias: bool, qk_norm: bool
) -> None:
    # Qwen2's biased QKV projections and Qwen3's and Gemma 3's per-head QK norms: without them Megatron-LM builds
    # another attention than the checkpoint's.
    model = reference.model(model_id)
    assert isinstance(model, LlmModel)
    (option,) = _options(reference, TrainingWorkload(model=model_id, train_tokens=1e11))[:1]
    assert option.launch is not None
    flags = _check_megatron(words(option.launch.command), option, 4096, fine_tuning=False)
    assert ("--add-qkv-bias" in flags) == model.qkv_bias == qkv_bias
    assert ("--qk-layernorm" in flags) == model.qk_norm == qk_norm


@pytest.mark.parametrize("model_id", ["deepseek-v3", "qwen3-30b-a3b", "mixtral-8x7b"])
def test_an_moe_model_trains_with_its_experts_and_attention(reference: Catalog, model_id: str) -> None:
    # Without them Megatron-LM builds a dense model of the same width: another model, with several times the FLOPs.
    model = reference.model(model_id)
    assert isinstance(model, LlmModel) and model.moe is not None
    (option,) = _options(reference, TrainingWorkload(model=model_id, train_tokens=1e11))[:1]
    assert option.launch is not None
    flags = _check_megatron(words(option.launch.command), option, 4096, fine_tuning=False)
    experts = model.moe
    assert flags["--num-experts"] == str(experts.routed_experts)
    assert flags["--moe-router-topk"] == str(experts.experts_per_token)
    assert flags["--moe-ffn-hidden-size"] == str(experts.expert_intermediate_size)
    shared = flags.get("--moe-shared-expert-intermediate-size")
    width = experts.shared_experts * experts.expert_intermediate_size
    assert shared == (str(width) if experts.shared_experts else None)
    # Megatron-LM evaluates the pattern as a Python list expression: dense layers first, then expert layers.
    pattern = re.fullmatch(r"\(\[0\]\*(\d+)\+\[1\]\*(\d+)\)", str(flags.get("--moe-layer-freq", "([0]*0+[1]*0)")))
    assert pattern is not None
    dense, sparse = int(pattern[1]), int(pattern[2])
    if experts.first_dense_layers:
        assert (dense, dense + sparse) == (experts.first_dense_layers, model.layers)
    else:
        assert "--moe-layer-freq" not in flags
    assert ("--multi-latent-attention" in flags) == (model.mla is not None)
    if model.mla is not None:
        assert flags["--kv-lora-rank"] == str(model.mla.kv_lora_rank)
        assert flags["--qk-pos-emb-head-dim"] == str(model.mla.qk_rope_head_dim)
    else:
        head = int(str(flags.get("--kv-channels") or model.hidden_size // model.attention_heads))
        assert head == model.head_dim


@pytest.mark.parametrize("precision", ["fp16", "fp8"])
def test_image_commands_parse_and_carry_the_plan(reference: Catalog, precision: str) -> None:
    workload = ImageGenerationWorkload(model="flux.1-dev", images_per_hour=3000, steps=20, precision=precision)  # type: ignore[arg-type]
    for option in _options(reference, workload):
        assert option.launch is not None and option.launch.engine == "diffusers"
        command = option.launch.command
        code = re.search(r'python -c "([^"]+)"', command)
        assert code, command
        tree = ast.parse(code.group(1))
        calls = {
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", ""): node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
        }
        keywords = {k.arg: ast.unparse(k.value) for k in calls["pipe"].keywords}
        assert keywords["num_inference_steps"] == "20" and keywords["width"] == "1024"
        dtype = ast.unparse(next(k.value for k in calls["from_pretrained"].keywords if k.arg == "torch_dtype"))
        assert dtype == ("torch.float16" if precision == "fp16" else "torch.bfloat16")
        assert ("quantize_" in calls) == (precision == "fp8")
        batch = next(a for a in option.assumptions if a.name == "batch").value.split()[0]
        assert f"prompts[i:i + {batch}]" in ast.unparse(tree)
        if option.gpu_count > 1:
            assert f"l/{option.gpu_count} " in command


def test_a_fine_tune_where_flash_attention_does_not_run_is_unpacked_and_says_so(reference: Catalog) -> None:
    # TRL's packing keeps samples apart with FlashAttention-2's kernels, which Turing cards lack: the command pads
    # instead, and says that its batches run below the estimate.
    workload = FineTuningWorkload(model="llama-3.1-8b", method="qlora", sequence_length=2048)  # type: ignore[arg-type]
    option = run_estimate(reference, workload, "t4", 1)
    assert option.feasible and option.launch is not None, option.reasons
    tokens = words(option.launch.command)
    trl, _ = parse(tokens[tokens.index("trl.scripts.sft") + 1 :], TRL_SFT)
    assert "--packing" not in trl and "--attn_implementation" not in trl
    assert "unpacked" in option.launch.command and "Turing" in option.launch.command
