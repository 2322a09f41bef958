"""The served process: a startup failure exits non-zero, and SIGTERM stops it, with Redis configured."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from redis import Redis

from tests.conftest import REDIS_URL, free_port, service_unavailable

pytestmark = pytest.mark.integration

# Generous: the process imports and builds the app first, on a machine that may be busy.
EXIT_DEADLINE_S = 120


@pytest.fixture
def redis_url() -> str:
    try:
        Redis.from_url(REDIS_URL, socket_timeout=2).ping()
    except Exception as error:
        service_unavailable("Redis", error)
    return REDIS_URL


def serve(port: int, redis_url: str, folder: Path) -> subprocess.Popen[bytes]:
    env = os.environ | {
        "DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'gpu-advisor.db'}",
        "REDIS_URL": redis_url,
        "GPU_ADVISOR_LOG_FORMAT": "text",
    }
    command = [sys.executable, "-m", "api.cli", "serve", "--port", str(port)]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


def wait_exit(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    try:
        output, _ = process.communicate(timeout=EXIT_DEADLINE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        pytest.fail(f"the process did not exit: {output.decode(errors='replace')[-2000:]}")
    return process.returncode, output.decode(errors="replace")


def test_a_taken_port_exits_non_zero(taken_port: int, redis_url: str, tmp_path: Path) -> None:
    code, output = wait_exit(serve(taken_port, redis_url, tmp_path))
    assert code != 0, output
    assert "address already in use" in output


def test_sigterm_stops_a_running_instance(redis_url: str, tmp_path: Path) -> None:
    port = free_port()
    process = serve(port, redis_url, tmp_path)
    deadline = time.monotonic() + EXIT_DEADLINE_S
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health/live", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the instance did not start: {process.communicate()[0].decode(errors='replace')[-2000:]}")
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    code, output = wait_exit(process)
    # uvicorn re-raises the signal once it has shut down, so the exit status says SIGTERM.
    assert code in (0, -signal.SIGTERM), output
    assert "Application shutdown complete" in output
