"""Fit the efficiency table's expected values to the calibration points (coordinate descent, bounded).

Prints each changed factor and the ledger before and after; nothing is written: the table in
domain/hardware/efficiency.py is edited by hand from this output, so every change is reviewed with its source.

    uv run python bench/fit_factors.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics

from api.storage.reference import calibration_points, read_reference_documents
from domain.calibration.harness import build_ledger
from domain.catalog.reference_files import parse_reference
from domain.hardware import efficiency

# (lower bound, upper bound) of each factor's expected value: physics and the published ranges.
BOUNDS = {
    "decode_mbu_dense": (0.40, 0.85),
    "decode_mbu_moe": (0.30, 0.80),
    "prefill_mfu": (0.25, 0.65),
    "step_floor_us_dense": (5.0, 120.0),
    "step_floor_us_moe": (5.0, 200.0),
    "train_mfu": (0.15, 0.60),
    "diffusion_mfu": (0.15, 0.65),
    "fp8_decode": (0.40, 1.0),
}
STEPS = (0.8, 0.9, 0.95, 1.05, 1.1, 1.25)


def loss(catalog, points) -> float:  # type: ignore[no-untyped-def]
    """Mean absolute log error, each point's capped at log(3) so that a few odd points cannot steer the fit."""
    ledger = build_ledger(catalog, points)
    return statistics.fmean(min(abs(math.log(r.expected / r.point.value)), math.log(3)) for r in ledger.reproductions)


def summary(catalog, points) -> str:  # type: ignore[no-untyped-def]
    errors = [abs(r.error) for r in build_ledger(catalog, points).reproductions]
    return f"median {100 * statistics.median(errors):.1f}% worst {100 * max(errors):.0f}% over {len(errors)} points"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    catalog = parse_reference(read_reference_documents())
    points = calibration_points()
    used = {efficiency.family_of(g) for g in catalog.gpus if any(p.gpu == g.id for p in points)}
    print("before:", summary(catalog, points))
    best = loss(catalog, points)
    original = {f: dict(row) for f, row in efficiency.EFFICIENCY.items()}
    for _ in range(args.rounds):
        for family in sorted(used):
            for name, (low, high) in BOUNDS.items():
                current = efficiency.EFFICIENCY[family][name]
                for step in STEPS:
                    value = min(high, max(low, current.expected * step))
                    scale = value / current.expected
                    # Efficiencies stay below 1 at the fast end of the band too.
                    ceiling = 0.95 if name not in ("step_floor_us_dense", "step_floor_us_moe") else math.inf
                    trial = dataclasses.replace(
                        current,
                        expected=value,
                        low=current.low * scale,
                        high=min(ceiling, max(value, current.high * scale)),
                    )
                    efficiency.EFFICIENCY[family][name] = trial
                    score = loss(catalog, points)
                    if score < best - 1e-6:
                        best, current = score, trial
                    efficiency.EFFICIENCY[family][name] = current
    print("after: ", summary(catalog, points))
    for family, row in efficiency.EFFICIENCY.items():
        for name, factor in row.items():
            before = original[family][name]
            if abs(factor.expected - before.expected) > 1e-9:
                print(
                    f"{family:9s} {name:20s} {before.expected:g} -> {factor.expected:.3g} "
                    f"(band {factor.low:.3g}-{factor.high:.3g})"
                )


if __name__ == "__main__":
    main()
