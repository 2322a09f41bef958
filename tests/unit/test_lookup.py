"""Name folding, suggestions and lowest prices."""

from __future__ import annotations

from domain.catalog import Catalog, lookup_key


def test_lookup_key_folds_case_spaces_and_punctuation() -> None:
    assert lookup_key("H100 SXM5") == lookup_key("h100-sxm5") == "h100sxm5"
    assert lookup_key("FLUX.1 [dev]") == "flux1dev"


def test_lookup_key_keeps_chinese_characters() -> None:
    assert lookup_key("昇腾 910B") == "昇腾910b"


def test_suggestions_for_a_typo(reference: Catalog) -> None:
    assert reference.suggest("gpu", "h100x")[0] == "h100-sxm"
    assert "mi300x" in reference.suggest("gpu", "mi300")


def test_unknown_name_resolves_to_nothing(reference: Catalog) -> None:
    assert reference.gpu("not-a-gpu") is None
    assert reference.model("") is None


def test_lowest_price_per_pricing_model(reference: Catalog) -> None:
    lowest = reference.lowest_prices("mi300x")
    on_demand = [o.usd_per_gpu_hour for o in reference.offers_for_gpu("mi300x") if o.pricing == "on_demand"]
    assert lowest["on_demand"].usd_per_gpu_hour == min(on_demand)
    assert "spot" not in lowest  # no MI300X spot price is shipped
    spot = reference.lowest_prices("h100-sxm")["spot"]
    assert spot.usd_per_gpu_hour == min(
        o.usd_per_gpu_hour for o in reference.offers_for_gpu("h100-sxm") if o.pricing == "spot"
    )
    assert spot.provider == "nebius"


def test_suggestions_rank_by_edits_to_the_start_of_a_name(reference: Catalog) -> None:
    # "h100x" is one edit from the start of every H100; "v100" is as few edits from the whole name but means another.
    assert set(reference.suggest("gpu", "h100x")) == {"h100-sxm", "h100-pcie", "h100-nvl"}
    assert reference.suggest("gpu", "mi350")[:2] == ["mi350x", "mi355x"]
    assert reference.suggest("model", "llama3-70")[0] == "llama-3.1-70b"
    assert reference.suggest("gpu", "zzzzzz") == []


def test_closest_enum_values() -> None:
    from domain.catalog.names import closest

    kinds = ("inference", "training", "fine_tuning", "image_generation")
    assert closest("inferance", kinds) == ["inference"]
    assert closest("nvidiaa", ("nvidia", "amd", "intel", "huawei")) == ["nvidia"]
    assert closest("x" * 300, kinds) == []
