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
    """The cheapest way to rent `gpus` GPUs when each model copy needs `gpus_per_machine` GPUs in one machine.

    An offer listed per single GPU is a one-GPU instance: it cannot host tensor parallelism. Instances are rented
    whole, so the configuration may get more GPUs than asked for (they run extra copies); with `exact` it may not.
    `fits(gpus, machines)` rejects rentals that break the caller's limits before the cheapest is chosen.
    """
    best: tuple[float, float, str] | None = None
    chosen: tuple[Offer, int] | None = None
    for offer in offers:
        if not can_host(offer, gpus_per_machine):
            continue
        size = offer.gpus_per_instance
        instances = math.ceil(gpus / size)
        rented = instances * size  # Rental.gpus
        if exact and rented != gpus:
            continue
        if not fits(rented, machines(size, instances)):
            continue
        # Compared without building a Rental per offer: Rental.usd_per_hour, then the price, then the id.
        key = (rented * offer.usd_per_gpu_hour, offer.usd_per_gpu_hour, offer.id)
        if best is None or key < best:
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
