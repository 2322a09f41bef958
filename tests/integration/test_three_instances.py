"""Three `gpu-advisor serve` processes on one PostgreSQL database and Redis behind HAProxy: one is killed under
load, taken out and added back; clients see no error, every acknowledged write is on every instance, and a price
change reaches every instance's catalog within 2 s."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.load_client import Load, Request, drive
from bench.servers import HOST, free_port, server_env, start_server, stop_server, wait_until_ready
from tests.conftest import REDIS_URL
from tests.integration.haproxy import Balancer

pytestmark = pytest.mark.integration

KEY = "three-instances-key"
NAMES = ("s0", "s1", "s2")
VICTIM = "s1"
# Per phase: the kill (phase 1) and the price change (phase 2) happen a third of the way in.
REQUESTS_PER_PHASE = 300
CONNECTIONS = 12
VERSION_DEADLINE_S = 2.0
STATE_DEADLINE_S = 10.0
# Three servers importing their modules at once on a small machine: 90 s at most (0.2 s apart) for each.
READY_TRIES = 450
OFFER_ID = "coreweave-h200-on-demand"
MODELS = ("llama-3.1-8b", "qwen2.5-7b", "mistral-7b", "llama-3.1-70b")


def requests() -> list[Request]:
    """Distinct recommendation questions (distinct stored ids) between catalog reads."""
    mix: list[Request] = []
    for model in MODELS:
        for limit in range(1, 6):
            for objective in ("balanced", "cost", "speed"):
                body = {"workload": {"kind": "inference", "model": model}, "objective": objective, "limit": limit}
                mix.append(Request("recommend", "POST", "/v1/recommendations", json.dumps(body).encode()))
                mix.append(Request("read", "GET", "/v1/gpus/h100" if limit % 2 else "/v1/offers?gpu=h200"))
    return mix


class Instance:
    """One `gpu-advisor serve` process on a fixed loopback port, which can be killed and started again."""

    def __init__(self, name: str, workdir: Path, env: dict[str, str]) -> None:
        self.name = name
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.env = env
        self.log = workdir / f"{name}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        # Never --migrate: like the Deployment, the instances leave the schema to the one migration step.
        self.process = start_server(self.port, self.env, self.log, migrate=False)

    def wait_ready(self) -> dict[str, Any]:
        assert self.process is not None
        with httpx.Client(base_url=self.url) as client:
            return wait_until_ready(client, self.process, self.log, tries=READY_TRIES)

    def kill(self) -> None:
        """SIGKILL: no drain, no shutdown hook, as when a node disappears."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None:
            stop_server(self.process)


@contextmanager
def cluster(workdir: Path, database_url: str) -> Iterator[tuple[dict[str, Instance], Balancer]]:
    extra = {"GPU_ADVISOR_API_KEYS": KEY, "GPU_ADVISOR_AUTO_MIGRATE": "0", "GPU_ADVISOR_SHUTDOWN_DRAIN_S": "2"}
    env = server_env(database_url, REDIS_URL, extra)
    instances = {name: Instance(name, workdir, env) for name in NAMES}
    with ExitStack() as stack:
        for instance in instances.values():
            stack.callback(instance.stop)
            instance.start()
        for instance in instances.values():
            instance.wait_ready()
        balancer = Balancer(workdir, [(name, instance.port) for name, instance in instances.items()])
        stack.callback(balancer.stop)
        balancer.start()
        yield instances, balancer


async def until(condition: Any, deadline_s: float, what: str) -> None:
    """Poll `condition()` (sync or async) until it holds; fail after the deadline."""
    deadline = time.monotonic() + deadline_s
    while True:
        result = condition()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        assert time.monotonic() < deadline, f"{what}: not within {deadline_s} s"
        await asyncio.sleep(0.05)


async def catalog_versions(instances: list[Instance]) -> dict[str, str]:
    async with httpx.AsyncClient(timeout=2) as client:
        answers = await asyncio.gather(*(client.get(f"{i.url}/health/ready") for i in instances))
    return {i.name: a.json()["catalog_version"] for i, a in zip(instances, answers, strict=True)}


