"""Descriptions for tool arguments whose request types carry none, so a language model knows what each field means."""

from __future__ import annotations

from typing import Any

# By field name: the request types share their vocabulary, so one name means one thing in every tool.
FIELD_DESCRIPTIONS: dict[str, str] = {
    "workload": "What to run: `kind` (inference, training, fine_tuning, image_generation) and its fields.",
    "kind": "Workload kind: inference, training, fine_tuning or image_generation.",
    "model": "Catalog model id or name, e.g. 'llama-3.1-70b', 'deepseek-r1', 'qwen3-235b-a22b', 'sdxl' (list_models).",
    "custom_model": "A model not in the catalog, by its architecture figures (instead of `model`).",
    "name": "A name for the custom model, shown in the answer.",
    "params_b": "Total parameters, billions.",
    "active_params_b": "Parameters active per token for a mixture-of-experts model, billions.",
    "layers": "Number of transformer layers (num_hidden_layers).",
    "hidden_size": "Model width (hidden_size).",
    "intermediate_size": "MLP inner size (intermediate_size); per expert for MoE models.",
    "attention_heads": "Query heads (num_attention_heads).",
    "kv_heads": "Key/value heads (num_key_value_heads); fewer than attention_heads means grouped-query attention.",
    "head_dim": "Size of one attention head; default hidden_size / attention_heads.",
    "vocab_size": "Vocabulary size.",
    "max_context": "Longest context the model supports, tokens.",
    "attention": "Attention type: mha, gqa or mla (multi-head latent attention, DeepSeek-style).",
    "kv_lora_rank": "MLA only: the compressed KV latent size (kv_lora_rank).",
    "qk_rope_head_dim": "MLA only: the rotary part of each query/key head (qk_rope_head_dim).",
    "routed_experts": "Mixture of experts: number of routed experts per MoE layer.",
    "experts_per_token": "Mixture of experts: experts each token is routed to (top-k).",
    "shared_experts": "Mixture of experts: always-active shared experts per layer.",
    "precision": "Weight precision to run in, e.g. bf16, fp8, int4 (inference) or bf16/fp8 (training).",
    "kv_cache_precision": "Precision of the KV cache: bf16/fp16 or fp8; default follows the weights.",
    "input_tokens": "Prompt tokens per request.",
    "output_tokens": "Generated tokens per request.",
    "concurrency": "Requests served at the same time (simultaneous users).",
    "requests_per_second": "Request rate to sustain, per second.",
    "max_ttft_ms": "Longest acceptable time to first token, milliseconds.",
    "max_tpot_ms": "Longest acceptable time per output token, milliseconds.",
    "use_case": "Inference: chat (default; an option must keep TPOT <= 100 ms and TTFT <= 2,000 ms unless "
    "max_tpot_ms/max_ttft_ms say otherwise), agent (TTFT <= 5,000 ms, TPOT <= 100 ms) or batch (throughput only).",
    "train_tokens": "Tokens seen in the run (dataset size x epochs).",
    "sequence_length": "Training sequence length, tokens.",
    "optimizer": "Optimizer: adamw or adamw_8bit.",
    "target_days": "Finish the training run within this many days.",
    "target_hours": "Finish the fine-tuning run within this many hours.",
    "method": "Fine-tuning method: full, lora or qlora.",
    "lora_rank": "LoRA adapter rank.",
    "width": "Image width, pixels (multiple of 8).",
    "height": "Image height, pixels (multiple of 8).",
    "steps": "Denoising steps per image; default the model's own.",
    "images_per_hour": "Images to generate per hour.",
    "constraints": "Limits on the answer: GPUs, vendors, providers, pricing models, GPU counts, budget.",
    "gpus": "Only these GPUs (ids or names).",
    "exclude_gpus": "Never these GPUs (ids or names).",
    "vendors": "Only these vendors: nvidia, amd, intel, huawei.",
    "ecosystems": "Only these software stacks: cuda, rocm, gaudi, cann.",
    "providers": "Only offers from these provider ids, e.g. ['runpod', 'lambda'].",
    "pricing": "Pricing model(s): on_demand, reserved_1y, reserved_3y, spot or capacity_block.",
    "prices": "Your own price per GPU-hour in USD by GPU id (a negotiated rate), used instead of the catalog's.",
    "gpu": "GPU id or name, e.g. 'h100-sxm', 'H200', 'MI300X'.",
    "gpu_count": "Number of GPUs.",
    "max_gpus": "Most GPUs an option may use.",
    "max_nodes": "Most 8-GPU nodes an option may span.",
    "single_node": "Only options that fit in one node.",
    "max_usd_per_hour": "Budget: most USD per hour for the whole configuration.",
    "require_offer": "Only GPUs someone rents (true) or also GPUs without a rental offer (false).",
    "objective": "How to rank: balanced (default), cost or speed.",
    "currency": "Money in USD (default) or CNY (at the stated exchange rate).",
    "lang": "Answer language: en or zh. Default en.",
    "limit": "Most options to return.",
    "provider": "Provider id, e.g. 'runpod', 'lambda', 'aws'.",
    "system": "Server to buy instead of loose GPUs, e.g. 'dgx-h100'.",
    "years": "Years to compare over (1 to 6).",
    "utilization": "Share of hours the GPUs are busy, 0 to 1.",
    "electricity_usd_per_kwh": "Electricity price, USD per kWh.",
    "pue": "Facility power usage effectiveness (1.0 = no overhead).",
    "operations_usd_per_year": "Operations and support cost per year, USD.",
    "purchase_usd": "Purchase price, USD, instead of the catalog's.",
    "resale_fraction": "Share of the purchase price recovered at the end, 0 to 1.",
    "cost_of_capital": "Yearly cost of capital (interest rate), e.g. 0.08.",
    "max_age_days": "Only prices seen at most this many days ago.",
    "max_usd_per_gpu_hour": "Price ceiling, USD per GPU per hour.",
}


def describe_fields(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with a description on every property: its own, one of its variants', or the shared one."""

    def visit(node: Any) -> Any:
        if isinstance(node, list):
            return [visit(item) for item in node]
        if not isinstance(node, dict):
            return node
        result = {key: visit(value) for key, value in node.items()}
        properties = result.get("properties")
        if isinstance(properties, dict):
            result["properties"] = {name: _described(name, value) for name, value in properties.items()}
        return result

    described: dict[str, Any] = visit(schema)
    return described


def _described(name: str, field: dict[str, Any]) -> dict[str, Any]:
    if "description" in field:
        return field
    variants = [v for v in field.get("anyOf", []) if isinstance(v, dict) and "description" in v]
    text = variants[0]["description"] if variants else FIELD_DESCRIPTIONS.get(name)
    return field if text is None else {"description": text, **field}
