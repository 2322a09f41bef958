"""A Hugging Face config.json as a catalog language model: the architecture it states and the parameters it implies."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from domain.catalog.records import LlmModel, Mla, MoE

MAX_FIGURE = 10_000_000  # no real config field is larger (context lengths reach ~10M)
# Below these no checkpoint anyone serves exists (the smallest public LLMs have hidden 64+, vocabularies in the
# thousands, contexts of 512+); smaller figures are typos that would price a toy.
_MINIMUMS = {"hidden_size": 64, "vocab_size": 256, "max_position_embeddings": 128}

# model_type -> family; the listed families are the ones whose config.json keys are mapped below.
FAMILIES: dict[str, str] = {
    "llama": "llama",
    "llama4": "llama",
    "llama4_text": "llama",
    "mistral": "mistral",
    "mixtral": "mistral",
    "qwen2": "qwen",
    "qwen3": "qwen",
    "qwen2_moe": "qwen",
    "qwen3_moe": "qwen",
    "deepseek_v2": "deepseek",
    "deepseek_v3": "deepseek",
    "kimi_k2": "kimi",
    "glm4_moe": "glm",
    "gpt_oss": "gpt-oss",
    "gemma3": "gemma",
    "gemma3_text": "gemma",
}
_MLA_TYPES = {"deepseek_v2", "deepseek_v3", "kimi_k2"}
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
_WINDOW_SHARES = {"all": 1.0, "alternate": 0.5, "five_of_six": 5 / 6}
# Switches the derivation reads, whichever family states them.
_FLAGS = ("tie_word_embeddings", "use_sliding_window")
# Families whose transformers config class ties the embeddings unless told otherwise: Gemma 3's released config.json
# files do not state tie_word_embeddings, and Gemma3TextConfig defaults it to True.
_TIED_BY_DEFAULT = frozenset({"gemma3", "gemma3_text"})
# Attention details of a family's modeling code that config.json does not state (transformers' Qwen2Attention builds
# biased query, key and value projections; Qwen3's and Gemma 3's normalise each query and key head).
_QKV_BIAS_TYPES = frozenset({"qwen2", "qwen2_moe"})
_QK_NORM_TYPES = frozenset({"qwen3", "qwen3_moe", "gemma3", "gemma3_text"})
_LAYER_TYPES = frozenset({"full_attention", "sliding_attention", "chunked_attention"})


class HfConfigError(ValueError):
    """A config.json that cannot describe a model; `field` names the key at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class _Config:
    """Typed access to the keys, naming the missing or malformed one."""

    raw: Mapping[str, Any]

    def has(self, key: str) -> bool:
        return self.raw.get(key) is not None

    def count(self, key: str, default: int | None = None, minimum: int = 1) -> int:
        value = self.raw.get(key, default)
        if value is None:
            raise HfConfigError(key, f"{key} is missing")
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_FIGURE:
            raise HfConfigError(key, f"{key} must be a whole number from {minimum} to {MAX_FIGURE}")
        return value

    def optional(self, key: str, minimum: int = 1) -> int | None:
        return self.count(key, minimum=minimum) if self.has(key) else None

    def flag(self, key: str, default: bool = False) -> bool:
        """A JSON boolean: the string "false" is truthy in Python, so anything else is refused, not guessed."""
        value = self.raw.get(key, default)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise HfConfigError(key, f"{key} must be true or false (a JSON boolean), not {value!r}")
        return value

    def per_layer(self, key: str, layers: int) -> list[Any] | None:
        """A list with one entry per hidden layer, or None when absent."""
        value = self.raw.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or len(value) != layers:
            raise HfConfigError(key, f"{key} must list one entry for each of the {layers} num_hidden_layers")
        return value


def _flatten(config: Mapping[str, Any]) -> tuple[str, _Config]:
    """The model_type and the text model's keys (multimodal checkpoints keep them under text_config)."""
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise HfConfigError("model_type", "model_type is missing")
    if model_type not in FAMILIES:
        raise HfConfigError(
            "model_type", f"model_type {model_type!r} is not supported; supported: {', '.join(sorted(FAMILIES))}"
        )
    text = config.get("text_config")
    if isinstance(text, Mapping):
        return model_type, _Config({**config, **text})
    return model_type, _Config(config)


def _precision(config: _Config) -> str:
    dtypes = {key: config.raw[key] for key in ("torch_dtype", "dtype") if config.raw.get(key) is not None}
    for key, dtype in dtypes.items():
        if dtype not in _DTYPES:
            raise HfConfigError(key, f"{key} {dtype!r} is not a known weight type; known: {', '.join(_DTYPES)}")
    quantization = config.raw.get("quantization_config")
    method = quantization.get("quant_method") if isinstance(quantization, Mapping) else None
    if method in ("fp8", "mxfp4"):
        return str(method)
    return _DTYPES[next(iter(dtypes.values()), "bfloat16")]


