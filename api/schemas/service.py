"""Probes and the chatbot tool manifest."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from api.schemas.base import Wire


class LiveRead(Wire):
    """The process is up."""

    status: Literal["ok"]


class ReadyRead(Wire):
    """Whether this instance can serve, and in what state its dependencies are."""

    status: Literal["ok", "degraded", "unavailable"]
    database: Literal["ok", "unavailable"]
    redis: Literal["ok", "degraded", "local"]
    catalog_version: str
    catalog_source: Literal["database", "reference"]
    catalog_loaded_at: datetime
    # Recommendations answered but not yet stored; `stalled` when that queue has stopped shrinking.
    recommendations: Literal["ok", "pending", "stalled"] = "ok"
    pending_recommendations: int = 0


class ToolOperationRead(Wire):
    """The HTTP operation that does what a tool does, for clients that call the API themselves."""

    method: Literal["GET", "POST"]
    path: str
    arguments: Literal["json_body", "query"]


class ToolManifestRead(Wire):
    """The chatbot tools as function definitions for a chat API."""

    format: Literal["openai", "anthropic"]
    tools: list[dict[str, Any]]
    operations: dict[str, ToolOperationRead]
    mcp_path: str
