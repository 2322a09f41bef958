"""Every gpuhunt provider's rows, as its own code shapes them, filed under the right GPU, pricing and tier."""

from __future__ import annotations

import io
from datetime import date
from pathlib import Path

import pytest
from gpuhunt._internal import storage

from api.adapters.gpuhunt import feed_items
from domain.catalog import Catalog, Offer
from domain.pricing.feed import FEED_PROVIDERS, diff, feed_offers

FIXTURES = Path(__file__).parent.parent / "fixtures" / "gpuhunt"
TODAY = date(2026, 12, 3)
# (gpu, GPUs per instance, pricing, tier) -> USD per GPU-hour, and what cannot be filed, per provider.
EXPECTED: dict[str, tuple[dict[tuple[str, int, str, str | None], float], set[str]]] = {
    "runpod": (
        {
            ("h100-sxm", 1, "on_demand", "community"): 2.69,
            ("h100-sxm", 1, "on_demand", "secure"): 3.99,
            ("h100-sxm", 8, "on_demand", "secure"): 3.99,
            ("h100-pcie", 1, "on_demand", "community"): 1.99,
            ("h100-pcie", 1, "on_demand", "secure"): 2.89,
            ("h100-nvl", 1, "on_demand", "secure"): 3.07,
            ("a100-pcie-80gb", 1, "on_demand", "community"): 1.19,
            ("a100-sxm-80gb", 1, "on_demand", "secure"): 1.49,
            ("h200", 1, "on_demand", "community"): 3.59,
            ("h200", 1, "on_demand", "secure"): 4.59,
            ("b200", 8, "on_demand", "secure"): 6.79,
            ("mi300x", 1, "on_demand", "community"): 2.49,
            ("rtx-4090", 1, "on_demand", "community"): 0.69,
        },
        set(),
    ),
    "lambdalabs": (
        {
            ("h100-pcie", 1, "on_demand", None): 3.29,
            ("h100-sxm", 1, "on_demand", None): 4.29,
            ("h100-sxm", 8, "on_demand", None): 3.99,
            ("a100-sxm-40gb", 1, "on_demand", None): 1.49,
            ("a100-sxm-80gb", 8, "on_demand", None): 1.79,
        },
        {"A100 PCIe 40 GB", "GH200"},
    ),
    "gcp": (
        {
            ("h100-sxm", 8, "on_demand", None): 11.0612,
            ("h100-sxm", 8, "spot", None): 2.825,
            ("h200", 8, "capacity_block", None): 7.6325,
            ("b200", 8, "capacity_block", None): 9.95,
            ("l4", 1, "on_demand", None): 0.7068,
            ("a100-sxm-40gb", 1, "on_demand", None): 3.673,
            ("a100-sxm-80gb", 1, "on_demand", None): 5.0688,
        },
        set(),
    ),
    "azure": (
        {
            ("h100-sxm", 8, "on_demand", None): 12.29,
            ("h100-nvl", 1, "on_demand", None): 6.98,
            ("a100-pcie-80gb", 1, "on_demand", None): 3.673,
            ("a100-sxm-80gb", 8, "on_demand", None): 4.0963,
            ("a100-sxm-40gb", 8, "on_demand", None): 3.4,
            ("mi300x", 8, "on_demand", None): 6.0,
        },
        set(),
    ),
    "aws": (
        {
            ("h100-sxm", 8, "on_demand", None): 6.88,
            ("h100-sxm", 8, "spot", None): 2.7625,
            ("h200", 8, "on_demand", None): 7.912,
            ("a100-sxm-40gb", 8, "on_demand", None): 2.745,
            ("a100-sxm-80gb", 8, "on_demand", None): 3.4312,
            ("l40s", 1, "on_demand", None): 1.861,
        },
        {"A10G"},
    ),
    "oci": (
        {
            ("h100-sxm", 8, "on_demand", None): 10.0,
            ("a100-sxm-80gb", 8, "on_demand", None): 4.0,
            ("mi300x", 8, "on_demand", None): 6.0,
            ("mi300x", 8, "spot", None): 3.0,
        },
        set(),
    ),
    "verda": (
        {
            ("h100-sxm", 1, "on_demand", None): 2.19,
            ("b200", 8, "on_demand", None): 4.89,
            ("a100-sxm-40gb", 1, "spot", None): 0.2524,
            ("a100-sxm-80gb", 1, "on_demand", None): 1.29,
        },
        set(),
    ),
    "nebius": (
        {
            ("h100-sxm", 1, "on_demand", None): 2.95,
            ("h100-sxm", 1, "spot", None): 1.25,
            ("h200", 8, "on_demand", None): 3.5,
        },
        set(),
    ),
    "cloudrift": (
        {
            ("rtx-4090", 1, "on_demand", None): 0.39,
            ("rtx-5090", 1, "on_demand", None): 0.65,
            ("rtx-pro-6000-blackwell-server", 1, "on_demand", None): 1.29,
        },
        set(),
    ),
    "crusoe": (
        {
            ("a100-pcie-80gb", 1, "on_demand", None): 1.65,
            ("a100-sxm-80gb", 8, "on_demand", None): 1.95,
            ("h100-sxm", 8, "on_demand", None): 3.9,
            ("h100-sxm", 8, "spot", None): 1.6,
            ("mi300x", 8, "on_demand", None): 3.45,
        },
        {"A100 PCIe 40 GB"},
    ),
    "digitalocean": (
        {
            ("h100-sxm", 1, "on_demand", None): 3.39,
            ("h100-sxm", 8, "on_demand", None): 2.99,
            ("mi300x", 1, "on_demand", None): 1.99,
            ("l40s", 1, "on_demand", None): 1.57,
            ("rtx-6000-ada", 1, "on_demand", None): 1.89,
        },
        set(),
    ),
    "hotaisle": ({("mi300x", 1, "on_demand", None): 1.99, ("mi300x", 8, "on_demand", None): 1.99}, set()),
    "jarvislabs": (
        {("l4", 1, "on_demand", None): 0.44, ("rtx-pro-6000-blackwell-server", 1, "on_demand", None): 1.69},
        {"A100 40 GB (PCIe or SXM not stated)", "H100 80 GB (PCIe or SXM not stated)"},
    ),
    "lium": ({("rtx-5090", 1, "on_demand", None): 0.59}, {"H100 80 GB (PCIe or SXM not stated)"}),
    "seeweb": ({("h100-sxm", 1, "on_demand", None): 2.9, ("l4", 1, "on_demand", None): 0.95}, set()),
    "vastai": (
        {
            ("h200", 1, "on_demand", None): 3.21,
            ("rtx-4090", 1, "on_demand", None): 0.34,
            ("rtx-4090", 1, "spot", None): 0.21,
        },
        {"H100 80 GB (PCIe or SXM not stated)"},
    ),
    "vultr": (
        {
            ("mi300x", 8, "on_demand", None): 1.99,
            ("l40s", 1, "on_demand", None): 1.671,
            ("h100-sxm", 8, "on_demand", None): 2.99,
        },
        set(),
    ),
    "daytona": (
        {("h100-sxm", 1, "on_demand", None): 3.95, ("rtx-5090", 1, "on_demand", None): 0.89},
        set(),
    ),
}


