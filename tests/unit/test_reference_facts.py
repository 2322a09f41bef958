"""The shipped catalog says what the datasheets say (dense figures), and covers what users ask about."""

from __future__ import annotations

from datetime import date

import pytest

from domain.catalog import Catalog, DiffusionModel, LlmModel


def test_counts(reference: Catalog) -> None:
    assert len(reference.gpus) >= 35
    assert len(reference.systems) >= 5
    assert len(reference.providers) >= 8
    assert len(reference.offers) >= 35
    assert sum(isinstance(m, LlmModel) for m in reference.models) >= 18
    assert sum(isinstance(m, DiffusionModel) for m in reference.models) >= 3


@pytest.mark.parametrize(
    ("gpu_id", "field", "expected"),
    [
        ("h100-sxm", "bf16", 989),
        ("h100-sxm", "fp8", 1979),
        ("h100-pcie", "bf16", 756),
        ("h100-nvl", "bf16", 835),
        ("h200", "bf16", 989),
        ("h200-nvl", "bf16", 835.5),
        ("h200-nvl", "fp8", 1670.5),
        ("h200-nvl", "fp32", 60),
        ("a100-sxm-80gb", "bf16", 312),
        ("l40s", "fp8", 733),
        ("mi300x", "bf16", 1307.4),
        ("mi300x", "fp8", 2614.9),
        ("b200", "fp8", 4500),
        ("b200", "fp4", 9000),
        ("gaudi3", "bf16", 1835),
        ("rtx-a6000", "bf16", 154.8),
        ("rtx-5090", "fp4", 1676),
        ("gaudi3", "fp16", 459),
        ("gaudi3", "tf32", 459),
        ("gaudi3-pcie", "fp16", 459),
        ("gb200", "fp32", 80),
        ("gb300", "fp4", 15000),
        ("gb300", "bf16", 2500),
        ("mi350x", "bf16", 2300),
        ("rtx-pro-6000-blackwell-server", "fp4", 2000),
    ],
)
def test_dense_tensor_figures(reference: Catalog, gpu_id: str, field: str, expected: float) -> None:
    gpu = reference.gpu(gpu_id)
    assert gpu is not None
    assert getattr(gpu.tflops, field) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("gpu_id", "memory_gb", "memory_type", "bandwidth"),
    [
        ("h100-sxm", 80, "HBM3", 3350),
        ("h100-pcie", 80, "HBM2e", 2000),
        ("h200", 141, "HBM3e", 4800),
        ("h200-nvl", 141, "HBM3e", 4800),
        ("mi300x", 192, "HBM3", 5300),
        ("mi325x", 256, "HBM3e", 6000),
        ("b200", 180, "HBM3e", 7700),
        # Usable figures, as GB300 stores them: NVIDIA's B300 reference system lists 270 GB at 7.7 TB/s per GPU.
        ("b300", 270, "HBM3e", 7700),
        ("gb300", 279, "HBM3e", 8000),
        # The Server Edition's bandwidth; 1,792 GB/s is the Workstation Edition's.
        ("rtx-pro-6000-blackwell-server", 96, "GDDR7", 1597),
    ],
)
def test_memory_facts(reference: Catalog, gpu_id: str, memory_gb: float, memory_type: str, bandwidth: float) -> None:
    gpu = reference.gpu(gpu_id)
    assert gpu is not None
    assert (gpu.memory_gb, gpu.memory_type, gpu.memory_bandwidth_gbps) == (memory_gb, memory_type, bandwidth)


def test_no_fp8_where_the_hardware_has_none(reference: Catalog) -> None:
    for gpu_id in ("a100-sxm-80gb", "a100-sxm-40gb", "a800", "v100-32gb", "t4", "rtx-a6000", "quadro-p4000"):
        gpu = reference.gpu(gpu_id)
        assert gpu is not None and not gpu.supports_fp8, gpu_id
    h100 = reference.gpu("h100-sxm")
    assert h100 is not None and not h100.supports_fp4  # seed 002 wrongly credits H100 with MXFP4


@pytest.mark.parametrize(
    ("system_id", "memory"),
    [
        ("dgx-h100", 640),
        ("dgx-h200", 1128),
        ("mi300x-platform", 1536),
        ("dgx-b300", 2160),
        ("gb200-nvl72", 13392),
        ("gb300-nvl72", 20088),
        ("mi355x-platform", 2304),
    ],
)
def test_system_memory(reference: Catalog, system_id: str, memory: float) -> None:
    system = reference.system(system_id)
    assert system is not None and system.total_memory_gb == memory


