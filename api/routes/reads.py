"""What the catalog reads share: paging, sorting and language parameters and the shape of a 200 answer."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Request
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Parameter

from api.schemas import (
    Lang,
)

AnyRequest = Request[Any, Any, Any]
Limit = Annotated[int, Parameter(ge=1, le=200, description="Page size (1-200).", examples=[Example(value=50)])]
Offset = Annotated[int, Parameter(ge=0, le=100_000, description="Items to skip.", examples=[Example(value=0)])]
Order = Annotated[
    Literal["asc", "desc"] | None,
    Parameter(description="Sort direction; default ascending for names and prices, descending for figures."),
]
LangQuery = Annotated[
    Lang | None, Parameter(description="Answer language; default from Accept-Language, else English.")
]


def ok(model: Any, description: str, example: Any, summary: str) -> dict[int, ResponseSpec]:
    return {
        200: ResponseSpec(
            data_container=model,
            generate_examples=False,
            description=description,
            examples=[Example(summary=summary, value=example)],
        )
    }
