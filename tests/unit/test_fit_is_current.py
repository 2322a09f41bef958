"""The shipped efficiency table is the fitter's fixed point on the fit set: refitting it moves nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.fit_factors import families_of, fit, fit_points, without_defaults
from domain.catalog import Catalog
from domain.hardware import efficiency


@pytest.fixture
def restored() -> Iterator[None]:
    # The fitter moves factors in place in the installed tables: put them back whatever the test does.
    rows = {family: dict(row) for family, row in efficiency.EFFICIENCY.items()}
    shared = dict(efficiency.SHARED)
    yield
    for family, row in rows.items():
        efficiency.EFFICIENCY[family] = row
    efficiency.SHARED.clear()
    efficiency.SHARED.update(shared)


def test_one_more_round_of_the_fitter_moves_no_factor(reference: Catalog, restored: None) -> None:
    # A model or calibration change without `bench/fit_factors.py` run and its values copied leaves this failing.
    points = fit_points(reference)
    before = {(f, n): item.expected for f, row in efficiency.EFFICIENCY.items() for n, item in row.items()}
    before |= {("all", n): item.expected for n, item in efficiency.SHARED.items()}
    fit(reference, points, families_of(reference, points), rounds=1)
    after = {(f, n): item.expected for f, row in efficiency.EFFICIENCY.items() for n, item in row.items()}
    after |= {("all", n): item.expected for n, item in efficiency.SHARED.items()}
    assert {key: (before[key], value) for key, value in after.items() if value != before[key]} == {}


def test_a_point_read_through_a_default_moves_no_shared_factor(reference: Catalog) -> None:
    # torchtitan's MI300X runs read CDNA 3's train_mfu, a default; its H100 runs read Hopper's, which is fitted.
    kept = {point.id for point in without_defaults(reference, fit_points(reference))}
    assert "torchao-0.10-torchtitan-llama3-8b-h100-8gpu-bf16-seq8192" in kept
    assert "torchao-0.13-torchtitan-llama3-8b-mi300x-8gpu-bf16-seq8192" not in kept
