"""The `gpu-advisor` command: run and administer the service, and ask it questions from a terminal.

`recommend`, `estimate`, `compare`, `prices` and `tco` answer with readable tables (`--lang zh` for Chinese) or,
with `--json`, with exactly the document the HTTP API returns for the same question. Bad input is one line on
stderr naming the option and the closest ids, exit code 2. One module per command group sits beside this one.
"""

from __future__ import annotations

import click

from api.cli.catalog import gpus, prices
from api.cli.common import Commands
from api.cli.models import models
from api.cli.service import mcp_command, migrate, openapi, seed, serve
from api.cli.workloads import compare, estimate, recommend, tco


@click.group(cls=Commands)
@click.version_option(package_name="gpu-advisor", prog_name="gpu-advisor", message="%(prog)s %(version)s")
def main() -> None:
    """gpu-advisor: GPU pricing and recommendations for AI workloads."""


for command in (serve, migrate, seed, openapi, gpus, prices, recommend, estimate, compare, tco, mcp_command, models):
    main.add_command(command)

if __name__ == "__main__":
    main()
