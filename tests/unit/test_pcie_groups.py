"""PCIe groups: a pair talks through its own switch, larger groups share the CPU's root complex."""

from __future__ import annotations

from domain.catalog import Catalog
from domain.hardware.collectives import PCIE_BEYOND_PAIR, PCIE_GBPS
from domain.hardware.links import link_gbps


def test_pcie_pairs_keep_the_switch_rate_and_larger_groups_share_the_root_complex(reference: Catalog) -> None:
    l40s = reference.gpu("l40s")
    assert l40s is not None
    assert link_gbps(l40s, 2) == PCIE_GBPS
    # TP4 and TP8 move about the same per peer in the measured tables, well below a pair's rate.
    assert link_gbps(l40s, 4) == link_gbps(l40s, 8) == PCIE_GBPS * PCIE_BEYOND_PAIR
    assert 7 <= link_gbps(l40s, 4) <= 10


def test_nvlink_groups_are_unchanged(reference: Catalog) -> None:
    h100 = reference.gpu("h100-sxm")
    assert h100 is not None
    assert link_gbps(h100, 2) == link_gbps(h100, 8) > PCIE_GBPS