def _moe(model_type: str, config: _Config, layers: int) -> MoE | None:
    """The expert layout, or None for a dense model; interleaved MoE layers count the rest as dense."""
    if model_type in ("mixtral", "gpt_oss", "llama4", "llama4_text"):
        routed_key = "num_local_experts"
    elif model_type in ("qwen2_moe", "qwen3_moe"):
        routed_key = "num_experts"
    elif model_type in _MLA_TYPES or model_type == "glm4_moe":
        routed_key = "n_routed_experts"
    else:
        return None
    if not config.has(routed_key) and model_type in _MLA_TYPES:
        return None  # DeepSeek-V2-Lite-style dense variants leave the expert keys out
    routed = config.count(routed_key, minimum=2)
    top_k = config.count("num_experts_per_tok")
    if top_k >= routed:
        raise HfConfigError("num_experts_per_tok", "num_experts_per_tok must be fewer than the routed experts")
    if model_type in ("mixtral", "gpt_oss"):
        expert, shared, dense = config.count("intermediate_size"), 0, 0
    elif model_type in ("llama4", "llama4_text"):
        step = config.count("interleave_moe_layer_step", default=1)
        expert, shared, dense = config.count("intermediate_size"), 1, layers - layers // step
    elif model_type == "qwen2_moe":
        expert = config.count("moe_intermediate_size")
        shared = 1 if config.optional("shared_expert_intermediate_size") else 0
        dense = 0
    elif model_type == "qwen3_moe":
        dense = len(_layer_indices(config, "mlp_only_layers", layers))
        expert, shared = config.count("moe_intermediate_size"), 0
    else:
        expert = config.count("moe_intermediate_size")
        shared = config.count("n_shared_experts", default=0, minimum=0)
        dense = config.count("first_k_dense_replace", default=0, minimum=0)
    if dense >= layers:
        raise HfConfigError("first_k_dense_replace", "every layer is dense: no layer would hold the experts")
    return MoE(
        routed_experts=routed,
        experts_per_token=top_k,
        shared_experts=shared,
        first_dense_layers=dense,
        expert_intermediate_size=expert,
    )


def _layer_indices(config: _Config, key: str, layers: int) -> set[int]:
    """A list of distinct layer indices (0 to layers - 1)."""
    value = config.raw.get(key) or []
    valid = isinstance(value, list) and all(type(i) is int and 0 <= i < layers for i in value)
    if not valid or len(set(value)) != len(value):
        raise HfConfigError(key, f"{key} must list distinct layer indices from 0 to {layers - 1}")
    return set(value)


def _check_shapes(config: _Config, layers: int) -> None:
    """Flags are JSON booleans; per-layer lists name each of the num_hidden_layers once, with known entries."""
    for key in _FLAGS:
        config.flag(key)
    kinds = config.per_layer("layer_types", layers)
    if kinds is not None and not all(kind in _LAYER_TYPES for kind in kinds):
        raise HfConfigError("layer_types", f"layer_types entries must be one of {', '.join(sorted(_LAYER_TYPES))}")
    no_rope = config.per_layer("no_rope_layers", layers)
    if no_rope is not None and not all(flag in (0, 1) and not isinstance(flag, float) for flag in no_rope):
        raise HfConfigError("no_rope_layers", "no_rope_layers entries must be 0 or 1")


def _mla(config: _Config) -> Mla:
    return Mla(
        kv_lora_rank=config.count("kv_lora_rank"),
        qk_rope_head_dim=config.count("qk_rope_head_dim"),
        qk_nope_head_dim=config.count("qk_nope_head_dim"),
        v_head_dim=config.count("v_head_dim"),
        q_lora_rank=config.optional("q_lora_rank"),
    )


def _window(model_type: str, config: _Config) -> tuple[int | None, str | None]:
    """The sliding window and which layers use it."""
    if model_type == "qwen2" and not config.flag("use_sliding_window"):
        return None, None
    window = config.optional("sliding_window")
    if window is None:
        return None, None
    layer_types = config.raw.get("layer_types")
    if layer_types:
        share = sum(1 for kind in layer_types if kind == "sliding_attention") / len(layer_types)
        if share == 0:
            return None, None
        return window, min(_WINDOW_SHARES, key=lambda name: abs(_WINDOW_SHARES[name] - share))
    if model_type == "gpt_oss":
        return window, "alternate"
    if model_type in ("gemma3", "gemma3_text"):
        pattern = config.count("sliding_window_pattern", default=6)
        return window, {1: "all", 2: "alternate"}.get(pattern, "five_of_six")
    return window, "all"


