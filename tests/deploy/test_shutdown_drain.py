"""A stopping instance drains for GPU_ADVISOR_SHUTDOWN_DRAIN_S at most: a stalled client cannot hold it open."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from api.server import server_config
from api.settings import Settings, SettingsError
from bench.servers import HOST, free_port, server_env, start_server, stop_server, wait_until_ready

DRAIN_S = 1
# Far above the drain; without a bound, a stalled request holds the server for as long as its client waits.
EXIT_BOUND_S = 30


def test_sigterm_with_a_request_stalled_mid_body_exits_after_the_drain(tmp_path: Path) -> None:
    port = free_port()
    env = server_env(
        f"sqlite+aiosqlite:///{tmp_path / 'drain.db'}", None, {"GPU_ADVISOR_SHUTDOWN_DRAIN_S": str(DRAIN_S)}
    )
    log = tmp_path / "server.log"
    process = start_server(port, env, log, migrate=True)
    try:
        with httpx.Client(base_url=f"http://{HOST}:{port}") as client:
            wait_until_ready(client, process, log)
        with socket.create_connection((HOST, port)) as stalled:
            # The headers promise a body that never comes: the request stays in flight.
            stalled.sendall(
                b"POST /v1/recommendations HTTP/1.1\r\nHost: gpu-advisor\r\nContent-Type: application/json\r\n"
                b'Content-Length: 1000\r\n\r\n{"workload":'
            )
            process.terminate()
            try:
                code = process.wait(timeout=EXIT_BOUND_S)
            except subprocess.TimeoutExpired:
                code = None
        # uvicorn re-raises the signal once it has shut down, so the exit status is -SIGTERM.
        assert code is not None, f"still running {EXIT_BOUND_S} s after SIGTERM with a {DRAIN_S} s drain"
        assert "timeout graceful shutdown exceeded" in log.read_text()
    finally:
        stop_server(process)


def test_the_drain_setting() -> None:
    assert Settings.from_env({}).shutdown_drain_s == 20
    assert Settings.from_env({"GPU_ADVISOR_SHUTDOWN_DRAIN_S": "0"}).shutdown_drain_s == 0
    for bad in ("-1", "soon", "1.5"):
        with pytest.raises(SettingsError, match="GPU_ADVISOR_SHUTDOWN_DRAIN_S"):
            Settings.from_env({"GPU_ADVISOR_SHUTDOWN_DRAIN_S": bad})


def test_the_served_configuration_carries_the_drain() -> None:
    settings = Settings(shutdown_drain_s=7)
    assert server_config("api.app:create_app_from_env", settings, host=HOST, port=8000).timeout_graceful_shutdown == 7
