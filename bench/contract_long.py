"""A long schemathesis run against a live gpu-advisor: thousands of generated requests checked against the contract.

Run from the repository root:

    uv run python bench/contract_long.py                       # 500 examples per operation, a random seed
    uv run python bench/contract_long.py --max-examples 2000 --seed 42 --report-dir /tmp/contract --json
    uv run python bench/contract_long.py --phases examples,coverage,fuzzing --max-time 1800
    uv run python bench/contract_long.py --database-url postgresql+asyncpg://postgres@127.0.0.1:5432/scratch \\
        --redis-url redis://127.0.0.1:6379/14              # writes offers: use a database of its own

tests/contract/test_schemathesis.py runs the same contract with few, deterministic examples so that CI stays
fast; this is the long run, with random (seeded) data and every check.

What it does:

1. starts `gpu-advisor serve --workers 1` on a free port of 127.0.0.1 (without `--database-url` on a fresh
   SQLite file, without `--redis-url` with its in-process cache) with GPU_ADVISOR_API_KEYS set to a key made for
   the run, so that the administrative operations (PUT/DELETE /v1/admin/offers/{id}, POST /v1/admin/offers:bulk)
   are exercised for real, GPU_ADVISOR_RATE_LIMIT_PER_MINUTE=0 (schemathesis sends everything from one address)
   and GPU_ADVISOR_LOG_LEVEL=WARNING; waits for `GET /health/ready`;
2. writes a temporary schemathesis.toml with the configuration of tests/contract/test_schemathesis.py:
   generation mode `all` (positive and negative data), and for `^/v1/(recommendations|estimates|tco|admin/.*)$`
   the check positive_data_acceptance expecting 2xx, 400 or 404 (a schema-valid body can name a model, GPU or
   provider the catalog does not have: a 400 by contract; deleting an unknown offer is a 404);
3. runs the schemathesis CLI of this environment in a temporary folder (so that nothing is written into the
   repository):
   `schemathesis --config-file <it> run <repo>/openapi/openapi.json --url <server> --phases
   examples,coverage,fuzzing,stateful --max-examples N --seed S --checks all --mode all
   --header "X-API-Key: <key>" --workers W --generation-database none --report json,junit`
   with its progress and failures on stdout (stderr with `--json`);
4. reads schemathesis's JSON report and prints the cases generated, the cases with failures, the unique
   failures by check, the errors, the operations tested, the running time, the seed (to reproduce the run),
   and any line of the server's log that names an error.

It exits 1 when schemathesis reports any failure or error or exits non-zero, and 2 when the server does not come
up or schemathesis cannot run. `--report-dir` keeps the JSON and JUnit reports (default: deleted with the
temporary folder).
"""

from __future__ import annotations

import argparse
import json
import random
import secrets
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import figures, servers

SCHEMA = servers.REPO_ROOT / "openapi" / "openapi.json"
PHASES = ("examples", "coverage", "fuzzing", "stateful")
REQUEST_TIMEOUT_S = 30.0
LOG_ERROR_MARKERS = ("ERROR", "Traceback", "CRITICAL")
JSON_REPORT = "schemathesis-report.json"

# tests/contract/test_schemathesis.py, in schemathesis.toml form (max-examples and the seed come from the CLI).
CONFIG_TOML = """\
# written by bench/contract_long.py for one run
[generation]
mode = "all"

[[operations]]
include-path-regex = "^/v1/(recommendations|estimates|tco|admin/offers/.*)$"

[operations.checks.positive_data_acceptance]
expected-statuses = ["2xx", "400", "404"]

[[operations]]
include-path-regex = "^/v1/admin/offers:bulk$"

[operations.checks.positive_data_acceptance]
expected-statuses = ["2xx", "400", "413"]
"""


