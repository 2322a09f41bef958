"""The offer CSV format itself: rows named by the line they start on, strict quoting, formula cells quoted on export."""

from __future__ import annotations

import csv
import io
from datetime import date

import pytest

from api.services import offer_import
from api.services.offer_import import CSV_COLUMNS, RowErrors, csv_rows, offers_csv, parse_rows
from domain.catalog import Catalog, Offer

HEADER = ",".join(CSV_COLUMNS)
CELLS = {
    "id": "{id}",
    "provider": "digitalocean",
    "gpu": "h100-sxm",
    "gpus_per_instance": "1",
    "pricing": "on_demand",
    "usd_per_gpu_hour": "2.5",
    "as_of": "2026-11-25",
    "source": "provider page",
}
# Notes last, so a test can append a quoted note to a row.
ROW = ",".join(CELLS.get(column, "") for column in CSV_COLUMNS)


def test_blank_lines_are_no_rows_and_count_towards_no_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offer_import, "MAX_ROWS", 2)
    text = f"{HEADER}\n\n{ROW.format(id='a-1')}\n\n\n{ROW.format(id='a-2')}\n\n"
    rows = csv_rows(text)
    assert [(row.line, row.values["id"]) for row in rows] == [(3, "a-1"), (6, "a-2")]
    with pytest.raises(RowErrors) as raised:
        csv_rows(text + ROW.format(id="a-3") + "\n")
    assert [(error.line, error.field) for error in raised.value.errors] == [(8, "offers")]


def test_an_unterminated_quote_is_reported_at_its_row() -> None:
    text = f"{HEADER}\n{ROW.format(id='a-1')}\n" + ROW.format(id='"a-2') + f"\n{ROW.format(id='a-3')}\n"
    with pytest.raises(RowErrors) as raised:
        csv_rows(text)
    [error] = raised.value.errors
    assert (error.line, error.field) == (3, "body") and "unterminated quote" in error.message


def test_a_row_spanning_lines_is_named_by_its_first_line() -> None:
    quoted = ROW.format(id="a-2").removesuffix(",") + ',"two\nlines"'
    rows = csv_rows(f"{HEADER}\n{ROW.format(id='a-1')}\n{quoted}\n{ROW.format(id='a-3')}\n")
    assert [(row.line, row.values["id"]) for row in rows] == [(2, "a-1"), (3, "a-2"), (5, "a-3")]
    assert rows[1].values["notes"] == "two\nlines"


@pytest.mark.parametrize("cell", ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1:A9)", "\t=1", "\r=1"])
def test_formula_cells_are_quoted_on_export_and_read_back_unchanged(reference: Catalog, cell: str) -> None:
    offer = Offer(
        id="acme-h100-sxm-on-demand",
        provider="digitalocean",
        gpu="h100-sxm",
        pricing="on_demand",
        usd_per_gpu_hour=2.5,
        as_of=date(2026, 11, 25),
        source=cell,
        notes=cell,
        region=cell,
    )
    exported = offers_csv([offer])
    [cells] = list(csv.DictReader(io.StringIO(exported, newline="")))
    for column in ("source", "notes", "region"):
        assert cells[column] == "'" + cell  # a spreadsheet shows it as text instead of running it
    [again] = parse_rows(csv_rows(exported), reference, lax=True)
    assert (again.source, again.notes, again.region) == (cell, cell, cell)
