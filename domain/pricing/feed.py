"""Price-feed offers as catalog offers, and the difference a sync would make (pure: no fetching, no storage)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from domain.catalog import Catalog, Gpu, Offer, lookup_key

# gpuhunt provider name -> catalog provider id.
FEED_PROVIDERS: dict[str, str] = {
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
# Feed GPU names whose catalog id depends on the memory (GB) the feed reports.
_BY_MEMORY: dict[str, tuple[tuple[float, str], ...]] = {
    "a100": ((40, "a100-sxm-40gb"), (80, "a100-sxm-80gb")),
    "h100": ((80, "h100-sxm"), (94, "h100-nvl")),
    "v100": ((16, "v100-16gb"), (32, "v100-32gb")),
}
_SLUG = re.compile(r"[^a-z0-9.]+")


@dataclass(frozen=True)
class FeedItem:
    """One instance type as a feed lists it: whole-instance price per hour."""

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
    unchanged: int = 0
    unmapped: list[str] = field(default_factory=list)  # feed GPU names the catalog has no id for


def catalog_gpu(catalog: Catalog, name: str, memory_gb: float | None) -> Gpu | None:
    """The catalog GPU a feed's name and memory denote, or None."""
    key = lookup_key(name)
    for feed_memory_gb, gpu_id in _BY_MEMORY.get(key, ()):
        if memory_gb is not None and abs(memory_gb - feed_memory_gb) <= 0.1 * feed_memory_gb:
            return catalog.gpu(gpu_id)
    gpu = catalog.gpu(name)
    if gpu is None or (memory_gb is not None and abs(gpu.memory_gb - memory_gb) > 0.15 * gpu.memory_gb):
        return None
    return gpu


def offer_id(provider: str, instance: str, pricing: str) -> str:
    """A stable id for a feed offer: provider, instance type and pricing model."""
    slug = _SLUG.sub("-", f"{provider}-{instance}".lower()).strip("-")
    suffix = "-spot" if pricing == "spot" else ""
    return (slug[: 64 - len(suffix)].rstrip("-") + suffix) or provider


def feed_offers(
    catalog: Catalog, items: Iterable[FeedItem], *, feed: str, version: str, today: date
) -> tuple[list[Offer], list[str]]:
    """Catalog offers for the feed's GPU instances (cheapest region per instance type) and the unmapped GPU names."""
    cheapest: dict[str, tuple[FeedItem, Gpu]] = {}
    unmapped: set[str] = set()
    for item in items:
        if not item.gpu_name or item.gpu_count < 1 or item.usd_per_hour <= 0:
            continue
        gpu = catalog_gpu(catalog, item.gpu_name, item.gpu_memory_gb)
        if gpu is None:
            unmapped.add(item.gpu_name)
            continue
        key = offer_id(FEED_PROVIDERS.get(item.provider, item.provider), item.instance, "spot" if item.spot else "")
        if key not in cheapest or item.usd_per_hour < cheapest[key][0].usd_per_hour:
            cheapest[key] = (item, gpu)
    offers = [
        Offer(
            id=key,
            provider=FEED_PROVIDERS.get(item.provider, item.provider),
            gpu=gpu.id,
            gpus_per_instance=item.gpu_count,
            pricing="spot" if item.spot else "on_demand",
            usd_per_gpu_hour=round(item.usd_per_hour / item.gpu_count, 4),
            instance=item.instance,
            vcpus=max(1, item.vcpus // item.gpu_count) if item.vcpus else None,
            ram_gb=round(item.ram_gb / item.gpu_count, 2) if item.ram_gb else None,
            region=item.region,
            as_of=today,
            source=f"{feed} catalog {item.provider} {version}",
            notes=f"Cheapest region of instance {item.instance} in the {feed} feed; per-GPU share of the instance.",
        )
        for key, (item, gpu) in sorted(cheapest.items())
    ]
    return offers, sorted(unmapped)


def diff(
    provider: str,
    fresh: Sequence[Offer],
    stored: Mapping[str, Offer],
    administered: Mapping[str, bool],
    unmapped: Sequence[str] = (),
) -> FeedDiff:
    """Compare the feed's offers with the stored offers of this provider that the feed wrote or may write.

    `stored` holds the provider's live feed offers; `administered[id]` says an administrator changed it last.
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
        elif (old.usd_per_gpu_hour, old.gpus_per_instance, old.gpu, old.region) != (
            offer.usd_per_gpu_hour,
            offer.gpus_per_instance,
            offer.gpu,
            offer.region,
        ):
            result.changed.append(Change(offer, old.usd_per_gpu_hour))
        else:
            result.unchanged += 1
    result.gone = [offer for offer_id_, offer in sorted(stored.items()) if offer_id_ not in seen]
    return result
