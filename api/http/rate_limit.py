"""Per-client rate limiting (GCRA): shared by every instance through Redis, per instance while Redis is down."""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from api.adapters.redis_link import RedisLink, RedisUnavailable
from api.http.auth import API_KEY_HEADER
from api.http.problems import rate_limited_body, send_problem
from api.metrics import RATE_LIMITED

KEY_PREFIX = "gpu-advisor:ratelimit:"

# GCRA keeps one number per client, the theoretical arrival time (TAT) of its next request; a request is allowed
# when it is no earlier than TAT - burst x interval. Redis's clock is used so every instance agrees.
_GCRA_LUA = """
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval
local wait = new_tat - burst * interval - now
if wait > 0 then
  return {0, tostring(wait)}
end
redis.call('SET', KEYS[1], tostring(new_tat), 'PX', math.ceil((new_tat - now) * 1000))
return {1, tostring(math.floor((now - (new_tat - burst * interval)) / interval))}
"""


@dataclass(frozen=True, slots=True)
class Decision:
    """Whether a request may proceed, how many more may follow at once, or how long to wait."""

    allowed: bool
    remaining: int
    retry_after_s: float


def gcra(tat: float, now: float, interval: float, burst: int) -> tuple[Decision, float]:
    """The decision for a request arriving at `now`, and the client's new TAT."""
    tat = max(tat, now)
    new_tat = tat + interval
    wait = new_tat - burst * interval - now
    if wait > 0:
        return Decision(False, 0, wait), tat
    return Decision(True, math.floor((now - (new_tat - burst * interval)) / interval), 0.0), new_tat


class LocalLimiter:
    """GCRA in this process: the limit while Redis is down, and the only one without Redis."""

    def __init__(self, interval: float, burst: int, max_clients: int = 100_000) -> None:
        self._interval = interval
        self._burst = burst
        self._max_clients = max_clients
        self._tats: OrderedDict[str, float] = OrderedDict()

    def hit(self, client: str) -> Decision:
        now = time.monotonic()
        decision, tat = gcra(self._tats.get(client, now), now, self._interval, self._burst)
        self._tats[client] = tat
        self._tats.move_to_end(client)
        while len(self._tats) > self._max_clients:
            self._tats.popitem(last=False)
        return decision


class RateLimiter:
    """`per_minute` requests per client with bursts of `burst`; Redis-wide when Redis answers."""

    def __init__(self, per_minute: int, burst: int, link: RedisLink | None) -> None:
        self.per_minute = per_minute
        self._interval = 60.0 / per_minute
        self._burst = max(1, burst)
        self._link = link
        self._local = LocalLimiter(self._interval, self._burst)
        self._script: Any = link.client.register_script(_GCRA_LUA) if link else None

    async def hit(self, client: str) -> Decision:
        if self._link is not None:
            try:
                allowed, figure = await self._link.call(
                    "rate limit",
                    lambda _: self._script(keys=[KEY_PREFIX + client], args=[self._interval, self._burst]),
                )
            except RedisUnavailable:
                return self._local.hit(client)
            if int(allowed):
                return Decision(True, int(float(figure)), 0.0)
            return Decision(False, 0, float(figure))
        return self._local.hit(client)


def client_identity(scope: Scope, api_keys: tuple[str, ...]) -> str:
    """A configured API key's own bucket (hashed), else the peer address; unknown keys do not buy a new bucket."""
    for name, value in scope.get("headers", ()):
        if name.decode("latin-1").lower() == API_KEY_HEADER.lower():
            offered = value.decode("latin-1")
            for key in api_keys:
                if hmac.compare_digest(offered.encode(), key.encode()):
                    return "key:" + hashlib.sha256(key.encode()).hexdigest()[:16]
            break
    client = scope.get("client")
    return "ip:" + (client[0] if client else "unknown")


class RateLimitMiddleware(ASGIMiddleware):
    """429 with Retry-After once a client exceeds its rate; probes, metrics and the schema are never limited."""

    scopes = ("http",)  # type: ignore[assignment]
    UNLIMITED = ("/health/", "/metrics", "/schema")

    @staticmethod
    def should_bypass_for_scope(scope: Scope) -> bool:  # type: ignore[override]
        return scope["path"].startswith(RateLimitMiddleware.UNLIMITED)

    def __init__(self, limiter_of: Any, api_keys: tuple[str, ...]) -> None:
        self._limiter_of = limiter_of
        self._api_keys = api_keys

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        limiter: RateLimiter | None = self._limiter_of(scope)
        if limiter is None:
            await next_app(scope, receive, send)
            return
        decision = await limiter.hit(client_identity(scope, self._api_keys))
        limit_headers = [
            (b"ratelimit-limit", str(limiter.per_minute).encode()),
            (b"ratelimit-remaining", str(decision.remaining).encode()),
        ]
        if not decision.allowed:
            RATE_LIMITED.inc()
            retry_after = max(1, math.ceil(decision.retry_after_s))
            body = rate_limited_body(limiter.per_minute, retry_after)
            await send_problem(send, 429, body, [(b"retry-after", str(retry_after).encode()), *limit_headers])
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *limit_headers]
            await send(message)

        await next_app(scope, receive, send_with_headers)
