"""deploy/kubernetes: both overlays render with `kubectl kustomize`, every object is valid for Kubernetes (offline
schemas), and the probes, ports, commands and environment variable names are the ones the code uses."""

from __future__ import annotations

import base64
import importlib
import inspect
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import click
import kubernetes_validate
import pytest
import yaml

from api.cli import main
from api.routes.health import live, ready
from api.settings import Settings

REPO = Path(__file__).resolve().parents[2]
KUBERNETES = REPO / "deploy" / "kubernetes"
OVERLAYS = ("dev", "production")
# The oldest Kubernetes the manifests are written for (matchLabelKeys in topology spread), and the newest schema.
SCHEMA_VERSIONS = ("1.29.0", kubernetes_validate.utils.latest_version())
# Read by the libraries the service runs on rather than by Settings.from_env.
LIBRARY_VARIABLES = {"PROMETHEUS_MULTIPROC_DIR": "prometheus_client.values"}
SECRET_KEYS = {"DATABASE_URL", "REDIS_URL", "GPU_ADVISOR_API_KEYS"}
# The label of what the first step of a release applies (deploy/kubernetes/README.md, "Upgrade").
STEP = "gpu-advisor/step"
# Closing the pools and writing what is pending after the drain.
CLOSE_MARGIN_S = 5

Object = dict[str, Any]


@cache
def rendered(overlay: str) -> tuple[Object, ...]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        message = "kubectl is not installed (Debian: apt-get install kubernetes-client)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    result = subprocess.run(
        [kubectl, "kustomize", str(KUBERNETES / "overlays" / overlay)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return tuple(document for document in yaml.safe_load_all(result.stdout) if document)


def one(objects: tuple[Object, ...], kind: str, name: str | None = None) -> Object:
    found = [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    assert len(found) == 1, f"{kind} {name or ''}: {len(found)} found"
    return found[0]


def pod_specs(objects: tuple[Object, ...]) -> Iterator[tuple[str, Object]]:
    """Every pod template of the workloads, with its owner's kind and name."""
    for o in objects:
        spec = o.get("spec", {})
        if o["kind"] == "CronJob":
            spec = spec["jobTemplate"]["spec"]
        if "template" in spec:
            yield f"{o['kind']}/{o['metadata']['name']}", spec["template"]


def containers(pod: Object) -> list[Object]:
    return [*pod["spec"].get("initContainers", []), *pod["spec"]["containers"]]


def config_data(objects: tuple[Object, ...]) -> dict[str, str]:
    config = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith("gpu-advisor"))
    return dict(config["data"])


def secret_keys(overlay: str) -> dict[str, str]:
    """The Secret's keys: generated in dev, documented by secret.env.example for production."""
    if overlay == "production":
        lines = (KUBERNETES / "overlays" / "production" / "secret.env.example").read_text().splitlines()
        return dict(line.split("=", 1) for line in lines if line.strip() and not line.startswith("#"))

    secret = next(
        o
        for o in rendered(overlay)
        if o["kind"] == "Secret" and o["metadata"]["name"].startswith("gpu-advisor-secrets")
    )
    return {key: base64.b64decode(value).decode() for key, value in secret["data"].items()}


class Recorder(dict[str, str]):
    """An environment that notes every name it is asked for."""

    def __init__(self, values: Mapping[str, str]) -> None:
        super().__init__(values)
        self.asked: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)


def settings_names() -> set[str]:
    recorder = Recorder({})
    Settings.from_env(recorder)
    return recorder.asked


def command_of(container: Object) -> click.Context:
    """The container's `gpu-advisor ...` command parsed by the CLI itself (unknown commands or options fail)."""
    program, *arguments = container["command"]
    assert program == "gpu-advisor", container["command"]
    command: click.Command = main
    while isinstance(command, click.Group) and arguments and arguments[0] in command.commands:
        command = command.commands[arguments.pop(0)]
    assert command is not main, f"{container['command']}: no such command"
    return command.make_context(command.name, list(arguments))


def api_container(objects: tuple[Object, ...]) -> Object:
    deployment = one(objects, "Deployment", "gpu-advisor")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return dict(container)


