"""Choosing the answer language: an explicit `lang` wins, then Accept-Language, then English."""

from __future__ import annotations

from domain.workloads.requests import Lang


def resolve_lang(explicit: Lang | None, accept_language: str | None) -> Lang:
    """The language to answer in."""
    if explicit is not None:
        return explicit
    best: tuple[float, Lang] = (0.0, "en")
    for part in (accept_language or "").split(","):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                continue
        language = tag.strip().lower()
        lang: Lang | None = "zh" if language.startswith("zh") else "en" if language.startswith("en") else None
        if lang is not None and quality > best[0]:
            best = (quality, lang)
    return best[1]
