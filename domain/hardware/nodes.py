"""Node sizes: GPUs per server."""

from __future__ import annotations

# GPUs in one server: the unit nodes, rentals and launch commands are counted in.
GPUS_PER_NODE = 8