@pytest.mark.parametrize("overlay", OVERLAYS)
@pytest.mark.parametrize("version", SCHEMA_VERSIONS)
def test_every_object_is_valid_kubernetes(overlay: str, version: str) -> None:
    for document in rendered(overlay):
        kubernetes_validate.validate(document, version, strict=True)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_probes_and_ports_are_the_services(overlay: str) -> None:
    objects = rendered(overlay)
    container = api_container(objects)
    serve = command_of(container)
    (port,) = container["ports"]
    assert port["containerPort"] == serve.params["port"] and port["name"] == "http"
    assert serve.params["host"] == "0.0.0.0"
    assert container["startupProbe"]["httpGet"]["path"] in live.paths
    assert container["livenessProbe"]["httpGet"]["path"] in live.paths
    assert container["readinessProbe"]["httpGet"]["path"] in ready.paths
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert container[probe]["httpGet"]["port"] == port["name"]
    service = one(objects, "Service", "gpu-advisor")
    assert [p["targetPort"] for p in service["spec"]["ports"]] == [port["name"]]
    policy = one(objects, "NetworkPolicy", "gpu-advisor")
    assert [p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]] == [port["name"]]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_environment_names_are_the_settings(overlay: str) -> None:
    objects = rendered(overlay)
    config, secrets = config_data(objects), secret_keys(overlay)
    known = settings_names() | set(LIBRARY_VARIABLES)
    for name, module in LIBRARY_VARIABLES.items():
        assert name in inspect.getsource(importlib.import_module(module)), f"{module} no longer reads {name}"
    assert set(config) - known == set()
    assert set(secrets) == SECRET_KEYS
    assert SECRET_KEYS - settings_names() == set()
    assert not SECRET_KEYS & set(config), "credentials belong in the Secret"
    settings = Settings.from_env(config | secrets)  # every value is one the service accepts
    assert settings.redis_url and not settings.is_sqlite and settings.api_keys
    for where, pod in pod_specs(objects):
        for container in containers(pod):
            for source in container.get("envFrom", []):
                name = (source.get("configMapRef") or source["secretRef"])["name"]
                assert name.startswith(("gpu-advisor-config", "gpu-advisor-secrets", "postgres-credentials")), where


