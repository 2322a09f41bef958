"""Memory formulas against hand-computed figures (perf-model.md sections 1, 3 and 4; models.md)."""

from __future__ import annotations

import pytest

from domain.catalog import Catalog, DiffusionModel
from domain.performance.memory import (
    GIB,
    diffusion_memory,
    experts_touched,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    kv_elements_per_token_layer,
    moe_split,
    usable_memory_bytes,
    weights_bytes,
)
from domain.performance.training_memory import activation_bytes, lora_params, training_memory
from tests.conftest import gpu, llm

# ---------------------------------------------------------------- weights


def test_llama_2_70b_bf16_weights(reference: Catalog) -> None:
    # 69.0e9 parameters x 2 bytes = 138e9 bytes
    assert weights_bytes(llm(reference, "llama-2-70b"), "bf16") == pytest.approx(138e9, rel=1e-12)


def test_llama_2_70b_weights_at_every_precision(reference: Catalog) -> None:
    model = llm(reference, "llama-2-70b")
    # 69e9 x {4, 1, 0.53 (int4 group-128), 0.531 (MXFP4)} bytes
    assert weights_bytes(model, "fp32") == pytest.approx(276e9)
    assert weights_bytes(model, "fp8") == pytest.approx(69e9)
    assert weights_bytes(model, "int4") == pytest.approx(36.57e9)
    assert weights_bytes(model, "fp4") == pytest.approx(36.639e9)


# ---------------------------------------------------------------- KV cache


def test_llama_2_70b_kv_per_token(reference: Catalog) -> None:
    # 2 (K and V) x 80 layers x 8 KV heads x 128 head_dim x 2 bytes = 327,680 B = 320 KiB
    per_token = kv_bytes_per_token(llm(reference, "llama-2-70b"), "bf16")
    assert per_token == 327_680
    assert per_token == 320 * 1024


def test_llama_2_70b_kv_per_4k_sequence(reference: Catalog) -> None:
    # 327,680 B x 4096 tokens = 1,342,177,280 B = 1.25 GiB
    per_sequence = kv_bytes_per_sequence(llm(reference, "llama-2-70b"), "bf16", 4096)
    assert per_sequence == 1_342_177_280
    assert per_sequence / GIB == 1.25


def test_deepseek_r1_mla_kv_per_token(reference: Catalog) -> None:
    # MLA keeps one latent per token and layer, no separate K and V:
    # 61 layers x (512 kv_lora_rank + 64 qk_rope_head_dim) x 2 bytes = 61 x 576 x 2 = 70,272 B
    assert kv_bytes_per_token(llm(reference, "deepseek-r1"), "bf16") == 70_272


def test_deepseek_r1_mla_kv_is_replicated_under_tensor_parallel(reference: Catalog) -> None:
    model = llm(reference, "deepseek-r1")
    # The latent is shared by all 128 heads, so each of the 8 GPUs holds the whole 70,272 B, not 70,272 / 8 = 8,784 B.
    assert kv_bytes_per_sequence(model, "bf16", 1, tensor_parallel=8) == 70_272
    assert kv_elements_per_token_layer(model, 8) == kv_elements_per_token_layer(model, 1) == 576


@pytest.mark.parametrize(
    ("tensor_parallel", "elements"),
    [
        (1, 2 * 8 * 128),  # all 8 KV heads: 2048 elements per token and layer
        (2, 2 * 4 * 128),  # 4 heads per GPU: 1024
        (4, 2 * 2 * 128),  # 2 heads per GPU: 512
        (8, 2 * 1 * 128),  # 1 head per GPU: 256
        (16, 2 * 1 * 128),  # 16 GPUs > 8 KV heads: each GPU still holds (a replica of) 1 head = 256
    ],
)
def test_gqa_kv_shards_down_to_one_head_per_gpu(reference: Catalog, tensor_parallel: int, elements: int) -> None:
    assert kv_elements_per_token_layer(llm(reference, "llama-3.1-70b"), tensor_parallel) == elements


def test_gqa_kv_stops_shrinking_once_tensor_parallel_exceeds_kv_heads(reference: Catalog) -> None:
    model = llm(reference, "llama-3.1-70b")
    # 80 layers x 256 elements x 2 bytes = 40,960 B per token per GPU at TP 8 and at TP 16 alike
    at_8 = kv_bytes_per_sequence(model, "bf16", 1, tensor_parallel=8)
    at_16 = kv_bytes_per_sequence(model, "bf16", 1, tensor_parallel=16)
    assert at_8 == at_16 == 80 * 256 * 2
    # ... while below 8 it halves with each doubling: TP 4 holds 2 heads = 81,920 B
    assert kv_bytes_per_sequence(model, "bf16", 1, tensor_parallel=4) == 2 * at_8


