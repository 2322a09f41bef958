"""The shipped manifests' trust boundary for client addresses: X-Forwarded-For is believed only from the ingress
controller's addresses, so a client (or a pod of the namespace) cannot buy a rate-limit bucket of its own by
writing the header, and the instance a pod runs keys its rate limit on what the manifests say."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import httpx
import pytest

from api.http.client_address import trusted_networks
from api.settings import Settings
from bench.servers import HOST, free_port, server_env, start_server, stop_server, wait_until_ready
from tests.deploy.test_kubernetes_manifests import OVERLAYS, config_data, rendered

# uvicorn's and ours: what decides whose X-Forwarded-For entries are believed.
TRUST_VARIABLES = ("FORWARDED_ALLOW_IPS", "GPU_ADVISOR_TRUSTED_PROXIES")
BURST = 3
# Migrating and seeding a fresh file takes far longer on a busy machine than bench's default wait allows.
STARTUP_TRIES = 600


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_manifests_trust_the_ingress_and_not_everyone(overlay: str) -> None:
    config = config_data(rendered(overlay))
    assert "FORWARDED_ALLOW_IPS" not in config, "uvicorn's setting would be a second trust rule"
    settings = Settings.from_env(config)
    networks = trusted_networks(settings.trusted_proxies)
    assert networks, "without the ingress's addresses every client shares the ingress pods' rate-limit buckets"
    widest = 16 if overlay == "dev" else 20  # dev trusts kind's pod network; production names the ingress pods
    for network in networks:
        assert network.prefixlen >= (widest if network.version == 4 else widest + 96), network
        assert not network.overlaps(ipaddress.ip_network("127.0.0.0/8"))
    assert "GPU_ADVISOR_MAX_CONNECTIONS" in config and settings.max_connections > 0


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_forged_forwarded_for_entries_share_one_bucket(overlay: str, tmp_path: Path) -> None:
    """A client not among the trusted proxies (loopback here, a pod of the namespace there) writes a new leftmost
    X-Forwarded-For entry on every request: each must still count against its own address."""
    config = config_data(rendered(overlay))
    trust = {name: config[name] for name in TRUST_VARIABLES if name in config}
    port = free_port()
    env = server_env(
        f"sqlite+aiosqlite:///{tmp_path / 'trust.db'}",
        None,
        {"GPU_ADVISOR_RATE_LIMIT_PER_MINUTE": "1", "GPU_ADVISOR_RATE_LIMIT_BURST": str(BURST), **trust},
    )
    log = tmp_path / "server.log"
    process = start_server(port, env, log, migrate=True)
    try:
        with httpx.Client(base_url=f"http://{HOST}:{port}") as client:
            wait_until_ready(client, process, log, tries=STARTUP_TRIES)
            statuses = [
                client.get("/v1/providers", headers={"X-Forwarded-For": f"198.51.100.{n}, 203.0.113.{n}"}).status_code
                for n in range(1, 2 * BURST + 1)
            ]
    finally:
        stop_server(process)
    assert statuses[:BURST] == [200] * BURST
    assert set(statuses[BURST:]) == {429}, statuses
