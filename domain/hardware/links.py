"""GPU links: what a group of GPUs talks over, and at what bandwidth."""

from __future__ import annotations

from typing import Literal

from domain.catalog import Gpu, LinkKind
from domain.hardware.collectives import MESH_LINKS, PCIE_BEYOND_PAIR, PCIE_GBPS, PCIE_HOST_GBPS
from domain.hardware.efficiency import peer_to_peer


def link_kind(gpu: Gpu, group: int) -> LinkKind | Literal["pcie_host"]:
    """The link a group of `group` GPUs talks over."""
    kind = gpu.interconnect.kind
    if kind == "nvlink_bridge" and group > 2:
        kind = "pcie"  # bridges join pairs only; larger groups talk over PCIe
    if kind == "pcie" and not peer_to_peer(gpu):
        return "pcie_host"
    return kind


def link_gbps(gpu: Gpu, group: int) -> float:
    """Bandwidth (one direction) of the GPU link inside a group."""
    kind = link_kind(gpu, group)
    # A pair of PCIe cards talks through its own switch; larger groups cross the CPU's root complex, which every
    # peer's traffic shares (PCIE_BEYOND_PAIR).
    if kind in ("pcie", "pcie_host"):
        gbps = PCIE_HOST_GBPS if kind == "pcie_host" else PCIE_GBPS
        return gbps if group <= 2 else gbps * PCIE_BEYOND_PAIR
    aggregate = (gpu.interconnect.bandwidth_gbps or 2 * PCIE_GBPS) / 2
    if kind == "infinity_fabric":
        # A fully connected mesh: one direct link to each peer, so a group reaches only its peers' links.
        return aggregate * min(MESH_LINKS, max(1, group - 1)) / MESH_LINKS
    return aggregate
