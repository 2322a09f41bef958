"""Models added from their config.json files, and the KV-cache rules for windowed and linear-attention layers."""

from __future__ import annotations

import pytest

from domain.catalog import Catalog
from domain.performance.memory import kv_bytes_per_sequence, kv_bytes_per_token
from tests.conftest import llm


def test_kimi_k2_has_its_query_rank_and_the_0905_context(reference: Catalog) -> None:
    kimi = llm(reference, "kimi-k2")
    assert kimi.mla is not None and kimi.mla.q_lora_rank == 1536
    assert kimi.max_context == 262144


def test_gpt_oss_120b_checkpoint_is_60_8_gib(reference: Catalog) -> None:
    model = llm(reference, "gpt-oss-120b")
    assert model.checkpoint_gb == pytest.approx(60.8 * 2**30 / 1e9, abs=0.05)


def test_deepseek_checkpoint_cites_what_its_source_says(reference: Catalog) -> None:
    model = llm(reference, "deepseek-r1")
    assert model.checkpoint_gb == 685 and any("685B parameters" in source for source in model.sources)


def test_gemma_3_keeps_the_whole_context_in_one_layer_of_six(reference: Catalog) -> None:
    gemma = llm(reference, "gemma-3-27b")
    # 2 x 16 KV heads x 128 x 2 bytes = 8,192 bytes per token and layer; 51 of 62 layers stop at the 1,024 window.
    assert kv_bytes_per_sequence(gemma, "bf16", 32768) == 8192 * (11 * 32768 + 51 * 1024)


def test_qwen3_next_linear_attention_layers_keep_no_kv_cache(reference: Catalog) -> None:
    model = llm(reference, "qwen3-next-80b-a3b")
    # 12 full-attention layers x 2 x 2 KV heads x 256 x 2 bytes.
    assert kv_bytes_per_token(model, "bf16") == 12 * 2 * 2 * 256 * 2
    assert kv_bytes_per_sequence(model, "bf16", 1000) == 12 * 2048 * 1000


@pytest.mark.parametrize(
    ("model_id", "layers", "hidden", "experts", "top_k"),
    [
        ("llama-4-scout", 48, 5120, 16, 1),
        ("llama-4-maverick", 48, 5120, 128, 1),
        ("qwen3-30b-a3b", 48, 2048, 128, 8),
        ("qwen3-coder-480b-a35b", 62, 6144, 160, 8),
        ("qwen3-next-80b-a3b", 48, 2048, 512, 10),
        ("glm-4.5-air", 46, 4096, 128, 8),
        ("glm-4.6", 92, 5120, 160, 8),
        ("mixtral-8x22b", 56, 6144, 8, 2),
        ("deepseek-v3.2", 61, 7168, 256, 8),
    ],
)
def test_moe_layouts_from_config(
    reference: Catalog, model_id: str, layers: int, hidden: int, experts: int, top_k: int
) -> None:
    model = llm(reference, model_id)
    assert model.moe is not None and model.sources
    assert (model.layers, model.hidden_size, model.moe.routed_experts, model.moe.experts_per_token) == (
        layers,
        hidden,
        experts,
        top_k,
    )