def image_environment() -> dict[str, str]:
    """The ENV of the Dockerfile's runtime stage (one `ENV A=1 \\ B=2` instruction)."""
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    line = next(line for line in reversed(text.splitlines()) if line.startswith("ENV "))
    return dict(part.split("=", 1) for part in line.split()[1:])


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_folder_the_service_writes_is_a_writable_mount(overlay: str) -> None:
    objects = rendered(overlay)
    environment = image_environment() | config_data(objects)
    container = api_container(objects)
    mounts = {Path(mount["mountPath"]) for mount in container["volumeMounts"]}
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    metrics = environment.get("PROMETHEUS_MULTIPROC_DIR")
    # Set at all, even empty, the variable turns multi-process metrics on, writing into the working directory.
    assert metrics, "PROMETHEUS_MULTIPROC_DIR must name a folder"
    spool = Settings.from_env(environment).pending_spool_dir
    assert spool is not None
    for folder in (Path(metrics), Path(spool)):
        assert folder.is_absolute() and any(folder.is_relative_to(mount) for mount in mounts), folder


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_instances_never_migrate_and_the_job_does_once(overlay: str) -> None:
    objects = rendered(overlay)
    serve = command_of(api_container(objects))
    assert serve.params["migrate"] is False
    assert Settings.from_env(config_data(objects)).auto_migrate is False
    job = one(objects, "Job", "gpu-advisor-migrate")
    assert job["spec"].get("parallelism", 1) == 1 and job["spec"].get("completions", 1) == 1
    steps = [command_of(c).command.name for c in containers(job["spec"]["template"])]
    assert steps == ["migrate", "seed"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_migration_step_applies_what_the_job_needs(overlay: str) -> None:
    objects = rendered(overlay)
    step = {
        (o["kind"], o["metadata"]["name"]) for o in objects if o["metadata"].get("labels", {}).get(STEP) == "migrate"
    }
    pod = one(objects, "Job", "gpu-advisor-migrate")["spec"]["template"]["spec"]
    needs = {("Job", "gpu-advisor-migrate"), ("ServiceAccount", pod["serviceAccountName"])}
    produced = {(o["kind"], o["metadata"]["name"]) for o in objects}
    for container in containers({"spec": pod}):
        for source in container["envFrom"]:
            kind, ref = (
                ("ConfigMap", source["configMapRef"]) if "configMapRef" in source else ("Secret", source["secretRef"])
            )
            if (kind, ref["name"]) in produced:  # the production Secret is created outside the overlay
                needs.add((kind, ref["name"]))
    assert needs <= step, f"`kubectl apply -l {STEP}=migrate` would leave out {needs - step}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_grace_period_covers_the_prestop_and_the_drain(overlay: str) -> None:
    objects = rendered(overlay)
    pod = one(objects, "Deployment", "gpu-advisor")["spec"]["template"]["spec"]
    container = api_container(objects)
    sleep, seconds = container["lifecycle"]["preStop"]["exec"]["command"]
    drain = Settings.from_env(config_data(objects)).shutdown_drain_s
    assert sleep == "sleep" and drain > 0
    assert pod["terminationGracePeriodSeconds"] >= int(seconds) + drain + CLOSE_MARGIN_S


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_workload_has_resources_and_runs_unprivileged(overlay: str) -> None:
    for where, pod in pod_specs(rendered(overlay)):
        assert pod["spec"]["securityContext"]["runAsNonRoot"] is True, where
        for container in containers(pod):
            assert {"cpu", "memory"} <= set(container["resources"]["requests"]), where
            assert "memory" in container["resources"]["limits"], where
            assert container["securityContext"]["allowPrivilegeEscalation"] is False, where


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_selectors_find_the_pods(overlay: str) -> None:
    objects = rendered(overlay)
    deployment = one(objects, "Deployment", "gpu-advisor")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert "replicas" not in deployment["spec"], "the autoscaler owns the count"
    for kind in ("PodDisruptionBudget",):
        assert one(objects, kind)["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert one(objects, "Service", "gpu-advisor")["spec"]["selector"].items() <= labels.items()
    for spread in deployment["spec"]["template"]["spec"]["topologySpreadConstraints"]:
        assert spread["labelSelector"]["matchLabels"].items() <= labels.items()
    hpa = one(objects, "HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "gpu-advisor"}
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]


def test_stores_run_in_the_cluster_only_in_dev() -> None:
    dev, production = rendered("dev"), rendered("production")
    assert sorted(o["metadata"]["name"] for o in dev if o["kind"] == "StatefulSet") == ["postgres", "redis"]
    assert not [o for o in production if o["kind"] == "StatefulSet"]
    for name in ("postgres", "redis"):
        assert one(production, "Service", name)["spec"]["type"] == "ExternalName"
        assert one(dev, "Service", name)["spec"]["selector"] == {"app.kubernetes.io/name": name}
    # The dev URLs name the in-cluster Services and their ports.
    secrets = secret_keys("dev")
    assert "@postgres:5432/" in secrets["DATABASE_URL"] and secrets["REDIS_URL"].startswith("redis://redis:6379/")


def test_the_price_sync_runs_the_sync_command() -> None:
    cron = one(rendered("production"), "CronJob", "gpu-advisor-price-sync")
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    (container,) = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["gpu-advisor", "prices", "sync"]
    prices = main.commands["prices"]
    assert isinstance(prices, click.Group)
    if "sync" not in prices.commands:
        pytest.skip("`gpu-advisor prices sync` arrives with the price feeds")
    command_of(container)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_spool_outlives_the_pod_and_is_shared(overlay: str) -> None:
    # An emptyDir went with a deleted pod, and with it every recommendation it had answered `pending`.
    objects = rendered(overlay)
    container = api_container(objects)
    spool = Path(Settings.from_env(image_environment() | config_data(objects)).pending_spool_dir or "")
    (mount,) = [m for m in container["volumeMounts"] if spool.is_relative_to(m["mountPath"])]
    pod = one(objects, "Deployment", "gpu-advisor")["spec"]["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert "emptyDir" not in volume
    claim = one(objects, "PersistentVolumeClaim", volume["persistentVolumeClaim"]["claimName"])
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]  # every pod takes up what any pod left
