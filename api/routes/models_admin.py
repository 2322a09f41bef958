"""Model administration (API key): add a language model from its config.json, with a history of every change."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from litestar import Request, Response, get, put
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import Example
from litestar.params import Body, Parameter
from sqlalchemy.ext.asyncio import AsyncSession

from api.adapters.storage.database import DATABASE_ERRORS
from api.adapters.storage.model_repository import ModelWriteReport, model_history, write_model
from api.http.auth import SECURITY, require_api_key
from api.http.problems import invalid, problem_responses
from api.http.request_body import BODY_OPT, strict_body
from api.schemas import LlmModelRead, Wire
from api.schemas.problems import ProblemError
from api.services.catalog_writes import commit_change
from api.wiring import Services
from domain.catalog import MAX_NAME_LENGTH, SLUG_PATTERN, LlmModel, lookup_key
from domain.catalog.hf_config import HfConfigError, llm_from_hf_config

log = logging.getLogger(__name__)

AnyRequest = Request[Any, Any, Any]
MODEL_ID = Annotated[
    str,
    Parameter(
        description="Model id (lowercase letters, digits, dots and hyphens).",
        pattern=SLUG_PATTERN,
        max_length=64,
        examples=[Example(value="my-qwen3-finetune")],
    ),
]
EXAMPLE_CONFIG = {
    "model_type": "qwen3",
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "num_hidden_layers": 36,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "torch_dtype": "bfloat16",
}
EXAMPLE_WRITE = {"hf_config": EXAMPLE_CONFIG, "name": "Our Qwen3 8B fine-tune", "sources": ["our checkpoint"]}


class ModelWrite(Wire, kw_only=True, forbid_unknown_fields=True):
    """A language model to add: its config.json and how to name and cite it."""

    hf_config: Annotated[
        dict[str, Any],
        msgspec.Meta(description="The model's config.json as an object; the architecture is derived from it."),
    ]
    # The models table's name column holds MAX_NAME_LENGTH characters on every store.
    name: Annotated[str, msgspec.Meta(max_length=MAX_NAME_LENGTH, description="Display name; default the id.")] = ""
    # Item lengths are not limited here: the published schema cannot state them, so blank items are dropped instead.
    aliases: Annotated[
        list[str],
        msgspec.Meta(max_length=20, description="Other names it may be asked for by (e.g. its Hugging Face repo)."),
    ] = msgspec.field(default_factory=list)
    sources: Annotated[
        list[str], msgspec.Meta(max_length=10, description="Where the config.json comes from; default 'config.json'.")
    ] = msgspec.field(default_factory=list)
    notes: Annotated[str, msgspec.Meta(max_length=2000, description="Free text shown with the model.")] = ""


class ModelHistoryRead(Wire, kw_only=True):
    """One administrative change of a model."""

    model_id: str
    change: Literal["created", "updated"]
    actor: str
    recorded_at: datetime
    record: dict[str, Any]


class ModelHistoryList(Wire, kw_only=True):
    """A model's changes, newest first."""

    items: list[ModelHistoryRead]
    total: int


def unmatchable_name(body: ModelWrite) -> str | None:
    """The field of the first name or alias with no letters or digits (nothing could ever look it up), or None."""
    named = [("name", body.name), *((f"aliases[{index}]", alias) for index, alias in enumerate(body.aliases))]
    return next((field for field, name in named if name.strip() and not lookup_key(name)), None)


def derive_model(model_id: str, body: ModelWrite) -> LlmModel:
    """The catalog model the body describes; HfConfigError names the key at fault."""
    derived = llm_from_hf_config(body.hf_config, model_id=model_id, name=(body.name or "").strip() or model_id)
    return msgspec.structs.replace(
        derived,
        aliases=tuple(a.strip()[:120] for a in body.aliases if a.strip()),
        sources=tuple(s.strip()[:300] for s in body.sources if s.strip()) or derived.sources,
        notes=body.notes or derived.notes,
    )


@put(
    "/v1/admin/models/{model_id:str}",
    operation_id="putModel",
    opt={BODY_OPT: ModelWrite},
    summary="Add or replace a language model from its config.json (admin)",
    description=(
        "Create or replace one language model from its config.json (`hf_config`, the families custom_model.hf_config "
        "takes). The architecture and parameter count are derived from it; a missing field or unsupported "
        "model_type is a 400 naming it; a name or alias another model has is a 409. The model, its history row "
        "and the catalog version are written in one transaction and every instance reloads. Needs X-API-Key. "
        "201 when new, 200 when it replaced one."
    ),
    tags=["administration"],
    guards=[require_api_key],
    security=SECURITY,
    status_code=200,
    responses={
        200: ResponseSpec(LlmModelRead, generate_examples=False, description="The model as stored."),
        201: ResponseSpec(LlmModelRead, generate_examples=False, description="The model was created."),
    }
    | problem_responses(400, 401, 409, 503),
)
async def put_model(
    request: AnyRequest,
    services: NamedDependency[Services],
    model_id: MODEL_ID,
    data: Annotated[ModelWrite, Body(description="The model.", examples=[Example(value=EXAMPLE_WRITE)])],
) -> Response[LlmModelRead]:
    data = await strict_body(request, ModelWrite)
    if (field := unmatchable_name(data)) is not None:
        raise invalid(field, "has no letters or digits")
    try:
        model = derive_model(model_id, data)
    except HfConfigError as error:
        raise invalid(f"hf_config.{error.field}", error.message) from None

    async def work(session: AsyncSession) -> ModelWriteReport:
        return await write_model(session, model, actor=request.state.actor)

    # Everything in the body was checked; what the catalog can still reject is a clash with another model.
    report = await commit_change(services, work, invalid_status=409)
    read = msgspec.convert(msgspec.to_builtins(model), LlmModelRead, strict=False)
    return Response(read, status_code=201 if report.created else 200)


@get(
    "/v1/model-history/{model_id:str}",
    operation_id="getModelHistory",
    summary="Change history of a model",
    description=(
        "Every administrative change of one model, newest first: created or updated, by whom (which API key by "
        "position, or an import), when, and the record as written. No changes recorded: 404."
    ),
    tags=["catalog"],
    responses={200: ResponseSpec(ModelHistoryList, generate_examples=False, description="The changes, newest first.")}
    | problem_responses(400, 401, 404, 503),
)
async def get_model_history(
    services: NamedDependency[Services],
    model_id: MODEL_ID,
    limit: Annotated[int, Parameter(ge=1, le=1000, description="Most changes to return.")] = 100,
) -> ModelHistoryList:
    try:
        async with services.sessions() as session:
            rows, total = await model_history(session, model_id, limit)
    except DATABASE_ERRORS as error:
        log.warning("could not read history of model %s: %s", model_id, error)
        raise ProblemError(503, "Model history is unavailable right now.", headers={"Retry-After": "5"}) from None
    if not total:
        raise ProblemError(404, f"No recorded changes of model {model_id!r}.", type_="/problems/not-found")
    items = [
        ModelHistoryRead(
            model_id=row.model_id,
            change=row.change,  # type: ignore[arg-type]
            actor=row.actor,
            recorded_at=row.recorded_at,
            record=row.record,
        )
        for row in rows
    ]
    return ModelHistoryList(items=items, total=total)


HANDLERS = [put_model, get_model_history]
