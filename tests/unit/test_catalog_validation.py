"""Loading rejects bad records loudly and names them."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from domain.catalog import Catalog, CatalogError, Gpu, Offer, System, decode_records
from domain.catalog.reference_files import REFERENCE_FILES, parse_reference


def raw(record: Any) -> dict[str, Any]:
    return msgspec.to_builtins(record)


def catalog_with(reference: Catalog, **replace: Any) -> Catalog:
    tables = {
        "gpus": reference.gpus,
        "systems": reference.systems,
        "providers": reference.providers,
        "offers": reference.offers,
        "models": reference.models,
    }
    return Catalog(**(tables | replace))


def test_record_without_source_is_rejected(reference: Catalog) -> None:
    record = raw(reference.gpu("h100-sxm")) | {"sources": []}
    with pytest.raises(CatalogError, match="gpu 'h100-sxm'.*sources"):
        decode_records("gpu", [record], Gpu)


def test_offer_without_source_is_rejected(reference: Catalog) -> None:
    record = raw(reference.offers[0]) | {"source": ""}
    with pytest.raises(CatalogError, match=f"offer '{reference.offers[0].id}'.*source"):
        decode_records("offer", [record], Offer)


@pytest.mark.parametrize(("field", "value"), [("memory_gb", 0), ("memory_bandwidth_gbps", -3350), ("tdp_w", 0)])
def test_non_positive_figure_is_rejected(reference: Catalog, field: str, value: float) -> None:
    record = raw(reference.gpu("h100-sxm")) | {field: value}
    with pytest.raises(CatalogError, match=f"gpu 'h100-sxm'.*{field}"):
        decode_records("gpu", [record], Gpu)


def test_non_positive_price_is_rejected(reference: Catalog) -> None:
    record = raw(reference.offers[0]) | {"usd_per_gpu_hour": 0}
    with pytest.raises(CatalogError, match="usd_per_gpu_hour"):
        decode_records("offer", [record], Offer)


def test_every_bad_record_is_named_not_only_the_first(reference: Catalog) -> None:
    records = [raw(g) | {"memory_gb": -1} for g in reference.gpus[:3]]
    with pytest.raises(CatalogError) as error:
        decode_records("gpu", records, Gpu)
    assert len(error.value.problems) == 3


def test_offer_for_unknown_gpu_is_rejected(reference: Catalog) -> None:
    offer = msgspec.structs.replace(reference.offers[0], gpu="h999")
    with pytest.raises(CatalogError, match=f"offer '{offer.id}': unknown gpu 'h999'"):
        catalog_with(reference, offers=[offer, *reference.offers[1:]])


def test_offer_for_unknown_provider_is_rejected(reference: Catalog) -> None:
    offer = msgspec.structs.replace(reference.offers[0], provider="nobody")
    with pytest.raises(CatalogError, match="unknown provider 'nobody'"):
        catalog_with(reference, offers=[offer, *reference.offers[1:]])


def test_system_for_unknown_gpu_is_rejected(reference: Catalog) -> None:
    system = msgspec.structs.replace(reference.system("dgx-h100"), gpu="h999")
    others = [s for s in reference.systems if s.id != "dgx-h100"]
    with pytest.raises(CatalogError, match="system 'dgx-h100': unknown gpu"):
        catalog_with(reference, systems=[system, *others])


def test_seed_error_dgx_h100_with_80_gb_total_is_rejected(reference: Catalog) -> None:
    """Seed 002 says DGX H100 has 80 GB in total; it has 8 x 80 = 640 GB."""
    system = msgspec.structs.replace(reference.system("dgx-h100"), total_memory_gb=80)
    others: list[System] = [s for s in reference.systems if s.id != "dgx-h100"]
    with pytest.raises(CatalogError, match="total_memory_gb 80 is not 8 x 80 GB"):
        catalog_with(reference, systems=[system, *others])


@pytest.mark.parametrize(
    ("gpu_id", "figures", "named"),
    [
        ("h100-sxm", {"fp8": 3958.0}, "FP8"),  # the sparse FP8 figure
        ("h100-sxm", {"tf32": 989.0}, "TF32"),  # the sparse TF32 figure
        ("b200", {"fp4": 18000.0}, "FP4"),  # the sparse FP4 figure
        ("a100-sxm-80gb", {"int8": 1248.0}, "INT8"),  # the sparse INT8 figure
    ],
)
def test_sparse_looking_tensor_figure_is_rejected(
    reference: Catalog, gpu_id: str, figures: dict[str, float], named: str
) -> None:
    gpu = reference.gpu(gpu_id)
    assert gpu is not None
    bad = msgspec.structs.replace(gpu, tflops=msgspec.structs.replace(gpu.tflops, **figures))
    with pytest.raises(CatalogError, match=f"gpu '{gpu_id}': {named} .*2:4-sparse"):
        catalog_with(reference, gpus=[bad if g.id == gpu_id else g for g in reference.gpus])


def test_duplicate_alias_is_rejected(reference: Catalog) -> None:
    gpu = reference.gpu("h200")
    assert gpu is not None
    clash = msgspec.structs.replace(gpu, aliases=(*gpu.aliases, "H100 SXM5"))
    with pytest.raises(CatalogError, match="alias 'H100 SXM5' already names 'h100-sxm'"):
        catalog_with(reference, gpus=[clash if g.id == "h200" else g for g in reference.gpus])


def test_duplicate_id_is_rejected(reference: Catalog) -> None:
    with pytest.raises(CatalogError, match="duplicate id"):
        catalog_with(reference, offers=[*reference.offers, reference.offers[0]])


def test_unknown_field_is_rejected(reference: Catalog) -> None:
    record = raw(reference.gpu("h200")) | {"fp16_tflops_sparse": 1979}
    with pytest.raises(CatalogError, match="gpu 'h200'.*unknown field"):
        decode_records("gpu", [record], Gpu)


def test_broken_reference_file_names_the_file() -> None:
    documents = dict.fromkeys(REFERENCE_FILES, "") | {"gpus.toml": "[[gpus]\nid = "}
    with pytest.raises(CatalogError, match="gpus.toml"):
        parse_reference(documents)


def test_moe_model_without_active_parameters_is_rejected(reference: Catalog) -> None:
    model = reference.model("mixtral-8x7b")
    broken = msgspec.structs.replace(model, active_params_b=None)
    with pytest.raises(CatalogError, match="model 'mixtral-8x7b': a mixture-of-experts model needs active_params_b"):
        catalog_with(reference, models=[broken if m.id == model.id else m for m in reference.models])


def test_version_is_a_content_hash(reference: Catalog) -> None:
    same = catalog_with(reference)
    cheaper = msgspec.structs.replace(reference.offers[0], usd_per_gpu_hour=reference.offers[0].usd_per_gpu_hour / 2)
    changed = catalog_with(reference, offers=[cheaper, *reference.offers[1:]])
    assert same.version == reference.version
    assert changed.version != reference.version