@pytest.mark.parametrize(
    ("name", "gpu_id"),
    [
        ("H100", "h100-sxm"),
        ("H100 SXM5", "h100-sxm"),
        ("nvidia h100", "h100-sxm"),
        ("H200", "h200"),
        ("H200 NVL", "h200-nvl"),
        ("MI300X", "mi300x"),
        ("A100-80G", "a100-sxm-80gb"),
        ("A6000", "rtx-a6000"),
        ("L40S", "l40s"),
        ("Gaudi 3", "gaudi3"),
    ],
)
def test_aliases_resolve(reference: Catalog, name: str, gpu_id: str) -> None:
    gpu = reference.gpu(name)
    assert gpu is not None and gpu.id == gpu_id


def test_every_gpu_named_in_the_seeds_is_present(reference: Catalog) -> None:
    named = [
        "h100-sxm", "h100-nvl", "h200", "a100-sxm-80gb", "a100-sxm-40gb", "rtx-a6000", "l40s", "mi300x", "mi325x",
        "gaudi2", "v100-16gb", "v100-32gb", "rtx-6000-ada", "rtx-4000-ada", "quadro-p4000", "quadro-p5000",
        "quadro-p6000", "quadro-rtx-4000", "quadro-rtx-5000", "rtx-a4000", "rtx-a5000", "b200", "b300", "mi355x",
        "gaudi3", "h20", "h800", "a800", "l20",
    ]  # fmt: skip
    missing = [gpu_id for gpu_id in named if reference.gpu(gpu_id) is None]
    assert missing == []


def test_low_confidence_skus_say_so(reference: Catalog) -> None:
    for gpu_id in ("h20", "l20", "ascend-910b"):
        gpu = reference.gpu(gpu_id)
        assert gpu is not None and gpu.confidence == "low", gpu_id


def test_digitalocean_rows_are_the_ones_its_page_lists(reference: Catalog) -> None:
    # The 1-GPU MI300X Droplet is 2.59 in the API list of 2026-10-07; the H100 and MI325X on-demand cards are 4.41 and
    # 3.8 on 2026-10-03 (the MI325X was contact-sales only in May); the 2025 RTX 6000 Ada price is too old to ship.
    prices = {"mi300x": 2.59, "h100-sxm": 4.41, "mi325x": 3.8, "rtx-4000-ada": 0.76, "l40s": 1.57}
    offers = {
        o.gpu: o
        for o in reference.offers
        if o.provider == "digitalocean" and o.pricing == "on_demand" and o.gpus_per_instance == 1
    }
    assert {gpu: o.usd_per_gpu_hour for gpu, o in offers.items()} == prices
    # The October feed gives no Droplet size for the MI325X card, so its vCPUs and RAM are not stored.
    assert all(o.vcpus and o.ram_gb for gpu, o in offers.items() if gpu != "mi325x")


def test_every_price_is_dated_and_sourced(reference: Catalog) -> None:
    for offer in reference.offers:
        assert offer.source and offer.as_of <= date(2026, 12, 31), offer.id
    for system in reference.systems:
        if system.price is not None:
            assert system.price.source and system.price.as_of, system.id


@pytest.mark.parametrize(
    ("name", "model_id"),
    [("DeepSeek-R1", "deepseek-r1"), ("deepseek-ai/DeepSeek-R1", "deepseek-r1"), ("SDXL", "sdxl")],
)
def test_model_aliases_resolve(reference: Catalog, name: str, model_id: str) -> None:
    model = reference.model(name)
    assert model is not None and model.id == model_id


def test_deepseek_r1_architecture(reference: Catalog) -> None:
    model = reference.model("deepseek-r1")
    assert isinstance(model, LlmModel) and model.mla is not None and model.moe is not None
    assert (model.params_b, model.active_params_b, model.layers) == (671, 37, 61)
    assert model.mla.kv_lora_rank + model.mla.qk_rope_head_dim == 576
    assert (model.moe.routed_experts, model.moe.experts_per_token, model.moe.shared_experts) == (256, 8, 1)


def test_llama_2_70b_uses_gqa(reference: Catalog) -> None:
    model = reference.model("llama-2-70b")
    assert isinstance(model, LlmModel)
    assert (model.attention, model.kv_heads, model.head_dim, model.layers) == ("gqa", 8, 128, 80)


def test_dgx_b200_price_is_the_whole_system(reference: Catalog) -> None:
    system = reference.system("dgx-b200")
    assert system is not None and system.price is not None
    assert system.price.usd == 515_000 and "515K" in system.price.source


def test_ascend_910b_says_which_figures_are_unverified(reference: Catalog) -> None:
    gpu = reference.gpu("ascend-910b")
    assert gpu is not None and gpu.confidence == "low" and gpu.tdp_w == 310
    assert any("no page that could be checked" in source for source in gpu.sources)


def test_rack_scale_systems_are_one_nvlink_domain(reference: Catalog) -> None:
    for system_id in ("gb200-nvl72", "gb300-nvl72"):
        system = reference.system(system_id)
        assert system is not None and system.gpu_count == 72 and "72-GPU NVLink domain" in system.fabric