async def change_price_and_converge(balancer: Balancer, live: list[Instance]) -> dict[str, str]:
    """A price change through the balancer; every live instance serves the new catalog within the deadline."""
    before = set((await catalog_versions(live)).values())
    assert len(before) == 1, before
    async with httpx.AsyncClient(base_url=balancer.url, timeout=10) as client:
        offers = (await client.get("/v1/offers", params={"gpu": "h200", "limit": 200})).json()["items"]
        offer = next(o for o in offers if o["id"] == OFFER_ID)
        changed = offer | {"usd_per_gpu_hour": round(offer["usd_per_gpu_hour"] + 0.01, 2)}
        answer = await client.put(f"/v1/admin/offers/{OFFER_ID}", json=changed, headers={"X-API-Key": KEY})
        assert answer.status_code == 200, answer.text
    seen: dict[str, str] = {}

    async def converged() -> bool:
        seen.update(await catalog_versions(live))
        return len(set(seen.values())) == 1 and set(seen.values()) != before

    await until(converged, VERSION_DEADLINE_S, f"one new catalog version on {[i.name for i in live]} (saw {seen})")
    return seen


class Acknowledged:
    """What clients were told: the recommendation ids answered 200, and which server answered each request."""

    def __init__(self, load_requests: list[Request]) -> None:
        self.requests = load_requests
        self.ids: set[str] = set()
        self.unstored: list[str] = []
        self.served_by: list[str] = []

    def __call__(self, index: int, status: int, headers: Mapping[str, str], body: bytes) -> None:
        self.served_by.append(headers.get("x-served-by", ""))
        request = self.requests[index % len(self.requests)]
        if request.label == "recommend" and status == 200:
            rec_id = json.loads(body)["id"]
            self.ids.add(rec_id)
            if "x-recommendation-stored" in headers:
                self.unstored.append(f"{rec_id}: {headers['x-recommendation-stored']}")


async def unreadable(instance: Instance, ids: list[str]) -> list[str]:
    """The ids that `instance` does not serve by GET /v1/recommendations/{id}, with the status it gave."""
    async with httpx.AsyncClient(base_url=instance.url, timeout=10) as client:
        answers = await asyncio.gather(*(client.get(f"/v1/recommendations/{rec_id}") for rec_id in ids))
    return [f"{instance.name}: {i} {a.status_code}" for i, a in zip(ids, answers, strict=True) if a.status_code != 200]


async def run_phase(balancer: Balancer, acknowledged: Acknowledged, at_a_third: Any) -> Load:
    """A bounded load through the balancer; `at_a_third()` runs once a third of it has been answered."""
    load = Load()
    task = asyncio.create_task(
        drive(
            balancer.url,
            acknowledged.requests,
            connections=CONNECTIONS,
            client="httpx",
            count=REQUESTS_PER_PHASE,
            load=load,
            on_answer=acknowledged,
        )
    )
    try:
        await asyncio.wait_for(load.reached(REQUESTS_PER_PHASE // 3).wait(), timeout=60)
        await at_a_third()
    finally:
        await task
    return load


async def test_an_instance_killed_under_load_loses_nothing_and_rejoins(
    seeded_postgres: str, redis: Any, tmp_path: Path
) -> None:
    # seeded_postgres: migrated and seeded once, as the migration Job does; redis: this run's database, emptied.
    acknowledged = Acknowledged(requests())
    with cluster(tmp_path, seeded_postgres) as (instances, balancer):
        everyone = list(instances.values())
        survivors = [i for i in everyone if i.name != VICTIM]
        await until(lambda: all(balancer.operational(n) for n in NAMES), STATE_DEADLINE_S, "all three in HAProxy")

        removed_at: list[int] = []

        async def kill_and_remove() -> None:
            instances[VICTIM].kill()
            balancer.set_state(VICTIM, "maint")
            # A write while one instance is gone reaches the two others.
            await change_price_and_converge(balancer, survivors)
            removed_at.append(len(acknowledged.served_by))
            # Started again at once (as a replacement pod would be); out of the balancer until it is put back.
            instances[VICTIM].start()

        first = await run_phase(balancer, acknowledged, kill_and_remove)
        served_before_return = len(acknowledged.served_by)
        assert VICTIM not in acknowledged.served_by[removed_at[0] :], "traffic reached a removed server"

        await asyncio.to_thread(instances[VICTIM].wait_ready)
        balancer.set_state(VICTIM, "ready")
        await until(lambda: balancer.operational(VICTIM), STATE_DEADLINE_S, f"{VICTIM} back in HAProxy")
        versions = await catalog_versions(everyone)
        assert len(set(versions.values())) == 1, f"the write made while {VICTIM} was gone: {versions}"

        async def change_price() -> None:
            await change_price_and_converge(balancer, everyone)

        second = await run_phase(balancer, acknowledged, change_price)

        for phase in (first, second):
            assert phase.errors == 0, phase.samples
        assert acknowledged.unstored == []
        assert VICTIM in acknowledged.served_by[served_before_return:], "the instance added back took no traffic"

        missing = [line for instance in everyone for line in await unreadable(instance, sorted(acknowledged.ids))]
        assert acknowledged.ids and missing == []
