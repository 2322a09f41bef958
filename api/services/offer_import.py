"""Offers as clients send them: the JSON representation GET /v1/offers returns, and CSV with a fixed header."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from api.schemas import FieldError, OfferWrite
from api.schemas.allowed_values import allowed_values, teach
from api.schemas.json_numbers import convert_with_integral_floats
from api.schemas.problems import field_in_message, plain_message
from api.schemas.storable_text import MESSAGE, unstorable_field
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
# A cell starting with one of these is a formula to a spreadsheet (OWASP CSV injection); exports quote it.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


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


def _field_error(error: msgspec.ValidationError, line: int, target: Any, row: Mapping[str, Any]) -> FieldError:
    field = field_in_message(str(error)) or "row"
    allowed = allowed_values(target, field, dict(row)) if field != "row" else []
    message, meant = teach(plain_message(str(error)), allowed)
    if message == plain_message(str(error)):
        return _error(line, field, message)
    return FieldError(field=field, message=message, line=line, allowed=allowed, suggestions=meant or None)


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
        return _field_error(error, line, OfferWrite, present)
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
        return _field_error(error, line, Offer, document)
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


def _header(cells: list[str], line: int) -> list[str]:
    """The header's columns; every unknown, missing or repeated one is named (a repeat would let the last win)."""
    errors = [_error(line, column, "unknown column") for column in cells if column not in CSV_COLUMNS]
    errors += [_error(line, column, "missing column") for column in REQUIRED_COLUMNS if column not in cells]
    repeated = sorted({column for column in cells if cells.count(column) > 1})
    errors += [_error(line, column, f"column given {cells.count(column)} times") for column in repeated]
    if errors:
        raise RowErrors(errors)
    return cells


def _unescaped(cell: str) -> str:
    """A cell as exported: the quote `offers_csv` put before a formula character is taken off again."""
    return cell[1:] if cell[:1] == "'" and cell[1:2] in FORMULA_STARTS else cell


def csv_rows(text: str) -> list[Row]:
    """The rows of a CSV document with the documented header; a row names the line it starts on.

    Blank lines are skipped (they are no rows, so they count towards no limit), and a quote left open is reported
    at the line it opens on rather than swallowing the rest of the file into one cell.
    """
    # newline="" leaves line endings to the csv module, so a bare CR ends a line instead of breaking the parse.
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    rows: list[Row] = []
    line = 1
    try:
        for cells in reader:
            # The record just read began after the previous one ended.
            start, line = line, reader.line_num + 1
            if not any(cell.strip() for cell in cells):
                continue
            if header is None:
                header = _header(cells, start)
                continue
            if len(rows) == MAX_ROWS:
                raise RowErrors([_error(start, "offers", f"more than {MAX_ROWS} rows")])
            if len(cells) > len(header):
                rows.append(Row(start, {}, problem="more values than header columns"))
                continue
            rows.append(Row(start, {column: _unescaped(cell) for column, cell in zip(header, cells, strict=False)}))
    except csv.Error as error:
        if "end of data" in str(error):
            message = f"unterminated quote: a quoted cell of the row starting on line {line} is never closed"
            raise RowErrors([_error(line, "body", message)]) from None
        raise RowErrors([_error(reader.line_num, "body", f"not CSV: {error}")]) from None
    if header is None:
        _header([], 1)  # nothing but blank lines: every required column is missing
    return rows


def json_rows(document: Any) -> list[Row]:
    """The offers of {"offers": [...]} or of a bare list; the line is the position, from 1."""
    if isinstance(document, dict) and (unknown := sorted(set(document) - {"offers"})):
        # Like every other body: a misspelt or extra field is refused, not ignored.
        raise RowErrors([_error(1, str(field), "unknown field") for field in unknown])
    items = document.get("offers") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise RowErrors([_error(1, "offers", 'expected {"offers": [...]} or a list of offers')])
    if len(items) > MAX_ROWS:
        raise RowErrors([_error(1, "offers", f"more than {MAX_ROWS} offers")])
    return [
        Row(position, item) if isinstance(item, dict) else Row(position, {}, problem="expected an offer object")
        for position, item in enumerate(items, 1)
    ]


def _exported(value: Any) -> Any:
    """A cell a spreadsheet shows as text: one starting with a formula character gets a leading quote (OWASP)."""
    if value is None:
        return ""
    if isinstance(value, str) and value[:1] in FORMULA_STARTS:
        return "'" + value
    return value


def offers_csv(offers: Iterable[Offer]) -> str:
    """Offers in the import format, header first; cells a spreadsheet would run as formulas are quoted."""
    out = io.StringIO()
    # RFC 4180's CRLF: the writer quotes only cells holding a character of the line terminator, so with "\n" alone a
    # bare CR in a note went out unquoted and split the row.
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    for offer in offers:
        values = msgspec.to_builtins(offer)
        writer.writerow({column: _exported(values.get(column)) for column in CSV_COLUMNS})
    return out.getvalue()
