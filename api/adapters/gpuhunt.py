"""Fetching provider offers through gpuhunt: the catalogs dstack publishes per provider (GPUHUNT_CATALOG_URL) and the
providers gpuhunt queries live (their credentials, where they need any, come from the environment)."""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from domain.pricing.feed import FEED_PROVIDERS, OFFLINE_FEED_PROVIDERS, ONLINE_FEED_PROVIDERS, FeedItem

FEED = "gpuhunt"
_CATALOG_LOGGER = "gpuhunt._internal.catalog"
# gpuhunt's own default; GPUHUNT_CATALOG_URL overrides it for gpuhunt as it does here.
DEFAULT_CATALOG_URL = "https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com/v3"


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


def catalog_url() -> str:
    """The address gpuhunt reads the published catalogs from."""
    return os.getenv("GPUHUNT_CATALOG_URL", DEFAULT_CATALOG_URL).rstrip("/")


def feed_items(provider: str, items: Iterable[Any]) -> tuple[FeedItem, ...]:
    """gpuhunt CatalogItems with GPUs as feed items, keeping the flags and provider data that carry the pricing."""
    return tuple(
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
            flags=tuple(item.flags or ()),
            details=dict(item.provider_data or {}),
        )
        for item in items
        if item.gpu_count and item.gpu_count > 0
    )


def _offline(providers: list[str]) -> list[Fetched]:
    import gpuhunt

    if not providers:
        return []
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
        items = feed_items(provider, catalog.query(provider=provider, min_gpu_count=1))
        answers.append(Fetched(provider, items=items, version=catalog.catalog[provider].version))
    return answers


def online_items(provider: str) -> tuple[Any, str]:
    """A live provider's gpuhunt CatalogItems and a version naming when they were read."""
    from datetime import UTC, datetime

    from gpuhunt._internal.default import ONLINE_PROVIDER_MODULES

    module_name, class_name = next(m for m in ONLINE_PROVIDER_MODULES if m[0].rsplit(".", 1)[1] == provider)
    provider_class = getattr(importlib.import_module(module_name), class_name)
    items = provider_class.from_env().get(query_filter=None, balance_resources=False)
    return items, "live " + datetime.now(UTC).strftime("%Y%m%d-%H%M")


def _online(provider: str) -> Fetched:
    try:
        items, version = online_items(provider)
    except Exception as error:
        return Fetched(provider, error=f"{type(error).__name__}: {error}")
    return Fetched(provider, items=feed_items(provider, items), version=version)


def fetch(providers: list[str]) -> list[Fetched]:
    """Each asked provider's GPU offers; a provider that cannot be read says why and does not stop the others."""
    answers = _offline([p for p in providers if p in OFFLINE_FEED_PROVIDERS])
    answers += [_online(p) for p in providers if p in ONLINE_FEED_PROVIDERS]
    return sorted(answers, key=lambda answer: providers.index(answer.provider))


def known_providers() -> list[str]:
    """The gpuhunt providers the catalog maps to its own provider ids."""
    return list(FEED_PROVIDERS)
