"""Service configuration, read from the environment by the caller and passed into create_app(settings)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from datetime import date

import msgspec

from api.http.client_address import TrustError, trusted_networks
from domain.workloads.results import ExchangeRate

# `auto`: readable text when the log goes to a terminal, JSON lines otherwise.
LOG_FORMATS = ("auto", "json", "text")

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./gpu-advisor.db"
DEFAULT_SPOOL_DIR = "./gpu-advisor-spool"


class SettingsError(ValueError):
    """An environment variable holds a value the service cannot use."""


def _positive(value: float, name: str) -> float:
    if value <= 0:
        raise SettingsError(f"{name} must be positive")
    return value


def _date(raw: str | None, default: date) -> date:
    if raw is None:
        return default
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise SettingsError(f"GPU_ADVISOR_USD_CNY_AS_OF={raw!r} is not a date (YYYY-MM-DD)") from None


def _choice(name: str, raw: str, allowed: tuple[str, ...]) -> str:
    value = raw.lower()
    if value not in allowed:
        raise SettingsError(f"{name}={raw!r} must be one of {', '.join(allowed)}")
    return value


def _frame_ancestors(values: tuple[str, ...]) -> tuple[str, ...]:
    # Each value becomes a source expression of a Content-Security-Policy header: nothing that ends the directive.
    for value in values:
        if any(char in value for char in ';,"') or any(char.isspace() for char in value):
            raise SettingsError(f"GPU_ADVISOR_FRAME_ANCESTORS: {value!r} is not an origin or CSP source expression")
    return values


def _log_level(raw: str) -> str:
    return _choice("GPU_ADVISOR_LOG_LEVEL", raw, ("debug", "info", "warning", "error", "critical")).upper()


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the service needs to know about its surroundings."""

    database_url: str = DEFAULT_DATABASE_URL
    redis_url: str | None = None
    api_keys: tuple[str, ...] = ()
    cors_origins: tuple[str, ...] = ()
    # Origins that may show the /ui page in a frame (CSP frame-ancestors source expressions).
    frame_ancestors: tuple[str, ...] = ("'self'",)
    # Redis is a cache: a slow Redis must cost a request at most this long before we answer without it.
    redis_timeout_s: float = 0.2
    # After a Redis failure, skip it for this long instead of paying the timeout on every request.
    redis_retry_after_s: float = 5.0
    cache_ttl_s: int = 3600
    local_cache_entries: int = 2048
    catalog_max_age_s: int = 300
    # How often each instance compares its catalog version with the database's (the fallback to Redis pub/sub).
    catalog_poll_s: float = 1.0
    # While changes keep coming (this instance's own writes and other instances'), each instance serves one new
    # snapshot per interval, on the wall clock's ticks, whatever the write rate; a lone change is served at once.
    # Each new snapshot costs the cluster the answers cached on the one before (README, "Writes under load").
    catalog_reload_interval_s: float = 1.0
    # Recommendations computed while the database is down wait in memory (at most this many) and are retried.
    pending_retry_s: float = 1.0
    pending_capacity: int = 10_000
    # Where what still waits at shutdown is written, and taken up by the next start (None: nowhere, logged).
    pending_spool_dir: str | None = None
    auto_migrate: bool = True
    # After SIGTERM, requests in flight get this long to finish; then their connections are closed and the process
    # exits, so a stalled client cannot hold a stopping instance (the Kubernetes grace period is set to cover it).
    shutdown_drain_s: int = 20
    log_level: str = "INFO"
    log_format: str = "auto"
    # Workload bodies are a few hundred bytes; the bulk price import alone takes whole files.
    max_body_bytes: int = 65_536
    max_import_bytes: int = 4_194_304
    # The request line and headers (api/server.py), and how long a client may take to send them, then the body.
    max_header_bytes: int = 32_768
    head_timeout_s: float = 10.0
    # A whole request body gets body_timeout_s plus one second per body_min_rate bytes already received: a body
    # trickled slower than that rate is cut off (408), however often its bytes arrive (api/http/read_deadline.py).
    body_timeout_s: float = 30.0
    body_min_rate: int = 8192
    # Connections one instance holds at once; beyond it requests are answered 503 and closed (probes still pass),
    # so a flood of held connections cannot exhaust the process's file descriptors (api/server.py).
    max_connections: int = 1000
    # The proxies (addresses or CIDR networks: the ingress controller) whose X-Forwarded-For entries are believed;
    # the client is the rightmost entry none of them wrote (api/http/client_address.py). Empty: the peer address.
    trusted_proxies: tuple[str, ...] = ()
    # Per client (API key, else address), shared through Redis; 0 turns limiting off.
    rate_limit_per_minute: int = 600
    rate_limit_burst: int = 120
    # CNY figures are USD figures times this rate; every converted answer states the rate and its date.
    usd_cny: float = 7.10
    usd_cny_as_of: date = date(2026, 11, 29)
    usd_cny_source: str = "gpu-advisor default rate; set GPU_ADVISOR_USD_CNY and GPU_ADVISOR_USD_CNY_AS_OF"
    # Options priced with an older offer are flagged in `cost` and ranked after fresh ones.
    price_max_age_days: int = 120

    def exchange_rate(self) -> ExchangeRate:
        """The USD to CNY rate as answers state it."""
        return ExchangeRate(usd_to_cny=self.usd_cny, as_of=self.usd_cny_as_of, source=self.usd_cny_source)

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read settings from environment variables (see the README's configuration table)."""
        env = os.environ if environ is None else environ

        def text(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        def listing(name: str) -> tuple[str, ...]:
            return tuple(part.strip() for part in (text(name) or "").split(",") if part.strip())

        def number(name: str, default: float, kind: type = float) -> float:
            raw = text(name)
            if raw is None:
                return default
            try:
                value = kind(raw)
            except ValueError:
                raise SettingsError(f"{name}={raw!r} is not a {kind.__name__}") from None
            if not math.isfinite(value):
                raise SettingsError(f"{name}={raw!r} must be a finite number")
            if value < 0:
                raise SettingsError(f"{name}={raw!r} must not be negative")
            return value

        def flag(name: str, default: bool) -> bool:
            raw = (text(name) or "").lower()
            if not raw:
                return default
            if raw in ("1", "true", "yes", "on"):
                return True
            if raw in ("0", "false", "no", "off"):
                return False
            raise SettingsError(f"{name}={raw!r} is not a boolean (use 1/0, true/false)")

        database_url = text("DATABASE_URL") or DEFAULT_DATABASE_URL
        if not database_url.startswith(("sqlite+aiosqlite://", "postgresql+asyncpg://")):
            raise SettingsError(
                "DATABASE_URL must start with sqlite+aiosqlite:// or postgresql+asyncpg:// "
                f"(got {database_url.split('://')[0]!r})"
            )
        if text("FORWARDED_ALLOW_IPS"):
            # uvicorn's setting is not read (its proxy headers are off): a deployment that still sets it would key
            # every client on the proxy's address without noticing.
            raise SettingsError(
                "FORWARDED_ALLOW_IPS is not read; name the proxies in GPU_ADVISOR_TRUSTED_PROXIES instead"
            )
        try:
            trusted_networks(listing("GPU_ADVISOR_TRUSTED_PROXIES"))
        except TrustError as error:
            raise SettingsError(f"GPU_ADVISOR_TRUSTED_PROXIES: {error}") from None
        redis_url = text("REDIS_URL")
        if redis_url and not redis_url.startswith(("redis://", "rediss://", "unix://")):
            raise SettingsError("REDIS_URL must start with redis://, rediss:// or unix://")
        defaults = cls()
        return cls(
            database_url=database_url,
            redis_url=redis_url,
            api_keys=listing("GPU_ADVISOR_API_KEYS"),
            cors_origins=listing("GPU_ADVISOR_CORS_ORIGINS"),
            frame_ancestors=_frame_ancestors(listing("GPU_ADVISOR_FRAME_ANCESTORS")) or defaults.frame_ancestors,
            redis_timeout_s=number("GPU_ADVISOR_REDIS_TIMEOUT_S", defaults.redis_timeout_s),
            redis_retry_after_s=number("GPU_ADVISOR_REDIS_RETRY_AFTER_S", defaults.redis_retry_after_s),
            cache_ttl_s=int(number("GPU_ADVISOR_CACHE_TTL_S", defaults.cache_ttl_s, int)),
            local_cache_entries=int(number("GPU_ADVISOR_LOCAL_CACHE_ENTRIES", defaults.local_cache_entries, int)),
            catalog_max_age_s=int(number("GPU_ADVISOR_CATALOG_MAX_AGE_S", defaults.catalog_max_age_s, int)),
            catalog_poll_s=_positive(
                number("GPU_ADVISOR_CATALOG_POLL_S", defaults.catalog_poll_s), "GPU_ADVISOR_CATALOG_POLL_S"
            ),
            catalog_reload_interval_s=number(
                "GPU_ADVISOR_CATALOG_RELOAD_INTERVAL_S", defaults.catalog_reload_interval_s
            ),
            pending_retry_s=_positive(
                number("GPU_ADVISOR_PENDING_RETRY_S", defaults.pending_retry_s), "GPU_ADVISOR_PENDING_RETRY_S"
            ),
            pending_capacity=int(number("GPU_ADVISOR_PENDING_CAPACITY", defaults.pending_capacity, int)),
            pending_spool_dir=text("GPU_ADVISOR_PENDING_SPOOL_DIR") or DEFAULT_SPOOL_DIR,
            auto_migrate=flag("GPU_ADVISOR_AUTO_MIGRATE", True),
            shutdown_drain_s=int(number("GPU_ADVISOR_SHUTDOWN_DRAIN_S", defaults.shutdown_drain_s, int)),
            log_level=_log_level(text("GPU_ADVISOR_LOG_LEVEL") or "INFO"),
            log_format=_choice("GPU_ADVISOR_LOG_FORMAT", text("GPU_ADVISOR_LOG_FORMAT") or "auto", LOG_FORMATS),
            max_body_bytes=int(
                _positive(
                    number("GPU_ADVISOR_MAX_BODY_BYTES", defaults.max_body_bytes, int), "GPU_ADVISOR_MAX_BODY_BYTES"
                )
            ),
            max_import_bytes=int(
                _positive(
                    number("GPU_ADVISOR_MAX_IMPORT_BYTES", defaults.max_import_bytes, int),
                    "GPU_ADVISOR_MAX_IMPORT_BYTES",
                )
            ),
            max_header_bytes=int(
                _positive(
                    number("GPU_ADVISOR_MAX_HEADER_BYTES", defaults.max_header_bytes, int),
                    "GPU_ADVISOR_MAX_HEADER_BYTES",
                )
            ),
            head_timeout_s=_positive(
                number("GPU_ADVISOR_HEAD_TIMEOUT_S", defaults.head_timeout_s), "GPU_ADVISOR_HEAD_TIMEOUT_S"
            ),
            body_timeout_s=_positive(
                number("GPU_ADVISOR_BODY_TIMEOUT_S", defaults.body_timeout_s), "GPU_ADVISOR_BODY_TIMEOUT_S"
            ),
            body_min_rate=int(
                _positive(number("GPU_ADVISOR_BODY_MIN_RATE", defaults.body_min_rate, int), "GPU_ADVISOR_BODY_MIN_RATE")
            ),
            max_connections=int(
                _positive(
                    number("GPU_ADVISOR_MAX_CONNECTIONS", defaults.max_connections, int), "GPU_ADVISOR_MAX_CONNECTIONS"
                )
            ),
            trusted_proxies=listing("GPU_ADVISOR_TRUSTED_PROXIES"),
            rate_limit_per_minute=int(number("GPU_ADVISOR_RATE_LIMIT_PER_MINUTE", defaults.rate_limit_per_minute, int)),
            rate_limit_burst=int(
                _positive(
                    number("GPU_ADVISOR_RATE_LIMIT_BURST", defaults.rate_limit_burst, int),
                    "GPU_ADVISOR_RATE_LIMIT_BURST",
                )
            ),
            usd_cny=_positive(number("GPU_ADVISOR_USD_CNY", defaults.usd_cny), "GPU_ADVISOR_USD_CNY"),
            usd_cny_as_of=_date(text("GPU_ADVISOR_USD_CNY_AS_OF"), defaults.usd_cny_as_of),
            usd_cny_source="GPU_ADVISOR_USD_CNY setting" if text("GPU_ADVISOR_USD_CNY") else defaults.usd_cny_source,
            price_max_age_days=int(
                _positive(
                    number("GPU_ADVISOR_PRICE_MAX_AGE_DAYS", defaults.price_max_age_days, int),
                    "GPU_ADVISOR_PRICE_MAX_AGE_DAYS",
                )
            ),
        )
