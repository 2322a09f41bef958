"""compose.yaml: the service's data and spool on named volumes, no password in the file, .env.example complete."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "compose.yaml"
# ${NAME}, ${NAME:-default}, ${NAME:?message}: the variables compose takes from the environment or .env.
VARIABLE = re.compile(r"\$\{(\w+)(?::?[-?][^}]*)?\}")


def dockerfile_env() -> dict[str, str]:
    text = (REPO / "Dockerfile").read_text()
    return dict(re.findall(r"^\s+(\w+)=(\S+?)\s*\\?$", text, flags=re.MULTILINE))


def test_the_sqlite_file_and_the_spool_are_on_named_volumes() -> None:
    compose = yaml.safe_load(COMPOSE.read_text())
    api = compose["services"]["api"]
    mounts = dict(reversed(volume.split(":")[:2]) for volume in api["volumes"])
    env = dockerfile_env()
    sqlite_folder = str(Path(env["DATABASE_URL"].split(":///", 1)[1]).parent)
    spool = env["GPU_ADVISOR_PENDING_SPOOL_DIR"]
    assert sqlite_folder in mounts and spool in mounts, mounts
    for folder in (sqlite_folder, spool):
        assert mounts[folder] in compose["volumes"], f"{folder}: {mounts[folder]} is no named volume"
    # A fresh volume takes the owner of the folder it is mounted on: the image must have it, writable.
    assert re.search(rf"mkdir -p [^\n]*{re.escape(spool)}", (REPO / "Dockerfile").read_text())


def test_no_password_in_the_file_and_env_example_names_every_variable() -> None:
    text = COMPOSE.read_text()
    compose = yaml.safe_load(text)
    password = compose["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"]
    assert VARIABLE.fullmatch(password), password
    url = compose["services"]["api"]["environment"]["DATABASE_URL"]
    assert "${POSTGRES_PASSWORD" in url
    example = (REPO / ".env.example").read_text()
    defined = set(re.findall(r"^(\w+)=", example, flags=re.MULTILINE))
    assert set(VARIABLE.findall(text)) <= defined, set(VARIABLE.findall(text)) - defined


def test_env_is_ignored_and_its_example_committed() -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=REPO, check=False)
    assert ignored.returncode == 0
    example = subprocess.run(["git", "check-ignore", "-q", ".env.example"], cwd=REPO, check=False)
    assert example.returncode == 1
