"""Example bodies for the OpenAPI document, taken from the reference catalog (a test keeps them equal)."""

from typing import Any

GPU: dict[str, Any] = {
    "id": "h100-sxm",
    "name": "NVIDIA H100 SXM5 80GB",
    "vendor": "nvidia",
    "architecture": "Hopper",
    "launch_year": 2022,
    "segment": "datacenter",
    "memory_gb": 80.0,
    "memory_type": "HBM3",
    "memory_bandwidth_gbps": 3350.0,
    "tflops": {"fp32": 67.0, "tf32": 495.0, "fp16": 989.0, "bf16": 989.0, "fp8": 1979.0, "int8": 1979.0, "fp4": None},
    "tdp_w": 700.0,
    "form_factor": "SXM5",
    "interconnect": {
        "kind": "nvswitch",
        "bandwidth_gbps": 900.0,
        "description": "NVLink4 900 GB/s (NVSwitch)",
        "domain_gpus": 8,
    },
    "ecosystem": "cuda",
    "supports": {"fp8": True, "fp4": False, "nvlink": True},
    "aliases": ["H100", "H100 SXM", "H100 SXM5", "H100 SXM5 80GB", "NVIDIA H100", "NVIDIA H100 SXM", "H100 80GB"],
    "sources": ["NVIDIA H100 datasheet", "glennklockwood.com/garden/processors/h100"],
    "confidence": "datasheet",
    "market": "global",
    "half_rate_fp32_accumulate": False,
    "notes": "Dense BF16/FP16 is 989 TFLOPS; the often-quoted 1,979 is the sparse figure. No FP4/MXFP4 support.",
    "lowest_price": {
        "on_demand": {
            "offer_id": "runpod-h100-sxm-on-demand-community",
            "provider": "runpod",
            "usd_per_gpu_hour": 2.69,
            "gpus_per_instance": 1,
            "as_of": "2026-11-09",
            "source": "raw.githubusercontent.com/datareceipts/data-receipts/main/109-gpu-pricing/vendors.json "
            "(runpod.io/pricing read 2026-11-09)",
        },
        "reserved_1y": {
            "offer_id": "qubrid-h100-sxm-reserved-1y",
            "provider": "qubrid",
            "usd_per_gpu_hour": 1.9037,
            "gpus_per_instance": 8,
            "as_of": "2026-09-20",
            "source": "raw.githubusercontent.com/api-evangelist/qubrid-ai/refs/heads/main/plans/"
            "qubrid-ai-plans-pricing.yml (qubrid.com/pricing read 2026-09-20)",
        },
        "reserved_3y": None,
        "spot": {
            "offer_id": "nebius-h100-sxm-spot",
            "provider": "nebius",
            "usd_per_gpu_hour": 0.79,
            "gpus_per_instance": 1,
            "as_of": "2026-10-07",
            "source": "raw.githubusercontent.com/api-evangelist/nebius/refs/heads/main/plans/nebius-plans-pricing.yml "
            "(nebius.com/prices read 2026-10-07)",
        },
        "capacity_block": None,
    },
}

SYSTEM: dict[str, Any] = {
    "id": "dgx-h100",
    "name": "NVIDIA DGX H100",
    "vendor": "nvidia",
    "gpu": {"id": "h100-sxm", "name": "NVIDIA H100 SXM5 80GB", "vendor": "nvidia"},
    "gpu_count": 8,
    "total_memory_gb": 640.0,
    "power_kw": 10.2,
    "power_note": "~10.2 kW max (system)",
    "fabric": "4x NVSwitch, NVLink4 900 GB/s per GPU",
    "network": "8x ConnectX-7 400 Gb/s IB/Ethernet + 2x dual-port storage",
    "price": {
        "usd": 270000.0,
        "usd_low": None,
        "usd_high": None,
        "basis": "street",
        "as_of": "2023-01-01",
        "source": "SemiAnalysis 2023 (sale price)",
        "confidence": "datasheet",
    },
    "aliases": ["DGX H100", "NVIDIA DGX H100", "DGX-H100"],
    "sources": ["NVIDIA DGX H100 datasheet"],
    "notes": "640 GB total (8 x 80 GB), not 80 GB; NVLink generation 4. Price: ~270k sale price, a 2023 figure "
    "(day not given, as_of set to 2023-01-01). The seeds conflict: seed 000 says ~200k USD, seed 002 "
    "'over 300k'; the SemiAnalysis figure is used.",
}