def schemathesis_command(args: argparse.Namespace, config: Path, url: str, key: str, reports: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "schemathesis.cli",
        "--config-file",
        str(config),
        "run",
        str(SCHEMA),
        "--url",
        url,
        "--phases",
        args.phases,
        "--max-examples",
        str(args.max_examples),
        "--seed",
        str(args.seed),
        "--checks",
        "all",
        "--mode",
        "all",
        "--header",
        f"X-API-Key: {key}",
        "--workers",
        str(args.workers),
        "--request-timeout",
        f"{REQUEST_TIMEOUT_S:g}",
        "--generation-database",
        "none",
        "--report",
        "json,junit",
        "--report-dir",
        str(reports),
        "--report-json-path",
        str(reports / JSON_REPORT),
        *(["--max-time", str(args.max_time)] if args.max_time else []),
        *([] if sys.stdout.isatty() and not args.json else ["--no-color"]),
    ]


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    key = f"contract-long-{secrets.token_hex(8)}"
    config = workdir / "schemathesis.toml"
    config.write_text(CONFIG_TOML, encoding="utf-8")
    reports = Path(args.report_dir).resolve() if args.report_dir else workdir / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    scratch = workdir / "cwd"
    scratch.mkdir()
    env = {"GPU_ADVISOR_API_KEYS": key, "GPU_ADVISOR_RATE_LIMIT_PER_MINUTE": "0", "GPU_ADVISOR_LOG_LEVEL": "WARNING"}
    (reports / JSON_REPORT).unlink(missing_ok=True)  # a report of an earlier run must not pass for this one's
    with servers.running(
        workdir,
        database_url=args.database_url,
        redis_url=args.redis_url,
        port=args.port,
        timeout_s=REQUEST_TIMEOUT_S,
        extra_env=env,
    ) as server:
        command = schemathesis_command(args, config, server.url, key, reports)
        shown = " ".join(part if part != f"X-API-Key: {key}" else "'X-API-Key: ***'" for part in command[1:])
        print(f"running: python {shown}", file=sys.stderr, flush=True)
        try:
            finished = subprocess.run(
                command,
                cwd=scratch,
                stdin=subprocess.DEVNULL,
                stdout=sys.stderr if args.json else None,
                check=False,
            )
        except OSError as error:
            raise servers.BenchError(f"schemathesis could not start: {error}") from error
        server.check_alive()
        facts = server.facts("catalog_version")
        log_lines = []
        if server.log_path and server.log_path.exists():
            text = server.log_path.read_text(encoding="utf-8", errors="replace")
            log_lines = [line for line in text.splitlines() if any(m in line for m in LOG_ERROR_MARKERS)]
    report_path = reports / JSON_REPORT
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise servers.BenchError(
            f"schemathesis (exit {finished.returncode}) left no readable JSON report in {reports}: {error}"
        ) from error
    cases = report.get("test_cases") or {}
    operations = report.get("operations") or {}
    return {
        "meta": {
            **facts,
            "schemathesis_exit_code": finished.returncode,
            "seed": args.seed,
            "max_examples": args.max_examples,
            "phases": args.phases,
            "schemathesis_workers": args.workers,
            "schemathesis_version": report.get("schemathesis_version"),
            "reports": str(reports) if args.report_dir else None,
            **figures.platform_facts(),
        },
        "cases_generated": cases.get("generated"),
        "cases_with_failures": cases.get("with_failures"),
        "unique_failures": cases.get("unique_failures"),
        "cases_errored": cases.get("errored"),
        "operations": operations,
        "phases": report.get("phases"),
        "failures": report.get("failures") or [],
        "errors": report.get("errors") or [],
        "running_time_s": report.get("running_time"),
        "stop_reason": report.get("stop_reason"),
        "server_log_errors": log_lines[:20],
        "server_log_error_lines": len(log_lines),
    }


