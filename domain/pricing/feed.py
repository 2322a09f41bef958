"""Price-feed offers as catalog offers, and the difference a sync would make (pure: no fetching, no storage).

Names are read the way gpuhunt reports them (its provider modules): the GPU name alone drops the form factor
(RunPod's "H100 PCIe" and Lambda's `gpu_1x_h100_pcie` both say "H100"), so the instance name decides PCIe, NVL and
SXM; RunPod lists Secure Cloud by data centre and Community Cloud by country; GCP's calendar-mode rows are
reservations, not on-demand prices.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from domain.catalog import Catalog, Gpu, Offer, Pricing, Tier, lookup_key

# gpuhunt provider name -> catalog provider id: the providers gpuhunt publishes catalogs for (offline) first, then
# those it queries live (online; most need the provider's credentials in the environment).
OFFLINE_FEED_PROVIDERS: dict[str, str] = {
    "aws": "aws",
    "azure": "azure",
    "gcp": "gcp",
    "lambdalabs": "lambda",
    "nebius": "nebius",
    "oci": "oracle",
    "runpod": "runpod",
    "verda": "verda",
    "cloudrift": "cloudrift",
}
ONLINE_FEED_PROVIDERS: dict[str, str] = {
    "crusoe": "crusoe",
    "daytona": "daytona",
    "digitalocean": "digitalocean",
    "hotaisle": "hotaisle",
    "jarvislabs": "jarvislabs",
    "lium": "lium",
    "seeweb": "seeweb",
    "vastai": "vast",
    "vultr": "vultr",
}
FEED_PROVIDERS: dict[str, str] = OFFLINE_FEED_PROVIDERS | ONLINE_FEED_PROVIDERS
# Marketplaces list hosts, not instance types: the GPU name cannot say PCIe from SXM for them.
_FORM_FACTOR_UNSTATED = {"vastai", "lium", "jarvislabs"}
# Providers whose instance names say "sxm" for SXM boards and nothing for PCIe cards (Lambda's gpu_1x_a100,
# Crusoe's a100-80gb.1x).
_SXM_NAMED = {"lambdalabs", "crusoe"}
# Feed GPU names whose catalog id depends on the memory (GB) the feed reports (SXM boards).
_BY_MEMORY: dict[str, tuple[tuple[float, str], ...]] = {
    "a100": ((40, "a100-sxm-40gb"), (80, "a100-sxm-80gb")),
    "h100": ((80, "h100-sxm"), (94, "h100-nvl")),
    "v100": ((16, "v100-16gb"), (32, "v100-32gb")),
}
_PCIE_BY_MEMORY: dict[str, tuple[tuple[float, str], ...]] = {
    "a100": ((80, "a100-pcie-80gb"),),
    "h100": ((80, "h100-pcie"), (94, "h100-nvl")),
}
_SLUG = re.compile(r"[^a-z0-9.]+")
_PRICING_SUFFIX: dict[Pricing, str] = {
    "on_demand": "on-demand",
    "spot": "spot",
    "capacity_block": "capacity-block",
    "reserved_1y": "reserved-1y",
    "reserved_3y": "reserved-3y",
}
# RunPod's Secure Cloud rows are located by data centre ("US-TX-3"), Community Cloud rows by country ("US").
_RUNPOD_DATA_CENTRE = re.compile(r"^[A-Z]{2}-[A-Z0-9]+-\d+$")


@dataclass(frozen=True)
class FeedItem:
    """One instance type as a feed lists it: whole-instance price per hour, with gpuhunt's flags and provider data."""

    provider: str
    instance: str
    region: str
    usd_per_hour: float
    gpu_count: int
    gpu_name: str | None
    gpu_memory_gb: float | None
    spot: bool
    vcpus: int
    ram_gb: float
    flags: tuple[str, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Change:
    """One offer whose price the sync would change."""

    offer: Offer
    old_usd_per_gpu_hour: float


@dataclass
class FeedDiff:
    """What a sync of one provider would do."""

    provider: str
    added: list[Offer] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    gone: list[Offer] = field(default_factory=list)
    kept: list[Offer] = field(default_factory=list)  # an administrator's price dated on or after the feed's
    # Curated offers of the same provider, GPU, pricing, tier and instance size as a feed offer: (offer, feed id).
    superseded: list[tuple[Offer, str]] = field(default_factory=list)
    unchanged: int = 0
    unmapped: list[str] = field(default_factory=list)  # feed GPU names the catalog has no id for, and why


def _by_memory(table: tuple[tuple[float, str], ...], memory_gb: float | None) -> str | None:
    for feed_memory_gb, gpu_id in table:
        if memory_gb is not None and abs(memory_gb - feed_memory_gb) <= 0.1 * feed_memory_gb:
            return gpu_id
    return None


def catalog_gpu(catalog: Catalog, name: str, memory_gb: float | None) -> Gpu | None:
    """The catalog GPU a feed's name and memory denote (SXM where the name allows both), or None."""
    if (gpu_id := _by_memory(_BY_MEMORY.get(lookup_key(name), ()), memory_gb)) is not None:
        return catalog.gpu(gpu_id)
    gpu = catalog.gpu(name)
    if gpu is None or (memory_gb is not None and abs(gpu.memory_gb - memory_gb) > 0.15 * gpu.memory_gb):
        return None
    return gpu


def _is_pcie(provider: str, instance: str, family: str) -> bool:
    """Whether the instance is a PCIe card, as each provider's instance names say it."""
    name = instance.casefold()
    if "pcie" in name:
        return True
    if provider in _SXM_NAMED:
        return "sxm" not in name and "gh200" not in name
    if provider == "azure":
        # NC A100 v4 carries PCIe cards (the ND series SXM ones).
        return family == "a100" and re.search(r"_nc\d+ads_a100", name) is not None
    return False


def feed_gpu(catalog: Catalog, item: FeedItem) -> Gpu | str:
    """The catalog GPU a feed row denotes, or why it has none (the name as the feed gave it)."""
    name = item.gpu_name or ""
    family = lookup_key(name)
    if family in ("h100", "a100"):
        if item.provider in _FORM_FACTOR_UNSTATED:
            return f"{name} {item.gpu_memory_gb:g} GB (PCIe or SXM not stated)"
        if _is_pcie(item.provider, item.instance, family):
            gpu_id = _by_memory(_PCIE_BY_MEMORY[family], item.gpu_memory_gb)
            gpu = catalog.gpu(gpu_id) if gpu_id else None
            return gpu or f"{name} PCIe {item.gpu_memory_gb:g} GB"
        if "nvl" in item.instance.casefold():
            return catalog.gpu("h100-nvl") or name
    if family == "h200nvl" or (family == "h200" and "nvl" in item.instance.casefold()):
        return catalog.gpu("h200-nvl") or name
    return catalog_gpu(catalog, name, item.gpu_memory_gb) or name


def feed_pricing(item: FeedItem) -> Pricing | None:
    """The pricing model of a feed row; None for a reservation of a term the catalog has no model for."""
    if item.spot:
        return "spot"
    flags = " ".join(item.flags).casefold()
    if item.details.get("is_dws_calendar_mode") or "calendar-mode" in flags or "capacity-block" in flags:
        return "capacity_block"
    if "reserv" in flags or item.details.get("reservation"):
        term = re.search(r"([13])\s*-?\s*y", flags)
        return ("reserved_1y" if term.group(1) == "1" else "reserved_3y") if term else None
    return "on_demand"


def feed_tier(item: FeedItem) -> Tier | None:
    """Community or Secure where the provider sells both (RunPod); None elsewhere."""
    if item.provider != "runpod":
        return None
    if "runpod-cluster" in item.flags or _RUNPOD_DATA_CENTRE.match(item.region):
        return "secure"
    return "community"


def offer_id(provider: str, gpu: str, count: int, tier: Tier | None, pricing: Pricing) -> str:
    """A stable id for a feed offer: its identity (provider, GPU, instance size, tier, pricing model)."""
    parts = [provider, gpu, f"x{count}", tier or "", _PRICING_SUFFIX[pricing]]
    slug = _SLUG.sub("-", "-".join(p for p in parts if p).lower()).strip("-")
    return slug[:64].rstrip("-")


def feed_offers(
    catalog: Catalog, items: Iterable[FeedItem], *, feed: str, version: str, today: date
) -> tuple[list[Offer], list[str]]:
    """One catalog offer per identity (the cheapest instance and region per GPU-hour), and what could not be filed."""
    cheapest: dict[str, tuple[FeedItem, Gpu, Pricing, Tier | None]] = {}
    unmapped: set[str] = set()
    for item in items:
        if not item.gpu_name or item.gpu_count < 1 or item.usd_per_hour <= 0:
            continue
        gpu = feed_gpu(catalog, item)
        if isinstance(gpu, str):
            unmapped.add(gpu)
            continue
        pricing = feed_pricing(item)
        if pricing is None:
            unmapped.add(f"{item.instance}: a reservation of a term the catalog has no pricing model for")
            continue
        tier = feed_tier(item)
        provider = FEED_PROVIDERS.get(item.provider, item.provider)
        key = offer_id(provider, gpu.id, item.gpu_count, tier, pricing)
        per_gpu = item.usd_per_hour / item.gpu_count
        if key not in cheapest or per_gpu < cheapest[key][0].usd_per_hour / cheapest[key][0].gpu_count:
            cheapest[key] = (item, gpu, pricing, tier)
    offers = [
        Offer(
            id=key,
            provider=FEED_PROVIDERS.get(item.provider, item.provider),
            gpu=gpu.id,
            gpus_per_instance=item.gpu_count,
            pricing=pricing,
            tier=tier,
            usd_per_gpu_hour=round(item.usd_per_hour / item.gpu_count, 4),
            instance=item.instance,
            vcpus=max(1, item.vcpus // item.gpu_count) if item.vcpus else None,
            ram_gb=round(item.ram_gb / item.gpu_count, 2) if item.ram_gb else None,
            region=item.region,
            as_of=today,
            source=f"{feed} catalog {item.provider} {version}",
            notes=f"Cheapest instance and region of this size in the {feed} feed ({item.instance}); per-GPU share.",
        )
        for key, (item, gpu, pricing, tier) in sorted(cheapest.items())
    ]
    return offers, sorted(unmapped)


def diff(
    provider: str,
    fresh: Sequence[Offer],
    stored: Mapping[str, Offer],
    administered: Mapping[str, bool],
    unmapped: Sequence[str] = (),
    curated: Sequence[Offer] = (),
) -> FeedDiff:
    """Compare the feed's offers with the stored offers of this provider that the feed wrote or may write.

    `stored` holds the provider's live feed offers; `administered[id]` says an administrator changed it last;
    `curated` the provider's live offers no feed wrote, which a feed offer of the same identity supersedes.
    """
    result = FeedDiff(provider=provider, unmapped=list(unmapped))
    seen = set()
    for offer in fresh:
        seen.add(offer.id)
        old = stored.get(offer.id)
        if old is None:
            result.added.append(offer)
        elif administered.get(offer.id) and old.as_of >= offer.as_of:
            result.kept.append(old)
        elif (old.usd_per_gpu_hour, old.gpus_per_instance, old.gpu, old.region, old.tier, old.pricing) != (
            offer.usd_per_gpu_hour,
            offer.gpus_per_instance,
            offer.gpu,
            offer.region,
            offer.tier,
            offer.pricing,
        ):
            result.changed.append(Change(offer, old.usd_per_gpu_hour))
        else:
            result.unchanged += 1
    result.gone = [offer for offer_id_, offer in sorted(stored.items()) if offer_id_ not in seen]
    by_identity = {offer.identity: offer for offer in fresh if offer.id not in {o.id for o in result.kept}}
    result.superseded = [
        (offer, by_identity[offer.identity].id)
        for offer in sorted(curated, key=lambda o: o.id)
        if offer.identity in by_identity and offer.id not in seen and offer.as_of <= by_identity[offer.identity].as_of
    ]
    return result