def test_sliding_window_on_every_layer_caps_the_cache(reference: Catalog) -> None:
    model = llm(reference, "mistral-7b")
    assert model.sliding_window == 4096
    # Every layer keeps at most 4096 tokens: 32 x 2 x 8 x 128 x 2 B x 4096 = 536,870,912 B for 4096 and for 8192 tokens
    at_4k = kv_bytes_per_sequence(model, "bf16", 4096)
    at_8k = kv_bytes_per_sequence(model, "bf16", 8192)
    assert at_4k == 32 * 2 * 8 * 128 * 2 * 4096 == 536_870_912
    assert at_8k == at_4k
    # Below the window the cache still grows linearly: 2048 tokens hold half of it
    assert kv_bytes_per_sequence(model, "bf16", 2048) == at_4k / 2


def test_sliding_window_on_alternate_layers_lies_between(reference: Catalog) -> None:
    model = llm(reference, "gpt-oss-120b")
    assert (model.sliding_window, model.sliding_window_layers) == (128, "alternate")
    per_token_layer = 2 * 8 * 64 * 2  # K and V x 8 KV heads x head_dim 64 x 2 bytes = 2048 B
    tokens = 8192
    got = kv_bytes_per_sequence(model, "bf16", tokens)
    # 18 full layers hold 8192 tokens, 18 windowed layers hold 128: 2048 x 18 x (8192 + 128) = 306,708,480 B
    assert got == per_token_layer * 18 * (tokens + 128) == 306_708_480
    no_window = per_token_layer * 36 * tokens  # 603,979,776 B
    all_windowed = per_token_layer * 36 * 128  # 9,437,184 B
    assert all_windowed < got < no_window


# ---------------------------------------------------------------- mixture of experts


def test_deepseek_r1_moe_split(reference: Catalog) -> None:
    model = llm(reference, "deepseek-r1")
    base, per_expert = moe_split(model)
    # per routed expert (summed over the MoE layers) = (671 - 37)e9 / (256 - 8) = 634e9 / 248 = 2.5565e9
    assert per_expert == pytest.approx(634e9 / 248)
    # base (attention, embeddings, dense layers, shared expert) = 671e9 - 256 x 2.5565e9 = 16.548e9
    assert base == pytest.approx(16.548387e9, rel=1e-6)
    assert base + 256 * per_expert == pytest.approx(671e9)
    assert base + 8 * per_expert == pytest.approx(37e9)


def test_dense_model_has_no_experts(reference: Catalog) -> None:
    model = llm(reference, "llama-3.1-70b")
    assert moe_split(model) == (70.6e9, 0.0)
    assert experts_touched(model, 64) == 0.0


@pytest.mark.parametrize(
    ("tokens", "touched"),
    [
        # 256 x (1 - (1 - 8/256)^B); perf-model.md adds the shared expert (B=1 -> 9, B=8 -> 58, B=64 -> 223)
        (1, 8.0),  # 256 x (1 - 0.96875) = 8
        (8, 57.42),  # 256 x (1 - 0.96875^8 = 0.77570) = 57.42
        (64, 222.44),  # 256 x (1 - 0.96875^64 = 0.13108) = 222.44
    ],
)
def test_deepseek_r1_experts_touched(reference: Catalog, tokens: int, touched: float) -> None:
    assert experts_touched(llm(reference, "deepseek-r1"), tokens) == pytest.approx(touched, abs=0.01)


def test_experts_touched_approaches_all_experts(reference: Catalog) -> None:
    model = llm(reference, "deepseek-r1")
    # 256 x (1 - 0.96875^4096) = 256 to within 1e-50
    assert experts_touched(model, 4096) == pytest.approx(256)
    assert experts_touched(model, 0) == 0.0


# ---------------------------------------------------------------- training and fine-tuning


def full_training(catalog: Catalog, optimizer: str, gpus: int) -> tuple[float, float]:
    model = llm(catalog, "llama-3.1-8b")
    memory = training_memory(
        model,
        gpu(catalog, "h100-sxm"),
        method="full",
        optimizer=optimizer,
        sequence_length=4096,
        gpus=gpus,
        tensor_parallel=1,
        recompute_layers=model.layers,
    )
    return memory.weights_bytes, memory.optimizer_bytes


P_8B = 8.03e9


def test_full_fine_tune_adamw_on_one_gpu(reference: Catalog) -> None:
    weights, optimizer = full_training(reference, "adamw", gpus=1)
    # bf16 weights 2P = 16.06e9 B
    assert weights == pytest.approx(2 * P_8B)
    # bf16 grads 2P + fp32 master, m and v 12P = 14P = 112.42e9 B
    assert optimizer == pytest.approx(14 * P_8B)
    # 16 B/param x 8.03e9 = 128.48e9 B, ~128.5 GB
    assert weights + optimizer == pytest.approx(128.48e9)


def test_full_fine_tune_adam_8bit_on_one_gpu(reference: Catalog) -> None:
    weights, optimizer = full_training(reference, "adamw_8bit", gpus=1)
    # 2P weights + 2P grads + 4P fp32 master + 1P m + 1P v = 10P = 80.3e9 B
    assert weights + optimizer == pytest.approx(10 * P_8B)
    assert optimizer == pytest.approx(8 * P_8B)


