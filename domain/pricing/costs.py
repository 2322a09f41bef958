"""Renting a configuration: which offer, how many instances, and what it costs per hour, month, token, run, image."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from domain.catalog import Offer
from domain.workloads.results import Assumption

HOURS_PER_MONTH = 730.0
# Older prices are flagged in answers: GPU rents moved by half within two years.
PRICE_AGE_WARNING_DAYS = 90
# Options priced with an offer older than this are still shown but say so and rank after fresh ones
# (GPU_ADVISOR_PRICE_MAX_AGE_DAYS overrides it).
DEFAULT_PRICE_MAX_AGE_DAYS = 120
# A user's own (negotiated) price, constraints.prices, stands in for the catalog's offers of that GPU.
USER_PRICE_PROVIDER = "your-price"
USER_PRICE_SOURCE = "your price (constraints.prices)"


@dataclass(frozen=True)
class Rental:
    """Instances of one offer covering a configuration."""

    offer: Offer
    instances: int

    @property
    def gpus(self) -> int:
        return self.instances * self.offer.gpus_per_instance

    @property
    def usd_per_hour(self) -> float:
        return self.gpus * self.offer.usd_per_gpu_hour

    @property
    def machines(self) -> int:
        return machines(self.offer.gpus_per_instance, self.instances)

    def age_days(self, today: date) -> int:
        return self.offer.age_days(today)


def machines(gpus_per_instance: int, instances: int) -> int:
    """Machines that many instances occupy: an instance of more than 8 GPUs spans several."""
    return instances * max(1, -(-gpus_per_instance // 8))


def rent(
    offers: Iterable[Offer],
    gpus: int,
    gpus_per_machine: int,
    exact: bool = False,
    fits: Callable[[int, int], bool] = lambda gpus, machines: True,
) -> Rental | None:
    """The cheapest way to rent `gpus` GPUs when each model copy needs `gpus_per_machine` GPUs in one machine."""
    # An offer listed per single GPU is a one-GPU instance: it cannot host tensor parallelism. Instances are rented
    # whole, so the configuration may get more GPUs than asked for (they run extra copies); with `exact` it may not.
    # `fits(gpus, machines)` rejects rentals that break the caller's limits before the cheapest is chosen.
    best: tuple[float, float, int, str] | None = None
    chosen: tuple[Offer, int] | None = None
    for offer in offers:
        if not can_host(offer, gpus_per_machine):
            continue
        size = offer.gpus_per_instance
        instances = math.ceil(gpus / size)
        rented = instances * size  # Rental.gpus
        if exact and rented != gpus:
            continue
        # Compared without building a Rental per offer: Rental.usd_per_hour, then the price, then fewer machines (one
        # 8-GPU instance rather than eight 1-GPU ones at the same price), then the id.
        key = (rented * offer.usd_per_gpu_hour, offer.usd_per_gpu_hour, machines(size, instances), offer.id)
        if (best is None or key < best) and fits(rented, machines(size, instances)):
            best, chosen = key, (offer, instances)
    return Rental(offer=chosen[0], instances=chosen[1]) if chosen is not None else None


def can_host(offer: Offer, gpus_per_machine: int) -> bool:
    """Whether the offer's instances hold whole model copies of `gpus_per_machine` GPUs in one machine each."""
    size = offer.gpus_per_instance
    return size == gpus_per_machine or (size > gpus_per_machine and not size % gpus_per_machine)


def allowed_offers(offers: Sequence[Offer], pricing: Sequence[str], providers: Sequence[str] | None) -> list[Offer]:
    """Offers under the allowed pricing models and providers."""
    return [
        offer for offer in offers if offer.pricing in pricing and (providers is None or offer.provider in providers)
    ]


def per_million_tokens(usd_per_hour: float, tokens_per_second: float) -> float:
    """Cost of a million generated tokens at this throughput."""
    return usd_per_hour / (tokens_per_second * 3600.0) * 1e6


def per_run(usd_per_hour: float, hours: float) -> float:
    """Cost of a run: hours x hourly price."""
    return usd_per_hour * hours


def per_1000_images(usd_per_hour: float, images_per_hour: float) -> float:
    """Cost of a thousand images."""
    return usd_per_hour / images_per_hour * 1000.0


def is_stale(offer: Offer, today: date, max_age_days: int) -> bool:
    """Whether the price is older than the answer may rely on; a user's own price never is."""
    return offer.provider != USER_PRICE_PROVIDER and offer.age_days(today) > max_age_days


def stale_count(offers: Iterable[Offer], today: date, max_age_days: int) -> int:
    """How many of the offers are too old to rely on."""
    return sum(1 for offer in offers if is_stale(offer, today, max_age_days))


def with_user_prices(
    offers: Sequence[Offer], prices: Mapping[str, float] | None, pricing: str, today: date
) -> list[Offer]:
    """The offers to price with: a GPU the user priced is rented at their rate instead of the catalog's offers of it."""
    # At their rate in every instance size the catalog lists the GPU in (one and eight GPUs when it lists none).
    if not prices:
        return list(offers)
    kept = [offer for offer in offers if offer.gpu not in prices]
    for gpu, usd in sorted(prices.items()):
        sizes = sorted({offer.gpus_per_instance for offer in offers if offer.gpu == gpu} or {1, 8})
        kept += [
            Offer(
                id=f"{USER_PRICE_PROVIDER}-{gpu}-x{size}",
                provider=USER_PRICE_PROVIDER,
                gpu=gpu,
                gpus_per_instance=size,
                pricing=pricing,  # type: ignore[arg-type]
                usd_per_gpu_hour=usd,
                as_of=today,
                source=USER_PRICE_SOURCE,
            )
            for size in sizes
        ]
    return kept


def user_price_assumption(offer: Offer | None) -> list[Assumption]:
    """The assumption an option priced with the user's own rate states; none otherwise."""
    if offer is None or offer.provider != USER_PRICE_PROVIDER:
        return []
    value = f"{offer.usd_per_gpu_hour:g} USD per GPU-hour for {offer.gpu}, your rate instead of the catalog offers"
    return [Assumption(name="price", value=value, source=USER_PRICE_SOURCE)]
