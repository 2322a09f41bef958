"""Every shipped offer's price is on the page it cites: a hand-checked list of (offer, figure, source) triples."""

from __future__ import annotations

import pytest

from domain.catalog import Catalog

DO_2026 = "docs.digitalocean.com/products/droplets/details/pricing (validated 2026-05-28)"
DO_2025 = "docs.digitalocean.com/products/droplets/details/pricing (validated 2025-04-22)"
RUNPOD = "spheron.network 2026-05-22; deploybase 2026-03"
LAMBDA = "techbytes.app 2026-05-07; opslyft 2026-05-18"
AWS = "usage.ai 2026-06; codesota 2026-04"
AWS_BLOCKS = "AWS capacity-block pricing page mirror, to 2025-01-01"
AZURE = "rmmartins.com 2026-06; cliffcenter.com 2026-05"
OCI = "oraclelicensingexperts.com 2026-04"
COREWEAVE = "kaelresearch.com 2026-02"
SPHERON = "spheron.network/blog/nvidia-h200-vs-b200-vs-gb200 (2026-03-17)"

# Checked by hand against the cited page (USD per GPU-hour; node prices divided by the GPU count). Offers that no
# page could be found for were dropped: DigitalOcean's H200, A100, V100, Quadro and RTX A-series rows (the 2026
# page does not list them), DigitalOcean MI325X (contract price after contacting sales) and RunPod MI300X.
CHECKED: list[tuple[str, float, str]] = [
    ("digitalocean-mi300x-on-demand", 1.99, DO_2026),
    ("digitalocean-mi300x-on-demand-x8", 1.99, DO_2026),  # 15.92/h for 8
    ("digitalocean-h100-sxm-on-demand", 3.39, DO_2026),
    ("digitalocean-h100-sxm-on-demand-x8", 2.99, DO_2026),  # 23.92/h for 8
    ("digitalocean-l40s-on-demand", 1.57, DO_2026),
    ("digitalocean-rtx-4000-ada-on-demand", 0.76, DO_2026),
    ("digitalocean-rtx-6000-ada-on-demand", 1.89, DO_2025),
    ("aws-h100-sxm-on-demand", 6.88, AWS),
    ("aws-h200-on-demand", 13.4, AWS),
    ("aws-h100-sxm-capacity-block", 4.916, AWS_BLOCKS),
    ("aws-h200-capacity-block", 5.408, AWS_BLOCKS),
    ("aws-a100-sxm-40gb-capacity-block", 1.844, AWS_BLOCKS),
    ("azure-h100-sxm-on-demand", 12.3, AZURE),
    ("azure-mi300x-on-demand", 6.0, AZURE),
    ("oracle-h100-sxm-on-demand", 10.0, OCI),
    ("oracle-h200-on-demand", 12.25, OCI),
    ("oracle-a100-sxm-80gb-on-demand", 4.0, OCI),
    ("oracle-mi300x-on-demand", 6.0, OCI),
    ("oracle-b200-on-demand", 16.0, OCI),
    ("coreweave-h100-sxm-on-demand", 6.16, COREWEAVE),
    ("coreweave-h200-on-demand", 6.31, COREWEAVE),
    ("coreweave-a100-sxm-80gb-on-demand", 2.70, COREWEAVE),
    ("coreweave-l40s-on-demand", 2.25, COREWEAVE),
    ("coreweave-b200-on-demand", 8.60, COREWEAVE),
    ("lambda-h100-sxm-on-demand", 3.78, LAMBDA),
    ("lambda-h100-sxm-on-demand-x8", 3.99, LAMBDA),
    ("lambda-h100-sxm-reserved-1y", 1.85, "cliffcenter 2026-05"),
    ("runpod-h100-sxm-on-demand", 2.69, RUNPOD),
    ("runpod-h100-pcie-community", 1.80, RUNPOD),
    ("runpod-h200-on-demand", 3.59, RUNPOD),
    ("runpod-a100-sxm-80gb-on-demand", 1.39, "spheron.network 2026-05-22"),
    ("runpod-b200-on-demand", 5.98, RUNPOD),
    ("vultr-mi300x-on-demand", 1.85, "cliffcenter 2026-05"),
    ("tensorwave-mi300x-on-demand", 1.50, "cliffcenter 2026-05"),
    ("tensorwave-mi325x-on-demand", 1.95, "cliffcenter 2026-05"),
    ("crusoe-mi300x-spot", 1.71, "cliffcenter 2026-05-18"),
    ("spheron-gb200-on-demand", 4.54, SPHERON),  # 9.08/h per superchip of 2 GPUs
]


def test_every_shipped_offer_was_checked(reference: Catalog) -> None:
    assert sorted(o.id for o in reference.offers) == sorted(offer_id for offer_id, _, _ in CHECKED)


@pytest.mark.parametrize(("offer_id", "figure", "source"), CHECKED, ids=[c[0] for c in CHECKED])
def test_offer_carries_the_checked_figure_and_source(
    reference: Catalog, offer_id: str, figure: float, source: str
) -> None:
    offer = next(o for o in reference.offers if o.id == offer_id)
    assert (offer.usd_per_gpu_hour, offer.source) == (pytest.approx(figure), source)


def test_the_community_h100_is_pcie(reference: Catalog) -> None:
    community = next(o for o in reference.offers if o.id == "runpod-h100-pcie-community")
    assert community.gpu == "h100-pcie"
    assert not any(o.provider == "runpod" and o.gpu == "mi300x" for o in reference.offers)
