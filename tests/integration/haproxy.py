"""A real HAProxy (Debian's) in front of test servers: health checks on /health/ready, retries, a runtime socket."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from tests.conftest import free_port, service_unavailable

HOST = "127.0.0.1"
BACKEND = "app"

CONFIG = """\
global
    maxconn 512
    stats socket {socket} mode 600 level admin

defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    # A readiness check waits as long as Kubernetes' readinessProbe does: a busy instance is slow, not down.
    timeout check 3s
    # A request that failed on one server (refused, reset, no answer, 5xx) is sent again, to another server.
    retries 3
    option redispatch 1
    retry-on all-retryable-errors
    option http-buffer-request

frontend gpu_advisor
    bind {host}:{port}
    default_backend {backend}

backend {backend}
    balance roundrobin
    option httpchk GET /health/ready
    http-check expect status 200
    # Which server answered, so a test can tell that an instance it added back takes traffic again.
    http-response set-header X-Served-By %s
    default-server check inter 250ms fastinter 250ms downinter 250ms fall 2 rise 1
{servers}
"""


class Balancer:
    """HAProxy on a free loopback port, balancing over named servers on loopback ports."""

    def __init__(self, workdir: Path, servers: Sequence[tuple[str, int]]) -> None:
        binary = shutil.which("haproxy")
        if binary is None:
            service_unavailable("haproxy", "not installed (Debian: apt-get install haproxy)")
        assert binary is not None
        self.binary = binary
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.socket = workdir / "haproxy.sock"
        self.config = workdir / "haproxy.cfg"
        self.log = workdir / "haproxy.log"
        lines = "\n".join(f"    server {name} {HOST}:{port}" for name, port in servers)
        self.config.write_text(
            CONFIG.format(socket=self.socket, host=HOST, port=self.port, backend=BACKEND, servers=lines)
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 10.0) -> None:
        check = subprocess.run([self.binary, "-c", "-f", str(self.config)], capture_output=True, text=True, check=False)
        assert check.returncode == 0, check.stdout + check.stderr
        with self.log.open("wb") as log:
            # -db: foreground, so the test owns the process and its exit.
            self.process = subprocess.Popen(
                [self.binary, "-db", "-f", str(self.config)], stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout_s
        while not self.socket.exists():
            assert self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, "haproxy did not open its runtime socket"
            time.sleep(0.05)

    def command(self, line: str) -> str:
        """One runtime API command (`set server`, `show servers state`, ...) and its answer."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(self.socket))
            sock.sendall(line.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def set_state(self, server: str, state: str) -> None:
        """`maint` takes the server out of the balancer; `ready` puts it back (health checks decide the rest)."""
        answer = self.command(f"set server {BACKEND}/{server} state {state}")
        assert answer.strip() == "", answer

    def operational(self, server: str) -> bool:
        """Whether HAProxy sends traffic to the server now (up and not in maintenance)."""
        lines = self.command(f"show servers state {BACKEND}").splitlines()
        header = lines[1].lstrip("# ").split()
        for line in lines[2:]:
            values = dict(zip(header, line.split(), strict=False))
            if values.get("srv_name") == server:
                # srv_op_state 2: running; srv_admin_state 0: not in maintenance.
                return values["srv_op_state"] == "2" and values["srv_admin_state"] == "0"
        raise AssertionError(f"no server {server} in {lines}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
