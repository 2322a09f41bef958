"""Parameters counted the one way every published total counts them, and FLOPs only for the ones a token multiplies."""

from __future__ import annotations

import msgspec
import pytest

from domain.catalog import Catalog, LlmModel
from domain.catalog.hf_config import llm_from_hf_config
from domain.performance.memory import active_params, matmul_params
from domain.performance.training_flops import forward_flops_per_token, training_flops_per_token
from domain.workloads.requests import CustomModel, InferenceWorkload
from domain.workloads.resolve import normalise
from tests.conftest import llm
from tests.unit.test_hf_config import config


def test_an_untied_input_embedding_is_a_lookup_not_a_gemm(reference: Catalog) -> None:
    model = llm(reference, "llama-3.1-8b")
    lookup = model.vocab_size * model.hidden_size  # 128,256 x 4,096: 0.53B of Llama 3 8B's 8.03B
    assert active_params(model) - matmul_params(model) == lookup
    # Tying the matrices removes the lookup's copy: the one matrix left is the output head, a GEMM.
    tied = msgspec.structs.replace(model, tied_embeddings=True)
    assert matmul_params(tied) == active_params(tied)
    for per_param, untied, kept in (
        (6, training_flops_per_token(model, 4096), training_flops_per_token(tied, 4096)),
        (4, training_flops_per_token(model, 4096, "lora"), training_flops_per_token(tied, 4096, "lora")),
        (2, forward_flops_per_token(model, 4096), forward_flops_per_token(tied, 4096)),
    ):
        assert kept - untied == pytest.approx(per_param * lookup)


def test_active_counts_hold_both_embedding_matrices_as_totals_do(reference: Catalog) -> None:
    # Where an MoE model's layers are all alike (every layer routed, no shared expert, softmax attention), its active
    # count follows from the architecture; OpenAI's 5.1B for gpt-oss-120b leaves the input embedding out (0.58B).
    checked = []
    for model in reference.models:
        moe = getattr(model, "moe", None)
        if moe is None or moe.shared_experts or moe.first_dense_layers or model.mla or model.linear_attention_layers:
            continue
        kv_heads = model.kv_heads or model.attention_heads
        attention = model.hidden_size * model.head_dim * 2 * (model.attention_heads + kv_heads)
        routed = moe.experts_per_token * 3 * model.hidden_size * moe.expert_intermediate_size
        router = model.hidden_size * moe.routed_experts
        embeddings = model.vocab_size * model.hidden_size * (1 if model.tied_embeddings else 2)
        derived = embeddings + model.layers * (attention + routed + router)
        assert active_params(model) == pytest.approx(derived, rel=0.03), model.id
        checked.append(model.id)
    assert {"gpt-oss-120b", "gpt-oss-20b", "qwen3-30b-a3b", "mixtral-8x7b"} <= set(checked)


@pytest.mark.parametrize("name", ["gemma-3-27b", "llama-3.1-8b", "gpt-oss-120b"])
def test_a_pasted_config_says_whether_its_embeddings_are_tied(reference: Catalog, name: str) -> None:
    derived = llm_from_hf_config(config(name))
    catalog_model = llm(reference, name)
    assert derived.tied_embeddings == catalog_model.tied_embeddings
    assert (derived.active_params_b or derived.params_b) == pytest.approx(
        catalog_model.active_params_b or catalog_model.params_b, rel=0.03
    )


def test_a_gemma_3_config_that_does_not_say_is_tied(reference: Catalog) -> None:
    # Gemma 3's released config.json files leave tie_word_embeddings out; transformers then ties the matrices.
    released = config("gemma-3-27b")
    del released["tie_word_embeddings"]
    derived = llm_from_hf_config(released)
    assert derived.tied_embeddings
    assert derived.params_b == pytest.approx(llm(reference, "gemma-3-27b").params_b, rel=0.03)
    untied = llm_from_hf_config(released | {"tie_word_embeddings": False})
    assert untied.params_b - derived.params_b == pytest.approx(262208 * 5376 / 1e9, abs=0.002)


def test_a_custom_model_says_whether_its_embeddings_are_tied(reference: Catalog) -> None:
    figures = {"params_b": 2.6, "layers": 26, "hidden_size": 2304, "attention_heads": 8, "kv_heads": 4}
    flops = {}
    for tied in (False, True):
        custom = CustomModel(vocab_size=256_000, tied_embeddings=tied, **figures)  # type: ignore[arg-type]
        model = normalise(InferenceWorkload(custom_model=custom), reference).model
        assert isinstance(model, LlmModel) and model.tied_embeddings == tied
        flops[tied] = matmul_params(model)
    assert flops[True] - flops[False] == pytest.approx(256_000 * 2304)
