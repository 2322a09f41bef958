"""One administrative catalog change: a transaction, a 400 or 503 problem when it cannot commit, then every reload."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from api.adapters.storage.database import DATABASE_ERRORS, refused_data
from api.schemas.problems import ProblemError
from api.wiring import Services
from domain.catalog import Catalog, CatalogError

log = logging.getLogger(__name__)
R = TypeVar("R")


async def commit_change(
    services: Services,
    work: Callable[[AsyncSession], Awaitable[R]],
    changed: Callable[[R], bool],
    snapshot: Callable[[R], Catalog | None] = lambda _: None,
    *,
    invalid_status: int = 400,
) -> R:
    """Run `work` in one transaction; when it changed the catalog, every instance reloads (this one from the
    committed `snapshot` when the work has it, without reading the catalog back).

    A change the resulting catalog rejects answers `invalid_status` (409 where it clashes with what is stored).
    """

    async def attempt() -> R:
        async with services.sessions() as session, session.begin():
            return await work(session)

    return await apply_change(services, attempt, changed, snapshot, invalid_status=invalid_status)


async def apply_change(
    services: Services,
    attempt: Callable[[], Awaitable[R]],
    changed: Callable[[R], bool],
    snapshot: Callable[[R], Catalog | None] = lambda _: None,
    *,
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
    if changed(report):
        try:
            await services.catalog_changed(snapshot(report))
        except Exception as error:  # committed already: the poller of every instance will catch up
            log.warning("reload after a committed catalog change failed: %s", error)
    return report
