"""The trust boundary for client addresses (api/http/client_address.py) and its setting."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from api.http.client_address import ClientAddress, TrustedProxies, trusted_networks
from api.http.request_context import RequestContext
from api.server import server_config
from api.settings import Settings, SettingsError

INGRESS = TrustedProxies(trusted_networks(["10.100.0.0/24", "fd00:1::/64"]))


@pytest.mark.parametrize(
    ("peer", "forwarded_for", "client"),
    [
        # The ingress appended the address it saw; the client wrote the rest, which is not believed.
        ("10.100.0.7", ["1.1.1.1, 203.0.113.9"], "203.0.113.9"),
        ("10.100.0.7", ["1.1.1.1", "203.0.113.9"], "203.0.113.9"),
        # A chain of trusted proxies is walked from the right.
        ("10.100.0.7", ["1.1.1.1, 203.0.113.9, 10.100.0.8"], "203.0.113.9"),
        ("10.100.0.7", ["10.100.0.9, 10.100.0.8"], "10.100.0.9"),
        # A peer that is not a trusted proxy is the client, whatever it writes.
        ("10.1.2.3", ["203.0.113.9"], "10.1.2.3"),
        ("127.0.0.1", ["203.0.113.9"], "127.0.0.1"),
        # Ports and IPv6.
        ("fd00:1::5", ["[2001:db8::1]:4711"], "2001:db8::1"),
        ("10.100.0.7", ["203.0.113.9:4711"], "203.0.113.9"),
        # Garbage where the trusted chain ends is not an address to key anything on.
        ("10.100.0.7", ["203.0.113.9, not-an-address"], "10.100.0.7"),
        ("10.100.0.7", [""], "10.100.0.7"),
    ],
)
def test_the_client_is_the_rightmost_untrusted_entry(peer: str, forwarded_for: list[str], client: str) -> None:
    assert INGRESS.client(peer, forwarded_for) == client


@pytest.mark.parametrize("value", ["*", "0.0.0.0/0", "::/0", "10.0.0.0/8,*", "ingress", "10.0.0.300"])
def test_trusting_everyone_or_nonsense_is_refused_at_start(value: str) -> None:
    with pytest.raises(SettingsError, match="GPU_ADVISOR_TRUSTED_PROXIES"):
        Settings.from_env({"GPU_ADVISOR_TRUSTED_PROXIES": value})


def test_uvicorns_setting_is_refused_rather_than_silently_ignored() -> None:
    with pytest.raises(SettingsError, match="GPU_ADVISOR_TRUSTED_PROXIES"):
        Settings.from_env({"FORWARDED_ALLOW_IPS": "*"})


def test_the_settings() -> None:
    assert Settings.from_env({}).trusted_proxies == ()
    settings = Settings.from_env(
        {"GPU_ADVISOR_TRUSTED_PROXIES": "10.100.0.0/24, 192.0.2.1", "GPU_ADVISOR_MAX_CONNECTIONS": "50"}
    )
    assert settings.trusted_proxies == ("10.100.0.0/24", "192.0.2.1")
    assert settings.max_connections == 50
    for name in ("GPU_ADVISOR_MAX_CONNECTIONS", "GPU_ADVISOR_BODY_MIN_RATE"):
        with pytest.raises(SettingsError, match=name):
            Settings.from_env({name: "0"})


async def test_the_access_log_and_the_app_see_the_derived_address(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["client"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def send(_: Any) -> None:
        return None

    layered = ClientAddress(RequestContext(app, cors=False), INGRESS)
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/v1/gpus",
        "client": ("10.100.0.7", 5555),
        "headers": [(b"x-forwarded-for", b"6.6.6.6, 203.0.113.9"), (b"x-forwarded-proto", b"https")],
        "scheme": "http",
    }
    with caplog.at_level(logging.INFO, logger="gpu_advisor.access"):
        await layered(scope, None, send)
    assert seen == [("203.0.113.9", 0)]
    assert scope["scheme"] == "https"
    assert [record.client for record in caplog.records] == ["203.0.113.9"]  # type: ignore[attr-defined]


def test_the_served_configuration_has_one_boundary_and_the_cap() -> None:
    config = server_config("api.app:create_app_from_env", Settings(max_connections=7), host="127.0.0.1", port=8000)
    assert config.proxy_headers is False  # uvicorn's FORWARDED_ALLOW_IPS rule would be a second boundary
    assert config.max_connections == 7
