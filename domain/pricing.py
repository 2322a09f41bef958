"""Renting a configuration: which offer, how many instances, and what it costs per hour, month, token, run, image."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from domain.catalog import Offer

HOURS_PER_MONTH = 730.0
# Older prices are flagged in answers: GPU rents moved by half within two years.
PRICE_AGE_WARNING_DAYS = 90


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
        size = self.offer.gpus_per_instance
        return self.instances * max(1, -(-size // 8))

    def age_days(self, today: date) -> int:
        return self.offer.age_days(today)


def rent(
    offers: Iterable[Offer],
    gpus: int,
    gpus_per_machine: int,
    exact: bool = False,
    fits: Callable[[Rental], bool] = lambda _: True,
) -> Rental | None:
    """The cheapest way to rent `gpus` GPUs when each model copy needs `gpus_per_machine` GPUs in one machine.

    An offer listed per single GPU is a one-GPU instance: it cannot host tensor parallelism. Instances are rented
    whole, so the configuration may get more GPUs than asked for (they run extra copies); with `exact` it may not.
    `fits` rejects rentals that break the caller's limits (machines, GPUs) before the cheapest is chosen.
    """
    best: Rental | None = None
    for offer in offers:
        size = offer.gpus_per_instance
        if size < gpus_per_machine or (size > gpus_per_machine and size % gpus_per_machine):
            continue
        instances = math.ceil(gpus / size)
        if exact and instances * size != gpus:
            continue
        rental = Rental(offer=offer, instances=instances)
        if not fits(rental):
            continue
        if best is None or (rental.usd_per_hour, offer.usd_per_gpu_hour, offer.id) < (
            best.usd_per_hour,
            best.offer.usd_per_gpu_hour,
            best.offer.id,
        ):
            best = rental
    return best


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
