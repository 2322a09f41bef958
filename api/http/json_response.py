"""Already-encoded JSON answered as a plain ASGI app: the hottest routes skip Litestar's Response machinery."""

from __future__ import annotations

from litestar.types import Receive, Scope, Send

_JSON = (b"content-type", b"application/json")


class EncodedJSON:
    """A 200 with a JSON body encoded before, and its extra headers (ASCII names and values)."""

    __slots__ = ("_body", "_headers")

    def __init__(self, body: bytes, headers: dict[str, str] | None = None) -> None:
        self._body = body
        # Litestar's Response would build a header container and encode every name per answer; a cached answer
        # is otherwise only a lookup, so that work was a tenth of its cost.
        self._headers = [_JSON, (b"content-length", str(len(body)).encode())]
        if headers:
            self._headers.extend((name.lower().encode(), value.encode()) for name, value in headers.items())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self._headers})
        await send({"type": "http.response.body", "body": self._body, "more_body": False})
