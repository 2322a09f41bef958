"""The aiconfigurator setups the kernel-table calibration points reproduce: GPUs, models, decode and prefill runs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The package's system names -> catalog GPU ids (a100_sxm is the 80 GiB part: its mem_capacity is 80 GiB).
GPUS = {"h100_sxm": "h100-sxm", "h200_sxm": "h200", "b200_sxm": "b200", "a100_sxm": "a100-sxm-80gb", "l40s": "l40s"}

# Catalog model ids -> the package's model paths (configs it ships); None: built from our catalog's shape.
MODELS: dict[str, str | None] = {
    "llama-3.1-8b": "meta-llama/Meta-Llama-3.1-8B",
    "llama-3.1-70b": "meta-llama/Meta-Llama-3.1-70B",
    "qwen3-32b": "Qwen/Qwen3-32B",
    "deepseek-v3": "deepseek-ai/DeepSeek-V3",
    "llama-2-70b": None,
}


@dataclass(frozen=True)
class Setup:
    system: str
    backend: str
    model: str
    precision: str  # bf16 | fp8 (weights; the KV cache follows where the GPU has FP8)
    tp: int
    batch: int
    phase: str  # decode | prefill
    isl: int
    osl: int = 1
    ep: int = 1


def _decode(system: str, backend: str, model: str, precision: str, tp: int, batch: int, ctx: str = "2k") -> Setup:
    isl, osl = {"1k": (512, 1024), "2k": (1024, 2048), "4k": (2048, 4096)}[ctx]
    ep = 8 if model == "deepseek-v3" else 1
    return Setup(system, backend, model, precision, tp, batch, "decode", isl, osl, ep)


def _prefill(system: str, backend: str, model: str, precision: str, tp: int, batch: int, isl: int) -> Setup:
    return Setup(system, backend, model, precision, tp, batch, "prefill", isl, 1, 8 if model == "deepseek-v3" else 1)


# Ampere's factors need two fit-set sources, and each engine's tables are one source.
AMPERE_ENGINES = ("vllm", "trtllm", "sglang")

SETUPS: list[Setup] = [
    # Tensor-parallel growth: Llama 3.1 70B FP8 on H200 at batch 64 (and the ends of the batch range at TP8).
    *(_decode("h200_sxm", "trtllm", "llama-3.1-70b", "fp8", tp, 64) for tp in (1, 2, 4, 8)),
    _decode("h200_sxm", "trtllm", "llama-3.1-70b", "fp8", 8, 1),
    _decode("h200_sxm", "trtllm", "llama-3.1-70b", "fp8", 8, 256),
    _decode("h200_sxm", "trtllm", "llama-3.1-70b", "fp8", 8, 64, "4k"),
    _decode("h200_sxm", "vllm", "llama-3.1-70b", "fp8", 8, 64),
    # FP8 against BF16 at batch 1 (the memory-bound end) on Hopper and Blackwell.
    *(
        _decode(s, "trtllm", "llama-3.1-8b", p, 1, 1)
        for s in ("h100_sxm", "h200_sxm", "b200_sxm")
        for p in ("bf16", "fp8")
    ),
    *(_decode("h100_sxm", "trtllm", "llama-3.1-70b", p, 4, 1) for p in ("bf16", "fp8")),
    *(_decode("b200_sxm", "trtllm", "llama-3.1-70b", p, 2, 1) for p in ("bf16", "fp8")),
    # Batch growth on one GPU.
    *(_decode("h100_sxm", "trtllm", "llama-3.1-8b", "fp8", 1, b) for b in (8, 32, 128, 256)),
    _decode("h100_sxm", "vllm", "llama-3.1-8b", "bf16", 1, 64),
    _decode("h100_sxm", "trtllm", "llama-3.1-8b", "fp8", 1, 64, "4k"),
    *(_decode("b200_sxm", "trtllm", "llama-3.1-70b", "fp8", tp, 64) for tp in (2, 8)),
    # Ampere (BF16 only), the same runs on each engine the package measures A100 for.
    *(_decode("a100_sxm", e, "llama-3.1-8b", "bf16", 1, b) for e in AMPERE_ENGINES for b in (1, 32)),
    *(_decode("a100_sxm", e, "llama-3.1-70b", "bf16", 8, b) for e in AMPERE_ENGINES for b in (1, 32)),
    # L40S: PCIe only, so the all-reduce tables dominate at TP > 1.
    *(_decode("l40s", "vllm", "llama-3.1-8b", "bf16", 1, b) for b in (1, 32)),
    _decode("l40s", "vllm", "llama-3.1-8b", "fp8", 1, 1),
    _decode("l40s", "vllm", "llama-3.1-8b", "fp8", 2, 1),
    *(_decode("l40s", "vllm", "llama-3.1-70b", "fp8", 2, b) for b in (1, 8)),
    *(_decode("l40s", "vllm", "llama-3.1-70b", "fp8", 4, b) for b in (1, 32)),
    _decode("l40s", "vllm", "llama-3.1-70b", "bf16", 8, 32),
    _decode("l40s", "trtllm", "llama-3.1-70b", "fp8", 4, 32),
    _decode("l40s", "vllm", "qwen3-32b", "bf16", 2, 8),
    # Qwen3 32B.
    _decode("h100_sxm", "trtllm", "qwen3-32b", "fp8", 1, 32),
    _decode("h100_sxm", "vllm", "qwen3-32b", "bf16", 2, 32),
    _decode("h200_sxm", "sglang", "qwen3-32b", "fp8", 1, 64),
    # DeepSeek-V3 (MoE, MLA): attention TP8, experts EP8.
    *(_decode("h200_sxm", "trtllm", "deepseek-v3", "fp8", 8, b) for b in (1, 64)),
    _decode("b200_sxm", "trtllm", "deepseek-v3", "fp8", 8, 64),
    # Llama 2 70B FP8 on H100 across tensor-parallel sizes.
    *(_decode("h100_sxm", "trtllm", "llama-2-70b", "fp8", tp, 64) for tp in (2, 4, 8)),
    # Prefills.
    *(_prefill("h100_sxm", "trtllm", "llama-3.1-8b", p, 1, 1, 2048) for p in ("bf16", "fp8")),
    _prefill("h100_sxm", "trtllm", "llama-3.1-8b", "fp8", 1, 1, 8192),
    _prefill("h100_sxm", "trtllm", "llama-3.1-8b", "fp8", 1, 8, 1024),
    _prefill("b200_sxm", "trtllm", "llama-3.1-8b", "fp8", 1, 1, 2048),
    *(_prefill("h200_sxm", "trtllm", "llama-3.1-70b", "fp8", tp, 1, 2048) for tp in (1, 4, 8)),
    _prefill("h200_sxm", "trtllm", "llama-3.1-70b", "fp8", 8, 1, 8192),
    _prefill("b200_sxm", "trtllm", "llama-3.1-70b", "fp8", 8, 1, 2048),
    *(_prefill("a100_sxm", e, "llama-3.1-70b", "bf16", 8, 1, 2048) for e in AMPERE_ENGINES),
    _prefill("l40s", "vllm", "llama-3.1-8b", "bf16", 1, 1, 2048),
    _prefill("l40s", "vllm", "llama-3.1-70b", "fp8", 4, 1, 2048),
    _prefill("h100_sxm", "trtllm", "qwen3-32b", "fp8", 2, 1, 8192),
    _prefill("h200_sxm", "trtllm", "deepseek-v3", "fp8", 8, 1, 2048),
]


def llama_config_dir(model: str, record: dict[str, Any], scratch: Path) -> str:
    """A directory holding a Llama-architecture config.json of a catalog model's dense shape (the package reads one)."""
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": record["hidden_size"],
        "intermediate_size": record["intermediate_size"],
        "num_attention_heads": record["attention_heads"],
        "num_hidden_layers": record["layers"],
        "num_key_value_heads": record["kv_heads"],
        "head_dim": record["head_dim"],
        "vocab_size": record["vocab_size"],
        "max_position_embeddings": record["max_context"],
        "hidden_act": "silu",
        "rms_norm_eps": 1e-5,
        "torch_dtype": "float16",
        "tie_word_embeddings": False,
    }
    directory = scratch / model
    directory.mkdir(exist_ok=True)
    (directory / "config.json").write_text(json.dumps(config))
    return str(directory)