def offers_of(catalog: Catalog, provider: str) -> tuple[list[Offer], list[str]]:
    text = (FIXTURES / f"{provider}.csv").read_text()
    items = feed_items(provider, storage.load(io.StringIO(text), provider=provider))
    return feed_offers(catalog, items, feed="gpuhunt", version="20261203-1", today=TODAY)


def test_every_gpuhunt_provider_that_lists_gpus_is_read() -> None:
    from gpuhunt._internal.catalog import OFFLINE_PROVIDERS, ONLINE_PROVIDERS

    assert set(FEED_PROVIDERS) == set(OFFLINE_PROVIDERS) | set(ONLINE_PROVIDERS) == set(EXPECTED)


@pytest.mark.parametrize("provider", sorted(EXPECTED))
def test_a_providers_rows_are_filed_under_their_own_gpu_pricing_and_tier(reference: Catalog, provider: str) -> None:
    offers, unmapped = offers_of(reference, provider)
    expected, not_filed = EXPECTED[provider]
    filed = {(o.gpu, o.gpus_per_instance, o.pricing, o.tier): o.usd_per_gpu_hour for o in offers}
    assert filed == pytest.approx(expected)
    assert set(unmapped) == not_filed
    # One offer per provider, GPU, pricing model, tier and instance size.
    assert len({o.identity for o in offers}) == len(offers)
    assert all(o.provider == FEED_PROVIDERS[provider] for o in offers)


def test_a_feed_offer_supersedes_the_curated_offer_of_the_same_identity(reference: Catalog) -> None:
    offers, unmapped = offers_of(reference, "runpod")
    pcie = next(o for o in offers if o.gpu == "h100-pcie" and o.tier == "community")
    curated = Offer(
        id="runpod-h100-pcie-on-demand",
        provider="runpod",
        gpu="h100-pcie",
        pricing="on_demand",
        tier="community",
        usd_per_gpu_hour=1.8,
        as_of=date(2026, 5, 1),
        source="runpod.io/pricing",
    )
    other_tier = Offer(
        id="runpod-h100-pcie-secure",
        provider="runpod",
        gpu="h100-pcie",
        pricing="on_demand",
        tier="secure",
        usd_per_gpu_hour=2.39,
        as_of=date(2026, 5, 1),
        source="runpod.io/pricing",
        gpus_per_instance=2,
    )
    result = diff("runpod", offers, {}, {}, unmapped, [curated, other_tier])
    assert result.superseded == [(curated, pcie.id)]