PROVIDER: dict[str, Any] = {
    "id": "digitalocean",
    "name": "DigitalOcean",
    "kind": "gpu_cloud",
    "url": "https://www.digitalocean.com",
    "offer_count": 7,
    "sources": [
        "docs.digitalocean.com/products/droplets/details/pricing (validated 2026-05-28)",
        "raw.githubusercontent.com/toolshedlabs-hash/gpu-price-feed/main/data/history/v2/2026-10.jsonl "
        "(digitalocean.com/pricing/gpu-droplets on-demand cards, collected 2026-10-03)",
    ],
    "notes": "GPU Droplets. MI350X and B300 are sold per contract after contacting sales (no public price); MI325X has "
    "a self-serve on-demand price from October 2026.",
    "feed": None,
    "last_synced_at": None,
}

OFFER: dict[str, Any] = {
    "id": "digitalocean-h100-sxm-on-demand",
    "provider": "digitalocean",
    "gpu": "h100-sxm",
    "gpus_per_instance": 1,
    "pricing": "on_demand",
    "usd_per_gpu_hour": 4.41,
    "usd_per_instance_hour": 4.41,
    "instance": None,
    "vcpus": 20,
    "ram_gb": 250.0,
    "bare_metal": None,
    "region": None,
    "tier": None,
    "as_of": "2026-10-03",
    "age_days": 57,
    "source": "raw.githubusercontent.com/toolshedlabs-hash/gpu-price-feed/main/data/history/v2/2026-10.jsonl "
    "(collected 2026-10-03)",
    "notes": "Source says H100 80GB SXM. The feed reads the pricing page's on-demand H100 card, one price per GPU-hour "
    "for every Droplet size of the card (the cheapest DigitalOcean H100 price on 2026-10-03); vCPUs and RAM as the May "
    "2026 pricing page lists the 1-GPU Droplet. The 8x node is offer digitalocean-h100-sxm-on-demand-x8.",
}

LLM: dict[str, Any] = {
    "kind": "llm",
    "id": "deepseek-r1",
    "name": "DeepSeek-R1",
    "family": "deepseek",
    "params_b": 671.0,
    "active_params_b": 37.0,
    "layers": 61,
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "attention_heads": 128,
    "kv_heads": None,
    "head_dim": 192,
    "vocab_size": 129280,
    "tied_embeddings": False,
    "qkv_bias": False,
    "qk_norm": False,
    "max_context": 163840,
    "attention": "mla",
    "sliding_window": None,
    "sliding_window_layers": None,
    "linear_attention_layers": 0,
    "moe": {
        "routed_experts": 256,
        "experts_per_token": 8,
        "shared_experts": 1,
        "first_dense_layers": 3,
        "expert_intermediate_size": 2048,
    },
    "mla": {
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "v_head_dim": 128,
        "q_lora_rank": 1536,
    },
    "native_precision": "fp8",
    "checkpoint_gb": 685.0,
    "aliases": ["DeepSeek-R1", "deepseek-ai/DeepSeek-R1", "R1", "DeepSeek R1 671B"],
    "sources": [
        "deepseek-ai/DeepSeek-V3 inference/configs/config_671B.json",
        "deepseek-ai/DeepSeek-V3 README_WEIGHTS.md (685B parameters stored, 671B main model + 14B MTP module, FP8)",
    ],
    "notes": "params_b 671 excludes the 14B multi-token-prediction (MTP) module shipped in the checkpoint. "
    "Released checkpoint is FP8: 685B stored parameters at one byte each, about 685 GB (block scales add well "
    "under 1%). First 3 layers dense (intermediate 18432); the rest MoE "
    "with 256 routed experts (top 8, size 2048) plus 1 shared expert. MLA: head_dim 192 = 128 nope + "
    "64 rope for q/k, v 128; the KV cache holds kv_lora_rank + qk_rope_head_dim = 576 elements per "
    "token and layer.",
}

