"""Which fit-set points identify each fitted factor: the points whose reproduction reads it.

Runs every calibration point of the FIT SET through the harness (domain/calibration/harness.py) with each factor's
`at` wrapped so that it records the factors a reproduction reads, then lists, for every factor of
domain/data/factors.toml whose source is the fit, the fit-set points that read it. A factor read by fewer than two
points, or by points of only one source, cannot be told apart from what those points share: it gets status
"default" (the fitter leaves it alone) instead of "fitted". Nothing of the test set is read.

    uv run python bench/factor_points.py            # print each fitted factor's points and sources
    uv run python bench/factor_points.py --write    # and write identified_by and status into factors.toml
"""

from __future__ import annotations

import argparse
import tomllib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from api.adapters.storage.reference import calibration_points, read_reference_documents
from bench.factor_toml import PATH, render
from domain.calibration.harness import reproduce
from domain.calibration.holdout import source_group
from domain.calibration.ledger import score
from domain.calibration.points import CalibrationPoint
from domain.catalog import Catalog
from domain.catalog.reference_files import parse_reference
from domain.hardware.efficiency import FITTED, Factor

MIN_POINTS = 2
MIN_SOURCES = 2


@contextmanager
def recording(read: set[tuple[str, str]]) -> Iterator[None]:
    """Record (family, name) of every table factor whose value is asked for while the block runs."""
    original = Factor.at

    def at(factor: Factor, scenario: Any) -> float:
        if factor.name:
            read.add((factor.family, factor.name))
        return original(factor, scenario)

    Factor.at = at  # type: ignore[method-assign]
    try:
        yield
    finally:
        Factor.at = original  # type: ignore[method-assign]


def factors_read(catalog: Catalog, point: CalibrationPoint) -> set[tuple[str, str]]:
    """The table factors the point's reproduction reads, in any scenario."""
    read: set[tuple[str, str]] = set()
    with recording(read):
        reproduce(catalog, point)
    return read


def fit_set(catalog: Catalog) -> list[CalibrationPoint]:
    """The calibration points on the fit side of the frozen split."""
    return [item.reproduction.point for item in score(catalog, calibration_points(), {}) if item.side == "fit"]


def identify(catalog: Catalog, points: Iterable[CalibrationPoint]) -> dict[tuple[str, str], list[CalibrationPoint]]:
    """For each (family, factor name), the points that read it."""
    readers: dict[tuple[str, str], list[CalibrationPoint]] = {}
    for point in points:
        for key in factors_read(catalog, point):
            readers.setdefault(key, []).append(point)
    return readers


def identified(points: Iterable[CalibrationPoint]) -> bool:
    """Whether points vary enough to fit a factor: at least two, from at least two sources."""
    points = list(points)
    return len(points) >= MIN_POINTS and len({source_group(p.source) for p in points}) >= MIN_SOURCES


def updated(document: dict[str, Any], readers: dict[tuple[str, str], list[CalibrationPoint]]) -> list[dict[str, Any]]:
    """The document's factor entries with identified_by and status of the fitted ones worked out again."""
    entries = []
    for entry in document["factor"]:
        entry = dict(entry)
        if entry["source"].startswith(FITTED):
            points = readers.get((entry["family"], entry["name"]), [])
            entry["identified_by"] = sorted(p.id for p in points)
            entry["status"] = "fitted" if identified(points) else "default"
        entries.append(entry)
    return entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    catalog = parse_reference(read_reference_documents())
    readers = identify(catalog, fit_set(catalog))
    document = tomllib.loads(PATH.read_text(encoding="utf-8"))
    entries = updated(document, readers)
    for entry in entries:
        if not entry["source"].startswith(FITTED):
            continue
        points = readers.get((entry["family"], entry["name"]), [])
        sources = {source_group(p.source) for p in points}
        flag = "" if entry["status"] == "fitted" else "  NOT IDENTIFIED: default"
        print(f"{entry['family']:9s} {entry['name']:20s} {len(points):3d} points {len(sources):2d} sources{flag}")
    if args.write:
        PATH.write_text(render(document["bounds"], entries), encoding="utf-8")


if __name__ == "__main__":
    main()
