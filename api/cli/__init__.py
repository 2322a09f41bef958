"""The terminal: `gpu-advisor` and its command groups."""

from api.cli.main import main

__all__ = ["main"]
