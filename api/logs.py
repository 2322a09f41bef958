"""Log output: one JSON object per line (with the request id) for collectors, or plain text for a terminal."""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from typing import Any

import msgspec

from api.http.request_context import request_id_var

_encoder = msgspec.json.Encoder(enc_hook=str)
# Attributes every LogRecord has; anything else on a record was passed in `extra` and belongs in the line.
# uvicorn's `color_message` is its message again with ANSI colour codes: noise in a JSON line.
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName", "color_message"}


class JsonFormatter(logging.Formatter):
    """A JSON line: time, level, logger, message, request_id, the `extra` fields and any exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = request_id_var.get()
        if request_id:
            entry["request_id"] = request_id
        entry.update((key, value) for key, value in record.__dict__.items() if key not in _STANDARD)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return _encoder.encode(entry).decode()


def resolved_format(log_format: str, stream: Any) -> str:
    """`auto` is readable text on a terminal and JSON lines anywhere else (files, pipes, collectors)."""
    if log_format != "auto":
        return log_format
    isatty = getattr(stream, "isatty", None)
    return "text" if isatty is not None and isatty() else "json"


def configure_logging(level: str, log_format: str, stream: Any = None) -> None:
    """Route every logger (ours, uvicorn's, SQLAlchemy's) through one handler (on stderr) in the chosen format."""
    stream = stream if stream is not None else sys.stderr
    handler = logging.StreamHandler(stream)
    if resolved_format(log_format, stream) == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    # Our access line carries the request id; uvicorn's own would repeat it without one.
    logging.getLogger("uvicorn.access").disabled = True
