"""`python -m api.cli`: the same as the `gpu-advisor` command."""

from api.cli.main import main

main()
