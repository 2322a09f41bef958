"""Fetching provider offers through gpuhunt (dstack's published catalogs, one per provider; GPUHUNT_CATALOG_URL)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from domain.pricing.feed import FEED_PROVIDERS, FeedItem

FEED = "gpuhunt"
_CATALOG_LOGGER = "gpuhunt._internal.catalog"


@dataclass(frozen=True)
class Fetched:
    """One provider's answer: its items and catalog version, or why it could not be read."""

    provider: str
    items: tuple[FeedItem, ...] = ()
    version: str = ""
    error: str | None = None


class _Failures(logging.Handler):
    """gpuhunt logs a provider it could not load and goes on; this keeps the reason per provider."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.reasons: dict[str, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        provider = str(record.args[0]) if isinstance(record.args, tuple) and record.args else "?"
        reason = record.exc_info[1] if record.exc_info and record.exc_info[1] else record.getMessage()
        self.reasons[provider] = f"{type(reason).__name__}: {reason}" if isinstance(reason, BaseException) else reason


def fetch(providers: list[str]) -> list[Fetched]:
    """Each asked provider's GPU offers; a provider that cannot be read says why and does not stop the others."""
    import gpuhunt

    catalog = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
    failures = _Failures()
    logger = logging.getLogger(_CATALOG_LOGGER)
    logger.addHandler(failures)
    try:
        catalog.load()
    except gpuhunt.GPUHuntError as error:
        cause = error.__cause__ or error
        return [Fetched(p, error=failures.reasons.get(p, f"{type(cause).__name__}: {cause}")) for p in providers]
    finally:
        logger.removeHandler(failures)
    answers = []
    for provider in providers:
        if provider in failures.reasons or provider not in catalog.catalog:
            answers.append(Fetched(provider, error=failures.reasons.get(provider, "no catalog published")))
            continue
        items = tuple(
            FeedItem(
                provider=provider,
                instance=item.instance_name,
                region=item.location,
                usd_per_hour=item.price,
                gpu_count=item.gpu_count,
                gpu_name=item.gpu_name,
                gpu_memory_gb=item.gpu_memory,
                spot=item.spot,
                vcpus=item.cpu,
                ram_gb=item.memory,
            )
            for item in catalog.query(provider=provider, min_gpu_count=1)
        )
        answers.append(Fetched(provider, items=items, version=catalog.catalog[provider].version))
    return answers


def known_providers() -> list[str]:
    """The gpuhunt providers the catalog maps to its own provider ids."""
    return list(FEED_PROVIDERS)