DIFFUSION: dict[str, Any] = {
    "kind": "diffusion",
    "id": "sdxl",
    "name": "Stable Diffusion XL",
    "family": "stable-diffusion",
    "denoiser": {"name": "UNet", "architecture": "UNet", "params_b": 2.567},
    "text_encoders": [
        {"name": "CLIP ViT-L/14", "architecture": "CLIP text transformer", "params_b": 0.123},
        {"name": "OpenCLIP ViT-bigG/14", "architecture": "CLIP text transformer", "params_b": 0.695},
    ],
    "vae_params_b": 0.084,
    "vae_latent_channels": 4,
    "native_resolution": 1024,
    "default_steps": 50,
    "passes_per_step": 2,
    "tflop_per_pass_1024": 6.76,
    "vae_decode_tflop_1024": 10.5,
    "aliases": ["SDXL", "SDXL 1.0", "stable-diffusion-xl-base-1.0", "stabilityai/stable-diffusion-xl-base-1.0"],
    "sources": ["SDXL paper arXiv 2307.01952", "FLOP count on diffusers modules"],
    "notes": "Base model. default_steps 50 is the diffusers default; 30 steps is common in practice. VAE decode "
    "at 1024x1024 is 10.5 TFLOP.",
}

# Requests the OpenAPI document shows, one per workload kind (responses are generated into example_responses.py).
REQUESTS: dict[str, dict[str, Any]] = {
    "Serve DeepSeek-R1 to 50 concurrent chat users": {
        "workload": {"kind": "inference", "model": "deepseek-r1", "concurrency": 50, "use_case": "chat"},
    },
    "Pre-train an 8B model on 100B tokens within 30 days": {
        "workload": {"kind": "training", "model": "llama-3.1-8b", "train_tokens": 1e11, "target_days": 30},
        "objective": "cost",
    },
    "LoRA fine-tune a 70B model on 200M tokens, answer in Chinese": {
        "workload": {"kind": "fine_tuning", "model": "llama-3.1-70b", "method": "lora", "train_tokens": 2e8},
        "lang": "zh",
    },
    "10,000 SDXL images a day, NVIDIA only, priced in CNY": {
        "workload": {"kind": "image_generation", "model": "sdxl", "images_per_hour": 417},
        "constraints": {"vendors": ["nvidia"]},
        "currency": "CNY",
    },
    "Offline batch: Llama 3.1 8B at the highest throughput per dollar, no latency targets": {
        "workload": {"kind": "inference", "model": "llama-3.1-8b", "use_case": "batch"},
    },
}

ESTIMATE_REQUESTS: dict[str, dict[str, Any]] = {
    "Llama 3.1 70B on 8x H200": {
        "workload": {"kind": "inference", "model": "llama-3.1-70b", "concurrency": 32},
        "gpu": "h200",
        "gpu_count": 8,
    },
    "Can Llama 2 70B run on one H100?": {
        "workload": {"kind": "inference", "model": "llama-2-70b"},
        "gpu": "h100-sxm",
        "gpu_count": 1,
    },
}

OFFER_CSV = (
    "id,provider,gpu,gpus_per_instance,pricing,usd_per_gpu_hour,instance,vcpus,ram_gb,bare_metal,region,tier,as_of,"
    "source,notes\n"
    "digitalocean-h100-sxm-on-demand,digitalocean,h100-sxm,1,on_demand,4.41,,20,250,,,,2026-10-03,"
    "docs.digitalocean.com GPU Droplet pricing,\n"
)

OFFER_HISTORY: dict[str, Any] = {
    "items": [
        {
            "offer_id": "digitalocean-h100-sxm-on-demand",
            "change": "updated",
            "actor": "api-key-1",
            "usd_per_gpu_hour": 2.99,
            "previous_usd_per_gpu_hour": 4.41,
            "pricing": "on_demand",
            "as_of": "2026-11-20",
            "source": "docs.digitalocean.com GPU Droplet pricing, checked 2026-11-20",
            "recorded_at": "2026-11-20T09:30:00Z",
        },
        {
            "offer_id": "digitalocean-h100-sxm-on-demand",
            "change": "created",
            "actor": "seed",
            "usd_per_gpu_hour": 4.41,
            "previous_usd_per_gpu_hour": None,
            "pricing": "on_demand",
            "as_of": "2026-10-03",
            "source": "raw.githubusercontent.com/toolshedlabs-hash/gpu-price-feed/main/data/history/v2/2026-10.jsonl "
            "(collected 2026-10-03)",
            "recorded_at": "2026-11-29T19:00:00Z",
        },
    ],
    "total": 2,
}

TCO_REQUESTS: dict[str, dict[str, Any]] = {
    "8x H100 bought vs rented for 3 years at 60% utilization": {
        "gpu": "h100-sxm",
        "gpu_count": 8,
        "years": 3,
        "utilization": 0.6,
    },
    "DGX H200 at 90% for 4 years in CNY": {
        "system": "dgx-h200",
        "years": 4,
        "utilization": 0.9,
        "currency": "CNY",
    },
}
