"""Fit the efficiency table's expected values to the FIT SET of the calibration points (coordinate descent, bounded).

Prints each changed factor and the ledger before and after; nothing is written: the table in
domain/data/factors.toml is edited by hand from this output, so every change is reviewed with its source. The test
set (the frozen split of domain/calibration/holdout.py) is never read here. A value that ends on a bound is a missing
mechanism: it is printed with "ON BOUND" and must not be copied into the table. Only factors with status "fitted" in
domain/data/factors.toml move (bench/factor_points.py decides which: those two or more fit-set sources read).

    uv run python bench/fit_factors.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
from collections.abc import Iterable

from api.adapters.storage.reference import calibration_points, read_reference_documents
from bench.factor_points import factors_read
from domain.calibration.harness import reproduce
from domain.calibration.ledger import score
from domain.calibration.points import CalibrationPoint
from domain.catalog import Catalog
from domain.catalog.reference_files import parse_reference
from domain.hardware import efficiency

# (lower bound, upper bound) of each fitted factor's expected value: physics and the published ranges, kept with the
# factors in domain/data/factors.toml ([bounds]) so that the test suite reads the same ones.
BOUNDS = efficiency.BOUNDS
STEPS = (0.8, 0.9, 0.95, 1.05, 1.1, 1.25)


def loss(catalog: Catalog, points: Iterable[CalibrationPoint]) -> float:
    """Mean absolute log error, each point's capped at log(3) so that a few odd points cannot steer the fit."""
    errors = [min(abs(math.log(r.expected / r.point.value)), math.log(3)) for r in map_reproduce(catalog, points)]
    return statistics.fmean(errors) if errors else 0.0


def map_reproduce(catalog: Catalog, points: Iterable[CalibrationPoint]):  # type: ignore[no-untyped-def]
    return [reproduce(catalog, point) for point in points]


def fit_points(catalog: Catalog) -> list[CalibrationPoint]:
    """The calibration points of the fit set."""
    return [item.reproduction.point for item in score(catalog, calibration_points(), {}) if item.side == "fit"]


def families_of(catalog: Catalog, points: Iterable[CalibrationPoint]) -> set[str]:
    gpus = {point.gpu for point in points}
    return {efficiency.family_of(gpu) for gpu in catalog.gpus if gpu.id in gpus}


def _slots(families: Iterable[str]) -> list[tuple[dict[str, efficiency.Factor], str]]:
    """The (table row, name) of every factor the fit may move: the families' rows, then the shared factors."""
    rows: list[dict[str, efficiency.Factor]] = [efficiency.EFFICIENCY[f] for f in sorted(families)]  # type: ignore[index]
    rows.append(efficiency.SHARED)
    return [(row, name) for row in rows for name in BOUNDS if name in row]


def _status(family: str, name: str) -> str:
    """The status of the table factor a reproduction read."""
    if family == efficiency.ALL_FAMILIES:
        return efficiency.SHARED[name].status
    if name == "gemm_mfu_large":
        return efficiency.GEMM_SIZE[family][0].status  # type: ignore[index]
    if name == "block_fp8_moe":
        return efficiency.BLOCK_FP8_MOE[family].status  # type: ignore[index]
    return efficiency.EFFICIENCY[family][name].status  # type: ignore[index]


def without_defaults(catalog: Catalog, points: list[CalibrationPoint]) -> list[CalibrationPoint]:
    """The points whose reproduction reads no default factor: those a factor of every family may be fitted to."""
    # A default is a guess no fit checks: a point read through one (torchtitan's MI300X runs through CDNA 3's
    # train_mfu) would move a shared factor by what the guess is off, not by what the shared factor governs.
    return [p for p in points if all(_status(*key) != "default" for key in factors_read(catalog, p))]


def fit(catalog: Catalog, points: list[CalibrationPoint], families: Iterable[str], rounds: int) -> None:
    """Coordinate descent on the families' and the shared factors, in place in the efficiency tables."""
    shared_points = without_defaults(catalog, points)
    for _ in range(rounds):
        for row, name in _slots(families):
            low, high = BOUNDS[name]
            current = row[name]
            if current.status != "fitted":
                continue  # a measurement of its own, or too few fit-set sources read it (bench/factor_points.py)
            used = shared_points if row is efficiency.SHARED else points
            best = loss(catalog, used)
            for step in STEPS:
                value = min(high, max(low, current.expected * step))
                scale = value / current.expected
                # Efficiencies and shares stay below 1 at the fast end of the band too (floors and sizes are no share).
                ceiling = 0.95 if current.higher_is_faster else math.inf
                trial = dataclasses.replace(
                    current,
                    expected=value,
                    low=current.low * scale,
                    high=min(ceiling, max(value, current.high * scale)),
                )
                row[name] = trial
                score_ = loss(catalog, used)
                if score_ < best - 1e-6:
                    best, current = score_, trial
                row[name] = current


def summary(catalog: Catalog, points: list[CalibrationPoint]) -> str:
    errors = [abs(r.error) for r in map_reproduce(catalog, points)]
    return f"median {100 * statistics.median(errors):.1f}% worst {100 * max(errors):.0f}% over {len(errors)} points"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    catalog = parse_reference(read_reference_documents())
    points = fit_points(catalog)
    print("fit set before:", summary(catalog, points))
    tables = {**efficiency.EFFICIENCY, efficiency.ALL_FAMILIES: efficiency.SHARED}
    original = {f: dict(row) for f, row in tables.items()}
    fit(catalog, points, families_of(catalog, points), args.rounds)
    print("fit set after: ", summary(catalog, points))
    for family, row in tables.items():
        for name, factor in row.items():
            before = original[family][name]
            if abs(factor.expected - before.expected) > 1e-9:
                low, high = BOUNDS.get(name, (-math.inf, math.inf))
                pinned = (
                    " ON BOUND" if math.isclose(factor.expected, low) or math.isclose(factor.expected, high) else ""
                )
                print(
                    f"{family:9s} {name:20s} {before.expected:g} -> {factor.expected:.3g} "
                    f"(band {factor.low:.3g}-{factor.high:.3g}){pinned}"
                )


if __name__ == "__main__":
    main()
