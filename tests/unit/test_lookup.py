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
    assert lowest["spot"].provider == "crusoe"