def _mlp_params(hidden: int, inner: int) -> float:
    return 3.0 * hidden * inner  # gated MLP: gate, up and down projections


def _parameters(
    config: _Config, layers: int, hidden: int, attention: float, dense_inner: int, moe: MoE | None, tied: bool
) -> tuple[float, float | None]:
    """Total and active parameters, in billions: embeddings, attention, MLPs and experts (norms are negligible)."""
    vocab = config.count("vocab_size", minimum=_MINIMUMS["vocab_size"])
    embeddings = vocab * hidden * (1 if tied else 2)
    if moe is None:
        total = embeddings + layers * (attention + _mlp_params(hidden, dense_inner))
        return round(total / 1e9, 3), None
    moe_layers = layers - moe.first_dense_layers
    expert = _mlp_params(hidden, moe.expert_intermediate_size)
    shared_inner = config.optional("shared_expert_intermediate_size") or moe.expert_intermediate_size
    shared = moe.shared_experts * _mlp_params(hidden, shared_inner)
    router = hidden * moe.routed_experts
    base = embeddings + layers * attention + moe.first_dense_layers * _mlp_params(hidden, dense_inner)
    total = base + moe_layers * (moe.routed_experts * expert + shared + router)
    active = base + moe_layers * (moe.experts_per_token * expert + shared + router)
    return round(total / 1e9, 3), round(active / 1e9, 3)


def llm_from_hf_config(config: Mapping[str, Any], *, model_id: str = "custom", name: str | None = None) -> LlmModel:
    """The catalog model a config.json describes; HfConfigError names the missing key or unsupported model_type."""
    model_type, c = _flatten(config)
    layers = c.count("num_hidden_layers")
    hidden = c.count("hidden_size", minimum=_MINIMUMS["hidden_size"])
    heads = c.count("num_attention_heads")
    _check_shapes(c, layers)
    moe = _moe(model_type, c, layers)
    llama4 = model_type in ("llama4", "llama4_text")
    dense_inner = c.count("intermediate_size_mlp" if llama4 else "intermediate_size")
    mla = None
    kv_heads: int | None
    if model_type in _MLA_TYPES:
        mla = _mla(c)
        head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        kv_heads = None
        q = (
            hidden * mla.q_lora_rank + mla.q_lora_rank * heads * head_dim
            if mla.q_lora_rank
            else hidden * heads * head_dim
        )
        kv = hidden * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank * heads * (
            mla.qk_nope_head_dim + mla.v_head_dim
        )
        attention = float(q + kv + heads * mla.v_head_dim * hidden)
    else:
        kv_heads = c.count("num_key_value_heads", default=heads)
        if heads % kv_heads:
            # Grouped-query attention shares each KV head among an equal group of query heads.
            raise HfConfigError("num_key_value_heads", "num_key_value_heads must divide num_attention_heads")
        if not c.has("head_dim") and hidden % heads:
            raise HfConfigError(
                "hidden_size", "hidden_size must be divisible by num_attention_heads (or give head_dim)"
            )
        head_dim = c.count("head_dim", default=hidden // heads)
        attention = float(hidden * head_dim * (2 * heads + 2 * kv_heads))
    tied = c.flag("tie_word_embeddings", default=model_type in _TIED_BY_DEFAULT)
    params_b, active_b = _parameters(c, layers, hidden, attention, dense_inner, moe, tied)
    window, window_layers = _window(model_type, c)
    max_context = c.count("max_position_embeddings", minimum=_MINIMUMS["max_position_embeddings"])
    return LlmModel(
        id=model_id,
        name=name or str(config.get("_name_or_path") or model_id),
        family=FAMILIES[model_type],
        params_b=params_b,
        active_params_b=active_b,
        layers=layers,
        hidden_size=hidden,
        # As in the catalog: the per-expert size when every layer holds experts.
        intermediate_size=moe.expert_intermediate_size if moe and not moe.first_dense_layers else dense_inner,
        attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        vocab_size=c.count("vocab_size"),
        tied_embeddings=tied,
        qkv_bias=model_type in _QKV_BIAS_TYPES,
        qk_norm=model_type in _QK_NORM_TYPES,
        max_context=max_context,
        attention="mla" if mla else ("mha" if kv_heads == heads else "gqa"),
        sliding_window=window,
        sliding_window_layers=window_layers,  # type: ignore[arg-type]
        moe=moe,
        mla=mla,
        native_precision=_precision(c),  # type: ignore[arg-type]
        sources=(f"config.json (model_type {model_type})",),
        notes="Derived from a config.json; parameters estimated from the architecture.",
    )
