"""One administrative catalog change: a transaction, a 400 or 503 problem when it cannot commit, then every reload."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from api.problems import ProblemError
from api.services import Services
from api.storage.database import DATABASE_ERRORS
from domain.catalog import CatalogError

log = logging.getLogger(__name__)
R = TypeVar("R")


async def commit_change(
    services: Services,
    work: Callable[[AsyncSession], Awaitable[R]],
    changed: Callable[[R], bool],
    *,
    invalid_status: int = 400,
) -> R:
    """Run `work` in one transaction; when it changed the catalog, every instance reloads.

    A change the resulting catalog rejects answers `invalid_status` (409 where it clashes with what is stored).
    """
    try:
        async with services.sessions() as session, session.begin():
            report = await work(session)
    except CatalogError as error:
        problems = "; ".join(error.problems)
        kind = "/problems/conflict" if invalid_status == 409 else "/problems/validation"
        raise ProblemError(invalid_status, f"Nothing was changed: {problems}", type_=kind) from None
    except DATABASE_ERRORS as error:
        log.warning("catalog write failed: %s", error)
        raise ProblemError(
            503, "The database is unavailable; nothing was changed.", headers={"Retry-After": "5"}
        ) from None
    if changed(report):
        try:
            await services.catalog_changed()
        except Exception as error:  # committed already: the poller of every instance will catch up
            log.warning("reload after a committed catalog change failed: %s", error)
    return report
