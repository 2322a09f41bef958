"""One administrative catalog change: a transaction, a 400 or 503 problem when it cannot commit, then every reload."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from api.adapters.storage.database import DATABASE_ERRORS, refused_data
from api.schemas.problems import ProblemError
from api.wiring import Services
from domain.catalog import Catalog, CatalogError

log = logging.getLogger(__name__)


class Committed(Protocol):
    """What a committed change reports: whether it changed the catalog, and the version it left."""

    @property
    def changed(self) -> bool: ...

    @property
    def version(self) -> str: ...


R = TypeVar("R", bound=Committed)
# A committed change applied to the snapshot served now: how this instance serves it without reading it back.
Serve = Callable[[R, Catalog], Catalog]


async def commit_change(
    services: Services,
    work: Callable[[AsyncSession], Awaitable[R]],
    *,
    serve: Serve[R] | None = None,
    invalid_status: int = 400,
) -> R:
    """Run `work` in one transaction; when it changed the catalog, every instance reloads (this one by `serve`,
    without reading the catalog back, when given).

    A change the resulting catalog rejects answers `invalid_status` (409 where it clashes with what is stored).
    """

    async def attempt() -> R:
        async with services.sessions() as session, session.begin():
            return await work(session)

    return await apply_change(services, attempt, serve=serve, invalid_status=invalid_status)


async def apply_change(
    services: Services,
    attempt: Callable[[], Awaitable[R]],
    *,
    serve: Serve[R] | None = None,
    invalid_status: int = 400,
) -> R:
    """`attempt` a committed change (its own transaction), answer its failure as a problem, then reload everywhere."""
    try:
        report = await attempt()
    except CatalogError as error:
        problems = "; ".join(error.problems)
        kind = "/problems/conflict" if invalid_status == 409 else "/problems/validation"
        raise ProblemError(invalid_status, f"Nothing was changed: {problems}", type_=kind) from None
    except DATABASE_ERRORS as error:
        log.warning("catalog write failed: %s", error)
        if refused_data(error):
            # The client's data, not an outage: a Retry-After would only make it send the same again.
            raise ProblemError(
                400, "The database refused these values; nothing was changed.", type_="/problems/validation"
            ) from None
        raise ProblemError(
            503, "The database is unavailable; nothing was changed.", headers={"Retry-After": "5"}
        ) from None
    if report.changed:
        try:
            await services.catalog_changed(report.version, partial(serve, report) if serve is not None else None)
        except Exception as error:  # committed already: the poller of every instance will catch up
            log.warning("reload after a committed catalog change failed: %s", error)
    return report
