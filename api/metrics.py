"""Prometheus metrics of our own (request metrics come from Litestar's Prometheus middleware)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

CACHE_LOOKUPS = Counter(
    "gpu_advisor_cache_lookups_total", "Response cache lookups by backend and result.", ["backend", "result"]
)
CACHE_ERRORS = Counter("gpu_advisor_cache_errors_total", "Cache operations that failed and were skipped.", ["backend"])
CATALOG_RELOADS = Counter("gpu_advisor_catalog_reloads_total", "Catalog snapshots loaded by this process.")
CATALOG_INFO = Gauge("gpu_advisor_catalog_info", "The catalog version served by this process.", ["version", "source"])
PENDING_RECOMMENDATIONS = Gauge(
    "gpu_advisor_pending_recommendations", "Recommendations computed while the database was down, waiting to be stored."
)
CONNECTIONS_REFUSED = Counter(
    "gpu_advisor_connections_refused_total",
    "Requests answered 503 (and closed) because the instance held GPU_ADVISOR_MAX_CONNECTIONS connections.",
)
RATE_LIMITED = Counter("gpu_advisor_rate_limited_total", "Requests answered 429 by the rate limiter.")
REFUSED_RECOMMENDATIONS = Counter(
    "gpu_advisor_refused_recommendations_total",
    "Recommendations the database refused as data (never retried; the client was told they were not stored).",
)
RECOMMENDATIONS_COMPUTED = Counter(
    "gpu_advisor_recommendation_computations_total",
    "Recommendations missed in the cache, by how they were answered: computed here (`alone`: no Redis; `claimed`: "
    "first for the cluster, or Redis failed; `after_wait`: the claimer's answer did not come), or `taken` from the "
    "instance that claimed them.",
    ["how"],
)
PRICE_FEED_LAST_SYNC = Gauge(
    "gpu_advisor_price_feed_last_sync_timestamp_seconds",
    "When each provider's offers were last synced from its price feed (Unix time).",
    ["provider", "feed"],
)
