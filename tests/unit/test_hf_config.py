"""config.json files map onto the catalog's architecture fields, with parameter counts close to the published ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from domain.catalog import Catalog
from domain.catalog.hf_config import HfConfigError, llm_from_hf_config
from tests.conftest import llm

CONFIGS = Path(__file__).parent.parent / "fixtures" / "hf_configs"


def config(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CONFIGS / f"{name}.json").read_text())
    return loaded


@pytest.mark.parametrize(
    "name",
    ["llama-3.1-8b", "qwen2.5-7b", "qwen3-32b", "qwen3-30b-a3b", "mistral-7b", "mixtral-8x7b", "deepseek-v3"],
)
def test_the_derived_architecture_matches_the_catalog(reference: Catalog, name: str) -> None:
    catalog_model = llm(reference, "deepseek-r1" if name == "deepseek-v3" else name)
    derived = llm_from_hf_config(config(name))
    fields = (
        "layers",
        "hidden_size",
        "attention_heads",
        "kv_heads",
        "head_dim",
        "vocab_size",
        "max_context",
        "tied_embeddings",
        "qkv_bias",
        "qk_norm",
    )
    assert {f: getattr(derived, f) for f in fields} == {f: getattr(catalog_model, f) for f in fields}
    assert (derived.moe, derived.mla, derived.attention) == (
        catalog_model.moe,
        catalog_model.mla,
        catalog_model.attention,
    )
    assert derived.params_b == pytest.approx(catalog_model.params_b, rel=0.02)
    if catalog_model.active_params_b:
        assert derived.active_params_b == pytest.approx(catalog_model.active_params_b, rel=0.05)


def test_windows_and_precisions_come_from_the_config() -> None:
    gemma = llm_from_hf_config(config("gemma-3-27b"))
    assert (gemma.sliding_window, gemma.sliding_window_layers, gemma.family) == (1024, "five_of_six", "gemma")
    gpt_oss = llm_from_hf_config(config("gpt-oss-120b"))
    assert (gpt_oss.sliding_window_layers, gpt_oss.native_precision) == ("alternate", "mxfp4")
    assert gpt_oss.params_b == pytest.approx(116.8, rel=0.01)
    assert llm_from_hf_config(config("deepseek-v3")).native_precision == "fp8"
    assert llm_from_hf_config(config("qwen2.5-7b")).sliding_window is None  # use_sliding_window is false


def test_deepseek_v2_without_a_query_rank() -> None:
    lite = llm_from_hf_config(config("deepseek-v2-lite"))
    assert lite.mla is not None and lite.mla.q_lora_rank is None
    assert lite.params_b == pytest.approx(15.7, rel=0.02)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"model_type": "bert"}, "model_type"),
        ({"model_type": None}, "model_type"),
        ({"num_hidden_layers": None}, "num_hidden_layers"),
        ({"hidden_size": "4096"}, "hidden_size"),
        ({"num_attention_heads": True}, "num_attention_heads"),
        ({"num_key_value_heads": 64}, "num_key_value_heads"),
        ({"vocab_size": -1}, "vocab_size"),
    ],
)
def test_a_broken_config_names_the_field(change: dict[str, Any], field: str) -> None:
    broken = {key: value for key, value in (config("llama-3.1-8b") | change).items() if value is not None}
    with pytest.raises(HfConfigError) as raised:
        llm_from_hf_config(broken)
    assert raised.value.field == field and field in raised.value.message


@pytest.mark.parametrize(
    ("name", "change", "field"),
    [
        # "false" is a non-empty string, so it was read as true: 8.03B parameters became 7.5B.
        ("llama-3.1-8b", {"tie_word_embeddings": "false"}, "tie_word_embeddings"),
        ("qwen2.5-7b", {"use_sliding_window": "no"}, "use_sliding_window"),
        # Grouped-query attention needs equal groups.
        ("llama-3.1-8b", {"num_key_value_heads": 3}, "num_key_value_heads"),
        # Without head_dim the head size is hidden_size / heads, which must be whole.
        ("mistral-7b", {"hidden_size": 4095}, "hidden_size"),
        ("mistral-7b", {"hidden_size": 1, "num_attention_heads": 1, "num_key_value_heads": 1}, "hidden_size"),
        ("mistral-7b", {"vocab_size": 3}, "vocab_size"),
        ("mistral-7b", {"max_position_embeddings": 2}, "max_position_embeddings"),
        ("mistral-7b", {"torch_dtype": "float128"}, "torch_dtype"),
        ("mistral-7b", {"torch_dtype": 16}, "torch_dtype"),
        ("gpt-oss-120b", {"layer_types": ["sliding_attention", "full_attention"] * 17}, "layer_types"),
        ("gpt-oss-120b", {"layer_types": ["sliding_attention", "mystery"] * 18}, "layer_types"),
        ("qwen3-30b-a3b", {"mlp_only_layers": [0, 0]}, "mlp_only_layers"),
        ("qwen3-30b-a3b", {"mlp_only_layers": [48]}, "mlp_only_layers"),
        ("qwen3-30b-a3b", {"mlp_only_layers": "0,1"}, "mlp_only_layers"),
    ],
)
def test_a_config_the_model_could_not_have_is_refused_naming_the_field(
    name: str, change: dict[str, Any], field: str
) -> None:
    with pytest.raises(HfConfigError) as raised:
        llm_from_hf_config(config(name) | change)
    assert raised.value.field == field and field in raised.value.message


def test_booleans_and_dtypes_the_config_states_are_read_as_stated() -> None:
    untied = llm_from_hf_config(config("llama-3.1-8b") | {"tie_word_embeddings": False})
    tied = llm_from_hf_config(config("llama-3.1-8b") | {"tie_word_embeddings": True})
    assert untied.params_b == pytest.approx(8.03, rel=0.01) and tied.params_b < untied.params_b
    assert llm_from_hf_config(config("mistral-7b") | {"torch_dtype": "float16"}).native_precision == "fp16"