def text_report(document: dict[str, Any]) -> str:
    meta, ops = document["meta"], document["operations"]
    running = document["running_time_s"]
    out = [
        f"gpu-advisor long contract run: schemathesis {meta['schemathesis_version']}, phases {meta['phases']}, "
        f"max {meta['max_examples']} examples per operation, seed {meta['seed']}, {meta['schemathesis_workers']} "
        f"workers (database {meta['database']}, cache {meta['cache']}, catalog {meta['catalog_version']})",
        f"cases generated: {document['cases_generated']}; with failures: {document['cases_with_failures']}; "
        f"unique failures: {document['unique_failures']}; errored: {document['cases_errored']}",
        f"operations: {ops.get('tested')} tested of {ops.get('selected')} selected ({ops.get('total')} in the "
        f"schema), {ops.get('errored')} errored, {ops.get('skipped')} skipped; "
        + (f"{running:.0f} s; " if isinstance(running, int | float) else "")
        + f"stopped: {document['stop_reason']}; schemathesis exit code {meta['schemathesis_exit_code']}",
    ]
    if document["phases"]:
        out.append("phases: " + ", ".join(f"{name} {p.get('status')}" for name, p in document["phases"].items()))
    for failure in document["failures"]:
        out.append(
            f"failure: {failure.get('title')} ({failure.get('code')}), {failure.get('count')} cases: "
            + ", ".join(failure.get("operations") or [])
        )
    for error in document["errors"]:
        out.append(f"error: {error.get('title')} ({error.get('count')})")
    if document["server_log_error_lines"]:
        out.append(f"server log: {document['server_log_error_lines']} lines name an error, the first:")
        out += [f"  {line}" for line in document["server_log_errors"]]
    if meta["reports"]:
        out.append(f"reports (JSON, JUnit) in {meta['reports']}")
    out.append(f"reproduce with --seed {meta['seed']}; python {meta['python']} on {meta['platform']}")
    return "\n".join(out)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--max-examples", type=int, default=500, help="most generated cases per operation and phase (default 500)"
    )
    parser.add_argument("--seed", type=int, help="schemathesis seed (default: a random one, printed)")
    parser.add_argument(
        "--phases", default=",".join(PHASES), help=f"comma-separated phases (default {','.join(PHASES)})"
    )
    # One worker: with several threads, Hypothesis describing filter lambdas (ast.parse) trips a CPython 3.11
    # race ("AST constructor recursion depth mismatch") in the coverage phase; that is the tool failing, not the API.
    parser.add_argument("--workers", type=int, default=1, help="schemathesis workers (default 1)")
    parser.add_argument("--max-time", type=int, help="time budget of the whole run, in seconds (default: none)")
    parser.add_argument("--report-dir", help="keep schemathesis's JSON and JUnit reports in this folder")
    servers.add_server_options(parser)
    parser.add_argument("--json", action="store_true", help="print JSON on stdout (everything else goes to stderr)")
    args = parser.parse_args(argv)
    if not 1 <= args.max_examples <= 1_000_000:
        parser.error("--max-examples must be between 1 and 1000000")
    phases = [phase.strip() for phase in args.phases.split(",") if phase.strip()]
    if not phases or any(phase not in PHASES for phase in phases):
        parser.error(f"--phases takes a comma-separated list of {', '.join(PHASES)}")
    args.phases = ",".join(phases)
    if not 1 <= args.workers <= 64:
        parser.error("--workers must be between 1 and 64")
    if args.max_time is not None and args.max_time < 1:
        parser.error("--max-time must be at least 1 second")
    if args.seed is None:
        args.seed = random.randrange(1, 2**31)
    servers.check_server_options(parser, args)
    if shutil.which("schemathesis") is None and not (Path(sys.executable).parent / "schemathesis").exists():
        parser.error("schemathesis is not installed here: run `uv sync` (it is a dev dependency)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    servers.exit_on_sigterm()
    outcome = servers.run_in_workdir("contract_long", lambda workdir: run(args, workdir))
    if isinstance(outcome, int):
        return outcome
    figures.print_outcome(outcome, text_report, args.json)
    failed = (
        outcome["meta"]["schemathesis_exit_code"] != 0
        or bool(outcome["cases_with_failures"])
        or bool(outcome["failures"])
        or bool(outcome["errors"])
        or bool(outcome["cases_errored"])
    )
    if failed:
        print("contract_long: schemathesis reported failures or errors", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
