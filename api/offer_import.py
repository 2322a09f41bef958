"""Offers as clients send them: the JSON representation GET /v1/offers returns, and CSV with a fixed header."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from api.http.problems import field_in_message, plain_message
from api.json_numbers import convert_with_integral_floats
from api.schemas import FieldError, OfferWrite
from api.storable_text import MESSAGE, unstorable_field
from domain.catalog import Catalog, Offer

# The CSV header, in this order; `gpus_per_instance` and the optional columns may be left empty.
CSV_COLUMNS = (
    "id",
    "provider",
    "gpu",
    "gpus_per_instance",
    "pricing",
    "usd_per_gpu_hour",
    "instance",
    "vcpus",
    "ram_gb",
    "bare_metal",
    "region",
    "tier",
    "as_of",
    "source",
    "notes",
)
REQUIRED_COLUMNS = ("id", "provider", "gpu", "pricing", "usd_per_gpu_hour", "as_of", "source")
# Fields GET /v1/offers adds that a client cannot set; a PUT of what GET returned must still be accepted.
READ_ONLY_FIELDS = ("usd_per_instance_hour", "age_days")
MAX_ROWS = 10_000


class RowErrors(ValueError):
    """Rows that cannot be accepted; every bad row is named."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__(f"{len(errors)} invalid rows")
        self.errors = errors


@dataclass(frozen=True)
class Row:
    """One offer as sent, with the line (CSV) or position (JSON) it came from."""

    line: int
    values: dict[str, Any]
    problem: str | None = None


def _error(line: int, field: str, message: str) -> FieldError:
    return FieldError(field=field, message=message, line=line)


def _field_error(error: msgspec.ValidationError, line: int) -> FieldError:
    return _error(line, field_in_message(str(error)) or "row", plain_message(str(error)))


def to_offer(values: Mapping[str, Any], line: int, catalog: Catalog, *, lax: bool) -> Offer | FieldError:
    """One row as an Offer, or the first thing wrong with it (references checked against the catalog).

    Rows are checked against the published OfferWrite schema first, then against the catalog's own rules.
    """
    # An empty CSV cell means "not given"; in JSON a null must match the schema like any other value.
    present = {k: v for k, v in values.items() if v != ""} if lax else dict(values)
    if (field := unstorable_field(present)) is not None:
        return _error(line, field, MESSAGE)
    try:
        written = (
            msgspec.convert(present, OfferWrite, strict=False)
            if lax
            else convert_with_integral_floats(present, OfferWrite)
        )
    except msgspec.ValidationError as error:
        return _field_error(error, line)
    if not written.id:
        return _error(line, "id", "required")
    gpu = catalog.gpu(written.gpu)
    if gpu is None:
        suggestions = catalog.suggest("gpu", written.gpu)
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        return _error(line, "gpu", f"no GPU {written.gpu!r} in the catalog{hint}")
    if catalog.provider(written.provider) is None:
        return _error(line, "provider", f"no provider {written.provider!r} in the catalog")
    document = {k: v for k, v in msgspec.to_builtins(written).items() if k not in READ_ONLY_FIELDS and v is not None}
    try:
        offer = msgspec.convert(document | {"gpu": gpu.id}, Offer, strict=False)
    except msgspec.ValidationError as error:
        return _field_error(error, line)
    # Prices are stored with 4 decimals; rounding here keeps an unchanged re-import unchanged.
    return msgspec.structs.replace(offer, usd_per_gpu_hour=round(offer.usd_per_gpu_hour, 4))


def parse_rows(rows: Iterable[Row], catalog: Catalog, *, lax: bool) -> list[Offer]:
    """All rows as offers, or RowErrors naming every bad row (line, field, reason)."""
    offers: list[Offer] = []
    errors: list[FieldError] = []
    seen: dict[str, int] = {}
    for row in rows:
        if row.problem is not None:
            errors.append(_error(row.line, "row", row.problem))
            continue
        result = to_offer(row.values, row.line, catalog, lax=lax)
        if isinstance(result, FieldError):
            errors.append(result)
            continue
        if result.id in seen:
            errors.append(_error(row.line, "id", f"offer {result.id!r} also on line {seen[result.id]}"))
            continue
        seen[result.id] = row.line
        offers.append(result)
    if not offers and not errors:
        errors.append(_error(1, "offers", "no offers in the file"))
    if errors:
        raise RowErrors(errors)
    return offers


def csv_rows(text: str) -> list[Row]:
    """The rows of a CSV document with the documented header; header problems name line 1."""
    # newline="" leaves line endings to the csv module, so a bare CR ends a line instead of breaking the parse.
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames or []
        errors = [_error(1, column, "unknown column") for column in header if column not in CSV_COLUMNS]
        errors += [_error(1, column, "missing column") for column in REQUIRED_COLUMNS if column not in header]
        if errors:
            raise RowErrors(errors)
        rows = []
        for values in reader:
            if reader.line_num > MAX_ROWS + 1:
                raise RowErrors([_error(reader.line_num, "offers", f"more than {MAX_ROWS} rows")])
            if None in values:
                rows.append(Row(reader.line_num, {}, problem="more values than header columns"))
                continue
            rows.append(Row(reader.line_num, dict(values)))
    except csv.Error as error:
        raise RowErrors([_error(max(reader.line_num, 1), "body", f"not CSV: {error}")]) from None
    return rows


def json_rows(document: Any) -> list[Row]:
    """The offers of {"offers": [...]} or of a bare list; the line is the position, from 1."""
    items = document.get("offers") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise RowErrors([_error(1, "offers", 'expected {"offers": [...]} or a list of offers')])
    if len(items) > MAX_ROWS:
        raise RowErrors([_error(1, "offers", f"more than {MAX_ROWS} offers")])
    return [
        Row(position, item) if isinstance(item, dict) else Row(position, {}, problem="expected an offer object")
        for position, item in enumerate(items, 1)
    ]


def offers_csv(offers: Iterable[Offer]) -> str:
    """Offers in the import format, header first."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for offer in offers:
        values = msgspec.to_builtins(offer)
        writer.writerow({column: "" if values.get(column) is None else values[column] for column in CSV_COLUMNS})
    return out.getvalue()
