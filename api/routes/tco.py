"""Total cost of ownership: buying a GPU configuration against renting it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Request, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Body

from api.http.language import resolve_lang
from api.http.problems import problem_responses
from api.http.request_body import BODY_OPT, strict_body
from api.http.request_context import scope_header
from api.openapi import example_responses, examples
from api.wiring import Services
from domain.pricing.tco import tco
from domain.pricing.tco_schema import TcoRead, TcoRequest


@post(
    "/v1/tco",
    operation_id="createTco",
    opt={BODY_OPT: TcoRequest},
    summary="Compare buying GPUs with renting them (total cost of ownership)",
    description=(
        "Answer 'should we buy or rent these GPUs?'. Give `gpu` (a GPU id or alias, e.g. h100-sxm) or `system` (a "
        "server id, e.g. dgx-h100), not both, and optionally `gpu_count`, `years` (1-6), `utilization` (0-1, the "
        "share of hours the GPUs work), `electricity_usd_per_kwh`, `pue`, `operations_usd_per_year`, "
        "`purchase_usd` (all gpu_count GPUs with their servers), `resale_fraction`, `cost_of_capital`, `pricing` and "
        "`providers`. Omitted figures get defaults: 8 GPUs (or the system's count), 3 years, 0.6 utilization, "
        "0.10 USD/kWh, PUE 1.4, operations 10% of the purchase a year, the catalog's server price, resale 0.2, cost "
        "of capital 0.08, pricing on_demand, reserved_1y, reserved_3y and spot; `assumptions` states every figure "
        "used and its source. Buying is broken down per year into capex, financing, power, facility (PUE overhead), "
        "operations and resale (negative: money back); renting lists the cheapest offer of each pricing model "
        "(cheapest first), where on demand, spot and capacity blocks bill only the hours used and reservations bill "
        "every hour. `per_gpu_hour` is the cost per GPU-hour actually used. `cheaper` is buy or rent against the "
        "cheapest rent option, `rent_vs_buy_pct` how much more (positive) or less the cheapest rent costs, "
        "`break_even_utilization` the utilization above which buying beats pay-per-use rent (on demand, else spot; "
        "null if never), `break_even_month` the month from which owning has cost less in cash at this utilization. "
        "Money is in `currency` (CNY at the stated `exchange_rate`), except `usd_per_gpu_hour` (the offer's USD "
        "price). `summary` is two or three sentences in `lang` (or Accept-Language). A GPU without a catalog purchase "
        "price (e.g. l40s) needs `purchase_usd`: 400 otherwise."
    ),
    tags=["pricing"],
    status_code=200,
    responses={
        200: ResponseSpec(
            TcoRead,
            generate_examples=False,
            description="Buying against renting, year by year, with the cheaper choice and every assumption.",
            examples=[Example(summary=s, value=v) for s, v in example_responses.TCOS.items()],
        ),
    }
    | problem_responses(400, 413),
)
async def create_tco(
    request: Request[Any, Any, Any],
    services: NamedDependency[Services],
    data: Annotated[
        TcoRequest,
        Body(
            description="The GPU or server, the period, utilization and cost figures (each optional).",
            examples=[Example(summary=s, value=v) for s, v in examples.TCO_REQUESTS.items()],
        ),
    ],
) -> TcoRead:
    data = await strict_body(request, TcoRequest)
    lang = resolve_lang(data.lang, scope_header(request.scope, b"accept-language"))
    return tco(services.view.catalog, data, today=datetime.now(UTC).date(), lang=lang, rate=services.exchange_rate)


ROUTES = [create_tco]
