"""A stopping instance drains for GPU_ADVISOR_SHUTDOWN_DRAIN_S at most: a stalled client cannot hold it open."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import httpx

from bench.live_server import HOST, free_port, server_env, start_server, stop_server, wait_until_ready

DRAIN_S = 1
# Far above the drain, far below what a stalled request holds a server today (it never ends by itself).
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