def test_zero3_over_8_gpus_divides_states_and_adds_gathered_layers(reference: Catalog) -> None:
    weights, optimizer = full_training(reference, "adamw", gpus=8)
    # States: 16P / 8 = 2P = 16.06e9 B per GPU (2P/8 weights + 14P/8 optimizer).
    assert optimizer == pytest.approx(14 * P_8B / 8)  # 14.0525e9 B
    # ZeRO-3 gathers a whole layer's bf16 weights before using it, two layers in flight with prefetch:
    # 2 layers x (8.03e9 / 32 layers) params x 2 B / TP 1 = 4P/32 = 1.00375e9 B on top of the 2P/8 = 2.0075e9 shard.
    gathered = 2 * (P_8B / 32) * 2.0
    assert gathered == pytest.approx(1.00375e9)
    assert weights == pytest.approx(2 * P_8B / 8 + gathered)  # 3.01125e9 B
    assert weights + optimizer == pytest.approx(16 * P_8B / 8 + gathered)  # 17.06375e9 B


def test_one_gpu_gathers_nothing(reference: Catalog) -> None:
    # With gpus == tensor_parallel nothing is sharded by ZeRO, so there is nothing to gather: exactly 2P.
    weights, _ = full_training(reference, "adamw", gpus=1)
    assert weights == pytest.approx(2 * P_8B, rel=1e-12)


def test_qlora_base_of_a_70b_model_fits_one_48gb_gpu(reference: Catalog) -> None:
    model = llm(reference, "llama-2-70b")
    memory = training_memory(
        model,
        gpu(reference, "l40s"),
        method="qlora",
        optimizer="adamw",
        sequence_length=512,
        gpus=1,
        tensor_parallel=1,
        recompute_layers=model.layers,
    )
    # NF4 base: 69e9 x 0.516 B = 35.604e9 B, under 48 GB
    assert memory.weights_bytes == pytest.approx(35.604e9)
    assert memory.weights_bytes < 48e9
    # Rank-16 adapters on every projection: 80 x 16 x (q 16384 + k,v 2 x 9216 + o 16384 + MLP 3 x 36864) = 207.1e6
    # params, with 16 B of state each = 3.3135e9 B
    assert lora_params(model, 16) == 80 * 16 * (16384 + 2 * 9216 + 16384 + 3 * 36864) == 207_093_760
    assert memory.optimizer_bytes == pytest.approx(207_093_760 * 4)
    # The whole run (base + adapter states + ~0.95 GB of activations at 512 tokens) fits the L40S's 46.3 GB usable
    assert memory.fits


# ---------------------------------------------------------------- usable memory and diffusion


def test_usable_memory_of_hbm_gpu(reference: Catalog) -> None:
    # H100 SXM 80 GB HBM3: the label's "GB" are GiB, less 0.5 GiB: 79.5 GiB = 85,362,475,008 B
    assert usable_memory_bytes(gpu(reference, "h100-sxm")) == 79.5 * GIB == 85_362_475_008


def test_usable_memory_of_gddr_gpu(reference: Catalog) -> None:
    # L40S 48 GB GDDR6: ECC takes ~6%: 48 x 0.94 = 45.12 GiB = 48,446,619,402.24 B
    assert usable_memory_bytes(gpu(reference, "l40s")) == pytest.approx(48 * 0.94 * GIB, rel=1e-12)


def test_sdxl_fp16_weights(reference: Catalog) -> None:
    model = reference.model("sdxl")
    assert isinstance(model, DiffusionModel)
    memory = diffusion_memory(model, gpu(reference, "a100-sxm-80gb"), "fp16", 1024, 1024)
    # (UNet 2.567 + CLIP-L 0.123 + bigG 0.695 + VAE 0.084)e9 = 3.469e9 params x 2 B = 6.938e9 B ("SDXL fp16 ~7 GB")
    assert memory.weights_bytes == pytest.approx(6.938e9)
    # Activations at 1024x1024: 1.5 GB x 1.0 + 1 GiB = 2.5737e9 B
    assert memory.activations_bytes == pytest.approx(1.5e9 + GIB)
    assert memory.fits


def test_quantised_sdxl_keeps_encoders_in_16_bit(reference: Catalog) -> None:
    model = reference.model("sdxl")
    assert isinstance(model, DiffusionModel)
    memory = diffusion_memory(model, gpu(reference, "h100-sxm"), "fp8", 1024, 1024)
    # UNet 2.567e9 x 1 B + (CLIP-L 0.123 + bigG 0.695 + VAE 0.084)e9 = 0.902e9 x 2 B = 2.567e9 + 1.804e9 = 4.371e9 B
    assert memory.weights_bytes == pytest.approx(4.371e9)


def test_activations_per_layer_follow_korthikanti_with_sequence_parallelism(reference: Catalog) -> None:
    # arXiv:2205.05198 Table 2: tensor + sequence parallel with the attention core not stored keeps 34 s b h / t
    # bytes per layer; the logits (s x vocab x 6) are the only other term.
    model = llm(reference, "llama-3.1-405b")
    s, h, t = 8192, model.hidden_size, 8
    logits = s * model.vocab_size * 6.0
    per_layer = (activation_bytes(model, s, t, 0) - logits / t) / model.layers
    assert per_layer == pytest.approx(34 * s * h / t)
