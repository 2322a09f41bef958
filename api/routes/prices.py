"""Price administration (API key) and offer history."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec
from litestar import Request, Response, delete, get, post, put
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example, OpenAPIMediaType, Operation, Reference, RequestBody, Schema
from litestar.openapi.spec.enums import OpenAPIType
from litestar.params import Body, Parameter
from sqlalchemy.ext.asyncio import AsyncSession

from api.adapters.storage.database import DATABASE_ERRORS
from api.adapters.storage.offer_repository import OfferChange, WriteReport, offer_exists, offer_history, write_offers
from api.http.auth import SECURITY, require_api_key
from api.http.problems import not_found, problem_responses
from api.http.request_body import ACCEPTS_OPT, BODY_OPT, JSON, media_type, strict_body
from api.openapi import examples
from api.schemas import FieldError, OfferBulkRead, OfferHistoryList, OfferHistoryRead, OfferRead, OfferWrite
from api.schemas.problems import ProblemError
from api.schemas.storable_text import STORABLE_PATTERN
from api.services.catalog_view import offer_read
from api.services.catalog_writes import apply_change, commit_change
from api.services.offer_import import CSV_COLUMNS, MAX_ROWS, RowErrors, csv_rows, json_rows, parse_rows, to_offer
from api.wiring import Services
from domain.catalog import SLUG_PATTERN, Catalog, Offer

log = logging.getLogger(__name__)

AnyRequest = Request[Any, Any, Any]
ID_PATTERN = SLUG_PATTERN
OFFER_ID = Annotated[
    str,
    Parameter(
        description="Offer id (lowercase letters, digits, dots and hyphens).",
        pattern=ID_PATTERN,
        max_length=64,
        examples=[Example(value="digitalocean-h100-sxm-on-demand")],
    ),
]
CSV_HEADER = ",".join(CSV_COLUMNS)
MEDIA_CSV = "text/csv"


def _rejected(errors: list[FieldError]) -> ProblemError:
    lines = "; ".join(f"line {e.line} {e.field}: {e.message}" for e in errors[:5])
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return ProblemError(400, f"Nothing was changed. {lines}{more}", type_="/problems/validation", errors=errors)


async def _write(services: Services, upserts: list[Offer], deletes: list[str], actor: str) -> WriteReport:
    """One transaction for the offers, their history rows and the catalog version; then every instance reloads."""
    # The snapshot served here, when it came from the database, lets the write check offers without reading every table.
    current = services.view.catalog if services.view.source == "database" else None
    writer = services.offer_writer
    if writer is not None:
        change = OfferChange(upserts, deletes, actor)
        return await apply_change(services, lambda: writer.write(change, current), serve=WriteReport.apply)

    async def work(session: AsyncSession) -> WriteReport:
        return await write_offers(session, upserts, deletes, actor=actor, current=current)

    return await commit_change(services, work, serve=WriteReport.apply)


@put(
    "/v1/admin/offers/{offer_id:str}",
    operation_id="putOffer",
    opt={BODY_OPT: OfferWrite},
    summary="Create or replace an offer (admin)",
    description=(
        "Create or replace one rental offer. The body is the representation getOffers returns (read-only fields "
        "`id`, `usd_per_instance_hour` and `age_days` are ignored). The change and its history row are written in "
        "one transaction, the catalog version changes and every instance reloads: a lone change at once, one that "
        "comes within the reload interval (1 s by default) of the last when that interval ends. Needs X-API-Key. "
        "Answers 201 when the offer is new, 200 when it replaced one."
    ),
    tags=["administration"],
    guards=[require_api_key],
    security=SECURITY,
    status_code=200,
    responses={
        200: ResponseSpec(
            OfferRead,
            generate_examples=False,
            description="The offer as stored.",
            examples=[Example(value=examples.OFFER)],
        ),
        201: ResponseSpec(
            OfferRead,
            generate_examples=False,
            description="The offer was created.",
            examples=[Example(value=examples.OFFER)],
        ),
    }
    | problem_responses(400, 401, 503),
)
async def put_offer(
    request: AnyRequest,
    services: NamedDependency[Services],
    offer_id: OFFER_ID,
    data: Annotated[OfferWrite, Body(description="The offer.", examples=[Example(value=examples.OFFER)])],
) -> Response[OfferRead]:
    data = await strict_body(request, OfferWrite)
    offer = to_offer(msgspec.to_builtins(data) | {"id": offer_id}, 1, services.view.catalog, lax=False)
    if isinstance(offer, FieldError):
        raise _rejected([offer])
    report = await _write(services, [offer], [], request.state.actor)
    status = 201 if report.created else 200
    return Response(offer_read(offer, datetime.now(UTC).date()), status_code=status)


@delete(
    "/v1/admin/offers/{offer_id:str}",
    operation_id="deleteOffer",
    summary="Delete an offer (admin)",
    description=(
        "Delete one offer. Its history is kept (a `deleted` row is added) and stays readable through "
        "getOfferHistory; the catalog version changes. Needs X-API-Key. Unknown id: 404."
    ),
    tags=["administration"],
    guards=[require_api_key],
    security=SECURITY,
    status_code=204,
    responses=problem_responses(400, 401, 404, 503),
)
async def delete_offer(request: AnyRequest, services: NamedDependency[Services], offer_id: OFFER_ID) -> None:
    report = await _write(services, [], [offer_id], request.state.actor)
    if not report.deleted:
        raise not_found("offer", offer_id, [])


@dataclass
class _BulkOperation(Operation):
    """Documents the two bodies the bulk import reads itself: JSON and CSV."""

    def __post_init__(self) -> None:
        self.request_body = RequestBody(
            required=True,
            description=(
                'JSON {"offers": [offer, ...]} (each as getOffers returns it) or CSV with the header '
                f"`{CSV_HEADER}` (empty cells for optional fields; dates as YYYY-MM-DD; bare_metal true/false; "
                "tier community, secure or empty)."
            ),
            content={
                "application/json": OpenAPIMediaType(
                    schema=Schema(
                        type=OpenAPIType.OBJECT,
                        required=["offers"],
                        # Strict like every other body: another top-level field is refused, not ignored.
                        additional_properties=False,
                        properties={
                            "offers": Schema(
                                type=OpenAPIType.ARRAY,
                                # A row names its offer itself (a PUT takes the id from the path).
                                items=Schema(
                                    all_of=[
                                        Reference(ref="#/components/schemas/OfferWrite"),
                                        Schema(
                                            required=["id"],
                                            properties={
                                                "id": Schema(type=OpenAPIType.STRING, pattern=ID_PATTERN, max_length=64)
                                            },
                                        ),
                                    ]
                                ),
                                min_items=1,
                                max_items=MAX_ROWS,
                            )
                        },
                    ),
                    examples={"one offer": Example(value={"offers": [examples.OFFER]})},
                ),
                MEDIA_CSV: OpenAPIMediaType(
                    schema=Schema(
                        type=OpenAPIType.STRING, description=f"Header: {CSV_HEADER}", pattern=STORABLE_PATTERN
                    ),
                    examples={"one offer": Example(value=examples.OFFER_CSV)},
                ),
            },
        )


@post(
    "/v1/admin/offers:bulk",
    operation_id="importOffers",
    summary="Import offers, all or nothing (admin)",
    description=(
        "Create or update many offers at once from JSON or CSV (Content-Type application/json or text/csv). "
        "All-or-nothing: one bad row rejects the file with every bad row named (line, field, reason) and nothing "
        "changes. Offers not in the file are left as they are. At most 10,000 rows and GPU_ADVISOR_MAX_IMPORT_BYTES "
        "(4 MiB by default; 413 beyond). Needs X-API-Key."
    ),
    tags=["administration"],
    guards=[require_api_key],
    security=SECURITY,
    operation_class=_BulkOperation,
    status_code=200,
    opt={ACCEPTS_OPT: (JSON, MEDIA_CSV)},
    responses={
        200: ResponseSpec(
            OfferBulkRead,
            generate_examples=False,
            description="What changed.",
            examples=[
                Example(
                    value={
                        "created": [],
                        "updated": ["digitalocean-h100-sxm-on-demand"],
                        "unchanged": [],
                        "catalog_version": "3f2a9c0d1b7e4a55",
                    }
                )
            ],
        )
    }
    | problem_responses(400, 401, 413, 415, 503),
)
async def import_offers(request: AnyRequest, services: NamedDependency[Services]) -> OfferBulkRead:
    body = await request.body()
    media = media_type(request)
    catalog = services.view.catalog
    try:
        # 10,000 rows take the better part of a second to parse and check: not on the event loop, which would
        # stall every other request of this instance meanwhile.
        offers = await asyncio.to_thread(_parsed, body, media, catalog)
    except RowErrors as error:
        raise _rejected(error.errors) from None
    report = await _write(services, offers, [], request.state.actor)
    return OfferBulkRead(
        created=report.created,
        updated=report.updated,
        unchanged=report.unchanged,
        catalog_version=report.version or services.view.version,
    )


def _parsed(body: bytes, media: str, catalog: Catalog) -> list[Offer]:
    """The offers of an import body (CSV or JSON), or RowErrors naming every bad row."""
    if media == MEDIA_CSV:
        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise RowErrors([FieldError(field="body", message="CSV must be UTF-8", line=1)]) from None
        return parse_rows(csv_rows(text), catalog, lax=True)
    try:
        document = msgspec.json.decode(body)
    except msgspec.DecodeError as error:
        raise RowErrors([FieldError(field="body", message=f"not JSON: {error}", line=1)]) from None
    return parse_rows(json_rows(document), catalog, lax=False)


@get(
    "/v1/offers/{offer_id:str}/history",
    operation_id="getOfferHistory",
    summary="Price history of an offer",
    description=(
        "Every change of one offer, newest first: created, updated (with the previous price) or deleted, who "
        "changed it (seed, import, or which API key by position), the price, its date and source. Kept after the "
        "offer is deleted. Unknown id: 404."
    ),
    tags=["catalog"],
    responses={
        200: ResponseSpec(
            OfferHistoryList,
            generate_examples=False,
            description="The changes, newest first.",
            examples=[Example(value=examples.OFFER_HISTORY)],
        )
    }
    | problem_responses(400, 404, 503),
)
async def get_offer_history(
    services: NamedDependency[Services],
    offer_id: OFFER_ID,
    limit: Annotated[int, Parameter(ge=1, le=1000, description="Most changes to return.")] = 100,
) -> OfferHistoryList:
    try:
        async with services.sessions() as session:
            rows, total = await offer_history(session, offer_id, limit)
            exists = bool(total) or await offer_exists(session, offer_id)
    except DATABASE_ERRORS as error:
        log.warning("could not read history of %s: %s", offer_id, error)
        raise ProblemError(503, "Price history is unavailable right now.", headers={"Retry-After": "5"}) from None
    if not exists:
        catalog = services.view.catalog
        raise not_found("offer", offer_id, [o.id for o in catalog.offers if offer_id in o.id][:3])
    items = [
        OfferHistoryRead(
            offer_id=row.offer_id,
            change=row.change,  # type: ignore[arg-type]
            actor=row.actor,
            usd_per_gpu_hour=row.usd_per_gpu_hour,
            previous_usd_per_gpu_hour=row.previous_usd_per_gpu_hour,
            pricing=row.pricing,
            tier=row.tier,  # type: ignore[arg-type]
            as_of=row.as_of,
            source=row.source,
            superseded_by=row.superseded_by,
            recorded_at=row.recorded_at,
        )
        for row in rows
    ]
    return OfferHistoryList(items=items, total=total)


WRITES = [put_offer, delete_offer, get_offer_history]
IMPORTS = [import_offers]
