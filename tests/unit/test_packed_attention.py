"""Packed samples attend within themselves; a run that does not overlap its tensor-parallel exchange pays all of it."""

from __future__ import annotations

import pytest

from api.adapters.storage.reference import calibration_points
from domain.catalog import Catalog
from domain.performance.training import TrainingSpeed, training_factors
from domain.performance.training_flops import training_flops_per_token
from tests.conftest import gpu, llm


def _speed(reference: Catalog, model: str, **conditions: object) -> TrainingSpeed:
    return TrainingSpeed(
        llm(reference, model),
        gpu(reference, "h100-sxm"),
        method="full",
        precision="bf16",
        train_tokens=1e10,
        sequence_length=4096,
        scenario="expected",
        fine_tuning=True,
        stack="megatron",
        **conditions,  # type: ignore[arg-type]
    )


def test_a_pack_of_short_samples_costs_the_samples_attention_not_the_packs(reference: Catalog) -> None:
    model = llm(reference, "llama-3.1-8b")
    packed, whole = _speed(reference, "llama-3.1-8b", attention_tokens=256), _speed(reference, "llama-3.1-8b")
    assert packed.flops_per_token == pytest.approx(training_flops_per_token(model, 256))
    # The linear layers are the same; only attention's 12 x layers x d x S shrinks, from S = 4,096 to 256.
    saved = 12.0 * model.layers * model.hidden_size * (4096 - 256)
    assert whole.flops_per_token - packed.flops_per_token == pytest.approx(saved)
    assert packed.run(8, 1, 8, 0).tokens_per_s > whole.run(8, 1, 8, 0).tokens_per_s
    # The pack, not the sample, sets the tokens each micro-batch holds.
    assert packed.batch(8, 1, 1, 1) == whole.batch(8, 1, 1, 1)


def test_every_packed_measurement_states_its_samples_length() -> None:
    packed = [point for point in calibration_points() if "packed" in point.notes.lower()]
    assert packed
    for point in packed:
        assert 0 < point.sample_tokens < point.sequence_length, point.id


def test_an_exchange_the_run_does_not_overlap_is_all_exposed_and_reads_no_overlap_factor(reference: Catalog) -> None:
    overlapped, exposed = _speed(reference, "llama-3.1-70b"), _speed(reference, "llama-3.1-70b", tp_comm_overlap=False)
    assert exposed.tensor_mfu(1) == overlapped.tensor_mfu(1)
    for tensor in (2, 4, 8):
        assert exposed.tensor_mfu(tensor) < overlapped.tensor_mfu(tensor)
        assert "tp_overlap" in {use.name for use in training_factors(overlapped, 8, tensor)}
        assert "tp_overlap" not in {use.name for use in training_factors(exposed, 8, tensor)}
