"""Every shipped offer's price is on the page it cites: a hand-checked list of offers, figures, sources and quotes."""

from __future__ import annotations

from datetime import date
from typing import NamedTuple

import pytest

from domain.catalog import Catalog


class Check(NamedTuple):
    """One offer as checked by hand: the figure as the page prints it, what it is divided by to give a GPU-hour."""

    offer_id: str
    page_figure: str
    divisor: int
    source: str
    as_of: str
    quote: str


# Checked by hand against the cited page (USD; instance prices divided by the instance's GPU count). The quote is the
# page text that shows the figure. Offers whose figure no page showed were left out: DigitalOcean H200, A100, V100,
# Quadro and RTX A-series (the 2026 page does not list them), RunPod MI300X, and the 2025 DigitalOcean RTX 6000 Ada and
# AWS Capacity Block rows (over 400 days old, no newer page found). Dropped when no page newer than July 2026 was found:
# Crusoe MI300X spot, TensorWave MI300X and MI325X (DigitalOcean's MI325X replaces it), Modal T4 and L4 (Vast's L4
# replaces it), Vultr MI300X (Vultr's L40S stays), Spheron GB200 (CoreWeave's GB200 stays), Hot Aisle MI300X (1x and
# 8x, its blog post of 2026-07-14), Lambda's reserved 8x H100 of April 2026 (Qubrid's yearly 8x H100 server
# replaces it).
AKASH = (
    "raw.githubusercontent.com/api-evangelist/akash/refs/heads/main/plans/plans.yml"
    " (akash.network/pricing/gpus read 2026-09-20)"
)
COREWEAVE = (
    "raw.githubusercontent.com/api-evangelist/coreweave/refs/heads/main/pla"
    "ns/coreweave-plans-pricing.yml (coreweave.com/pricing read 2026-09-20)"
)
CRUSOE = (
    "raw.githubusercontent.com/api-evangelist/crusoe/refs/heads/main/plan"
    "s/crusoe-plans-pricing.yml (crusoe.ai/cloud/pricing read 2026-09-20)"
)
DR_HYPER = (
    "raw.githubusercontent.com/datareceipts/data-receipts/main/109-gpu-pricing/hyperscalers.json (retrieved 2026-11-09)"
)
DR_README = "raw.githubusercontent.com/datareceipts/data-receipts/main/109-gpu-pricing/README.md (retrieved 2026-11-09)"
DR_VENDORS = (
    "raw.githubusercontent.com/datareceipts/data-receipts/main/109"
    "-gpu-pricing/vendors.json (runpod.io/pricing read 2026-11-09)"
)
DSTACK = "github.com/dstackai/dstack/pull/4110 (dstack offer output for p5en.48xlarge, 2026-08-06)"
EWY = (
    "raw.githubusercontent.com/ewyluda/gpu-price-index/main/data/observations/2026/2026-10-10.csv"
    " (collected 2026-10-10)"
)
EWY_ROW = "2026-10-10,2026-10-10T12:33:53+00:00,"
HYPERSTACK = (
    "raw.githubusercontent.com/api-evangelist/nexgen-cloud/refs/heads/main/plans/"
    "nexgen-cloud-plans-pricing.yml (hyperstack.cloud/gpu-pricing read 2026-08-26)"
)
LAMBDA = (
    "raw.githubusercontent.com/api-evangelist/lambda-labs/refs/heads/main/pl"
    "ans/lambda-labs-plans-pricing.yml (lambda.ai/instances read 2026-09-20)"
)
LANTERN = "huggingface.co/datasets/lanternworks/gpu-cloud-prices (verda.com/pricing, 2026-10-29)"
MITHRIL = (
    "raw.githubusercontent.com/api-evangelist/mithril/refs/heads/main/p"
    "lans/mithril-plans-pricing.yml (mithril.ai/pricing read 2026-09-20)"
)
NEBIUS = (
    "raw.githubusercontent.com/api-evangelist/nebius/refs/heads/main/plans/nebius-plans-pricing.yml"
    " (nebius.com/prices read 2026-10-07)"
)
PRIVUM = "huggingface.co/datasets/privum/ai-compute-prices (runpod, 2026-08-19)"
QUBRID = (
    "raw.githubusercontent.com/api-evangelist/qubrid-ai/refs/heads/main/p"
    "lans/qubrid-ai-plans-pricing.yml (qubrid.com/pricing read 2026-09-20)"
)
SCREENER = "raw.githubusercontent.com/renshuBTC/compute-screener/main/data/gpu_providers_latest.csv (read 2026-10-24)"
SILY = (
    "raw.githubusercontent.com/tgarg01/silybench-data/main/deri"
    "ved/csv/gpu_prices.csv (provider pages checked 2026-09-25)"
)
SILY_GCP = (
    "raw.githubusercontent.com/tgarg01/silybench-data/main/derived/csv/gpu_prices.csv"
    " (Cloud Billing catalog checked 2026-09-26)"
)
TOKENWATT = "huggingface.co/datasets/tokenwatt/gpu-cloud-prices (DigitalOcean API list price, collected 2026-10-07)"
TOOLSHED = (
    "raw.githubusercontent.com/toolshedlabs-hash/gpu-price-feed/main/data/history/v2/2026-10.jsonl"
    " (collected 2026-10-03)"
)
TOOLSHED_DO = (
    '"digitalocean": {"H100 80GB SXM": 4.41, "H200 141GB SXM": 4.47, "L40S 48GB": 1.57, "MI300X 192GB": 2.59,'
    ' "MI325X 256GB": 3.8, "RTX 4000 Ada 20GB": 0.76, "RTX 6000 Ada 48GB": 1.57}'
    ' ... "collected_at": "2026-10-03T11:38:46+00:00"'
)

CHECKED = [
    Check(
        "digitalocean-mi300x-on-demand",
        "2.59",
        1,
        TOKENWATT,
        "2026-10-07",
        '"gpu": "AMD MI300X", "form": "unspecified", "gpus": 1, "price_hr": 2.59,'
        ' "market": "on-demand", "provider": "DigitalOcean"',
    ),
    Check("digitalocean-mi300x-on-demand-x8", "2.59", 1, TOOLSHED, "2026-10-03", TOOLSHED_DO),
    Check("digitalocean-h100-sxm-on-demand", "4.41", 1, TOOLSHED, "2026-10-03", TOOLSHED_DO),
    Check("digitalocean-mi325x-on-demand", "3.8", 1, TOOLSHED, "2026-10-03", TOOLSHED_DO),
    Check("digitalocean-h100-sxm-on-demand-x8", "4.41", 1, TOOLSHED, "2026-10-03", TOOLSHED_DO),
    Check("digitalocean-l40s-on-demand", "1.57", 1, TOOLSHED, "2026-10-03", TOOLSHED_DO),
    Check("digitalocean-rtx-4000-ada-on-demand", "0.76", 1, TOOLSHED, "2026-10-03", TOOLSHED_DO),
    Check(
        "aws-h100-sxm-on-demand",
        "55.04",
        8,
        DR_HYPER,
        "2026-11-09",
        '"instance": "p5.48xlarge", "gpu": "H100 SXM", "gpu_memory_gb": 80, "gpu_count": 8, "usd_per_hour": 55.04',
    ),
    Check(
        "aws-h200-on-demand",
        "63.296",
        8,
        DSTACK,
        "2026-08-06",
        "aws (us-east-1)   cpu=192 mem=2048GB disk=100GB gpu=H200:141GB:8         p5en.48xlarge  $63.296",
    ),
    Check(
        "aws-h200-spot",
        "26.5714",
        8,
        DSTACK,
        "2026-08-06",
        "aws (us-east-2)   cpu=192 mem=2048GB disk=100GB gpu=H200:141GB:8 (spot)  p5en.48xlarge  $26.5714",
    ),
    Check(
        "aws-a100-sxm-40gb-on-demand",
        "21.957642",
        8,
        DR_HYPER,
        "2026-11-09",
        '"instance": "p4d.24xlarge", "gpu": "A100 SXM", "gpu_memory_gb": 40, "gpu_count": 8, "usd_per_hour": 21.957642',
    ),
    Check(
        "aws-a100-sxm-80gb-on-demand",
        "27.44705",
        8,
        DR_HYPER,
        "2026-11-09",
        '"instance": "p4de.24xlarge", "gpu": "A100 SXM", "gpu_memory_gb": 80, "gpu_count": 8, "usd_per_hour": 27.44705',
    ),
    Check("azure-h100-sxm-on-demand", "12.29", 1, DR_README, "2026-11-09", "| Azure `ND96isr_H100_v5` | **$12.29** |"),
    Check(
        "azure-h100-nvl-on-demand",
        "6.98",
        1,
        DR_HYPER,
        "2026-11-09",
        '"instance": "Standard_NC40ads_H100_v5", "gpu": "H100 NVL", "gpu_memory_gb":'
        ' 94, "gpu_count": 1, "usd_per_hour": 6.98',
    ),
    Check(
        "azure-a100-pcie-80gb-on-demand",
        "3.673",
        1,
        DR_HYPER,
        "2026-11-09",
        '"instance": "Standard_NC24ads_A100_v4", "gpu": "A100 PCIe", "gpu_memory_gb":'
        ' 80, "gpu_count": 1, "usd_per_hour": 3.673',
    ),
    Check(
        "azure-mi300x-on-demand",
        "48.0",
        8,
        EWY,
        "2026-10-10",
        EWY_ROW
        + "azure,Microsoft Azure,hyperscaler,on_demand,MI300X,Standard_ND96isr_MI300X_v5,eastus2,NA,8,48.0,6.0,1",
    ),
    Check(
        "oracle-h100-sxm-on-demand",
        "10.0",
        1,
        EWY,
        "2026-10-10",
        EWY_ROW + "oracle,Oracle Cloud,hyperscaler,on_demand,H100,BM.GPU.H100.8,global,Global,1,10.0,10.0,1",
    ),
    Check(
        "oracle-h200-on-demand",
        "10.0",
        1,
        EWY,
        "2026-10-10",
        EWY_ROW + "oracle,Oracle Cloud,hyperscaler,on_demand,H200,BM.GPU.H200.8,global,Global,1,10.0,10.0,1",
    ),
    Check(
        "oracle-a100-sxm-80gb-on-demand",
        "4.0",
        1,
        EWY,
        "2026-10-10",
        EWY_ROW + "oracle,Oracle Cloud,hyperscaler,on_demand,A100-80GB,BM.GPU.A100-v2.8,global,Global,1,4.0,4.0,1",
    ),
    Check(
        "oracle-mi300x-on-demand",
        "6.0",
        1,
        EWY,
        "2026-10-10",
        EWY_ROW + "oracle,Oracle Cloud,hyperscaler,on_demand,MI300X,BM.GPU.MI300X.8,global,Global,1,6.0,6.0,1",
    ),
    Check(
        "oracle-b200-on-demand",
        "14.0",
        1,
        EWY,
        "2026-10-10",
        EWY_ROW + "oracle,Oracle Cloud,hyperscaler,on_demand,B200,BM.GPU.B200.8,global,Global,1,14.0,14.0,1",
    ),
    Check(
        "coreweave-h100-sxm-on-demand",
        "49.24",
        8,
        COREWEAVE,
        "2026-09-20",
        "NVIDIA HGX H100 (on-demand) $49.24 8 GPUs, 80 GB VRAM",
    ),
    Check(
        "coreweave-h200-on-demand",
        "50.44",
        8,
        COREWEAVE,
        "2026-09-20",
        "NVIDIA HGX H200 (on-demand) $50.44 8 GPUs, 141 GB VRAM",
    ),
    Check(
        "coreweave-b200-on-demand",
        "68.80",
        8,
        COREWEAVE,
        "2026-09-20",
        "NVIDIA HGX B200 (on-demand) $68.80 8 GPUs, 180 GB VRAM",
    ),
    Check(
        "coreweave-a100-sxm-80gb-on-demand",
        "21.60",
        8,
        COREWEAVE,
        "2026-09-20",
        "NVIDIA A100 (on-demand) $21.60 8 GPUs, 80 GB VRAM",
    ),
    Check(
        "coreweave-l40s-on-demand",
        "18.00",
        8,
        COREWEAVE,
        "2026-09-20",
        "NVIDIA L40S (on-demand) $18.00 8 GPUs, 48 GB VRAM",
    ),
    Check(
        "coreweave-l40-on-demand",
        "10.00",
        8,
        COREWEAVE,
        "2026-09-20",
        "NVIDIA L40 (on-demand) $10.00 8 GPUs, 48 GB VRAM",
    ),
    Check(
        "coreweave-rtx-pro-6000-blackwell-server-on-demand",
        "20.00",
        8,
        COREWEAVE,
        "2026-09-20",
        "NVIDIA RTX PRO 6000 Blackwell Server Edition (High Memory) $20.00 8 GPUs, 96 GB VRAM",
    ),
    Check(
        "coreweave-gb200-on-demand",
        "42.00",
        4,
        COREWEAVE,
        "2026-09-20",
        "NVIDIA GB200 NVL72 (on-demand, North America) $42.00 4 GPUs, 186 GB VRAM",
    ),
    Check(
        "coreweave-h100-sxm-spot",
        "19.71",
        8,
        COREWEAVE,
        "2026-09-20",
        "NVIDIA HGX H100 ... Spot Price: $19.71 / Hour (NA)",
    ),
    Check(
        "coreweave-h200-spot", "20.93", 8, COREWEAVE, "2026-09-20", "NVIDIA HGX H200 ... Spot Price: $20.93 / Hour (NA)"
    ),
    Check(
        "coreweave-b200-spot", "34.11", 8, COREWEAVE, "2026-09-20", "NVIDIA HGX B200 ... Spot Price: $34.11 / Hour (NA)"
    ),
    Check("coreweave-b300-spot", "35.84", 8, COREWEAVE, "2026-09-20", "HGX B300 Spot Price: $35.84 / Hour (NA)"),
    Check("coreweave-a100-sxm-80gb-spot", "9.65", 8, COREWEAVE, "2026-09-20", "NVIDIA A100 ... Spot $9.65/hour (NA)"),
    Check("lambda-h100-sxm-on-demand", "4.29", 1, LAMBDA, "2026-09-20", "1x NVIDIA H100 SXM price_text: $4.29"),
    Check("lambda-h100-sxm-on-demand-x8", "3.99", 1, LAMBDA, "2026-09-20", "8x NVIDIA H100 SXM price_text: $3.99"),
    Check("lambda-b200-on-demand", "6.99", 1, LAMBDA, "2026-09-20", "1x NVIDIA B200 SXM6 price_text: $6.99"),
    Check("lambda-b200-on-demand-x8", "6.69", 1, LAMBDA, "2026-09-20", "8x NVIDIA B200 SXM6 price_text: $6.69"),
    Check("lambda-h100-pcie-on-demand", "3.29", 1, LAMBDA, "2026-09-20", "1x NVIDIA H100 PCIe price_text: $3.29"),
    Check("lambda-a10-on-demand", "1.29", 1, LAMBDA, "2026-09-20", "1x NVIDIA A10 price_text: $1.29"),
    Check("lambda-rtx-a6000-on-demand", "1.09", 1, LAMBDA, "2026-09-20", "4x NVIDIA A6000 price_text: $1.09"),
    Check(
        "lambda-a100-sxm-80gb-on-demand", "2.79", 1, LAMBDA, "2026-09-20", "8x NVIDIA A100 SXM 80 GB price_text: $2.79"
    ),
    Check(
        "lambda-a100-sxm-40gb-on-demand", "1.99", 1, LAMBDA, "2026-09-20", "8x NVIDIA A100 SXM 40 GB price_text: $1.99"
    ),
    Check(
        "runpod-h100-sxm-on-demand",
        "3.99",
        1,
        DR_VENDORS,
        "2026-11-09",
        '"vendor": "RunPod (Secure)" ... {"gpu": "H100 SXM", "gpu_memory_gb": 80, "usd_per_gpu_hour": 3.99}',
    ),
    Check(
        "runpod-h100-sxm-on-demand-community",
        "2.69",
        1,
        DR_VENDORS,
        "2026-11-09",
        '"vendor": "RunPod (Community)" ... {"gpu": "H100 SXM", "gpu_memory_gb": 80, "usd_per_gpu_hour": 2.69}',
    ),
    Check(
        "runpod-h100-pcie-on-demand",
        "2.89",
        1,
        DR_VENDORS,
        "2026-11-09",
        '"vendor": "RunPod (Secure)" ... {"gpu": "H100 PCIe", "gpu_memory_gb": 80, "usd_per_gpu_hour": 2.89}',
    ),
    Check(
        "runpod-h100-pcie-on-demand-community",
        "1.99",
        1,
        DR_VENDORS,
        "2026-11-09",
        '"vendor": "RunPod (Community)" ... {"gpu": "H100 PCIe", "gpu_memory_gb": 80, "usd_per_gpu_hour": 1.99}',
    ),
    Check(
        "runpod-h100-nvl-on-demand",
        "3.19",
        1,
        DR_VENDORS,
        "2026-11-09",
        '"vendor": "RunPod (Secure)" ... {"gpu": "H100 NVL", "gpu_memory_gb": 94, "usd_per_gpu_hour": 3.19}',
    ),
    Check(
        "runpod-h100-nvl-on-demand-community",
        "2.59",
        1,
        DR_VENDORS,
        "2026-11-09",
        '"vendor": "RunPod (Community)" ... {"gpu": "H100 NVL", "gpu_memory_gb": 94, "usd_per_gpu_hour": 2.59}',
    ),
    Check(
        "runpod-a100-sxm-80gb-on-demand",
        "1.79",
        1,
        DR_VENDORS,
        "2026-11-09",
        '"vendor": "RunPod (Secure)" ... {"gpu": "A100 SXM", "gpu_memory_gb": 80, "usd_per_gpu_hour": 1.79}',
    ),
    Check(
        "runpod-a100-sxm-80gb-on-demand-community",
        "1.39",
        1,
        DR_VENDORS,
        "2026-11-09",
        '"vendor": "RunPod (Community)" ... {"gpu": "A100 SXM", "gpu_memory_gb": 80, "usd_per_gpu_hour": 1.39}',
    ),
    Check(
        "runpod-a100-pcie-80gb-on-demand",
        "1.79",
        1,
        DR_VENDORS,
        "2026-11-09",
        '"vendor": "RunPod (Secure)" ... {"gpu": "A100 PCIe", "gpu_memory_gb": 80, "usd_per_gpu_hour": 1.79}',
    ),
    Check(
        "runpod-a100-pcie-80gb-on-demand-community",
        "1.19",
        1,
        DR_VENDORS,
        "2026-11-09",
        '"vendor": "RunPod (Community)" ... {"gpu": "A100 PCIe", "gpu_memory_gb": 80, "usd_per_gpu_hour": 1.19}',
    ),
    Check(
        "runpod-h200-on-demand",
        "5.29",
        1,
        EWY,
        "2026-10-10",
        EWY_ROW + "runpod,RunPod Secure Cloud,neocloud,on_demand,H200,NVIDIA H200,global,Global,1,5.29,5.29,1",
    ),
    Check(
        "runpod-h200-on-demand-community",
        "3.59",
        1,
        SILY,
        "2026-09-25",
        'runpod,H200-141GB,on-demand,3.59,1,"H200, Community Cloud"',
    ),
    Check(
        "runpod-b200-on-demand",
        "7.99",
        1,
        EWY,
        "2026-10-10",
        EWY_ROW + "runpod,RunPod Secure Cloud,neocloud,on_demand,B200,NVIDIA B200,global,Global,1,7.99,7.99,1",
    ),
    Check(
        "runpod-b200-on-demand-community",
        "5.98",
        1,
        SILY,
        "2026-09-25",
        'runpod,B200-180GB,on-demand,5.98,1,"B200, Community Cloud"',
    ),
    Check(
        "runpod-l40s-on-demand", "1.09", 1, SILY, "2026-09-25", 'runpod,L40S-48GB,on-demand,1.09,1,"L40S, Secure Cloud"'
    ),
    Check(
        "runpod-l40s-on-demand-community",
        "0.79",
        1,
        SILY,
        "2026-09-25",
        'runpod,L40S-48GB,on-demand,0.79,1,"L40S, Community Cloud"',
    ),
    Check(
        "runpod-rtx-4090-on-demand",
        "0.74",
        1,
        SILY,
        "2026-09-25",
        'runpod,RTX4090-24GB,on-demand,0.74,1,"RTX 4090, Secure Cloud"',
    ),
    Check(
        "runpod-rtx-4090-on-demand-community",
        "0.34",
        1,
        SILY,
        "2026-09-25",
        'runpod,RTX4090-24GB,on-demand,0.34,1,"RTX 4090, Community Cloud"',
    ),
    Check(
        "runpod-b300-on-demand",
        "7.89",
        1,
        PRIVUM,
        "2026-08-19",
        "2026-08-19 | runpod | B300 | B300 | 288 | secure | 7.89",
    ),
    Check(
        "runpod-b300-on-demand-community",
        "6.94",
        1,
        PRIVUM,
        "2026-08-19",
        "2026-08-19 | runpod | B300 | B300 | 288 | community | 6.94",
    ),
    Check(
        "runpod-a40-on-demand", "0.44", 1, PRIVUM, "2026-08-19", "2026-08-19 | runpod | A40 | A40 | 48 | secure | 0.44"
    ),
    Check(
        "nebius-h100-sxm-on-demand",
        "4.5",
        1,
        EWY,
        "2026-10-10",
        EWY_ROW + "nebius,Nebius,neocloud,on_demand,H100,NVIDIA HGX H100,global,Global,1,4.5,4.5,1",
    ),
    Check(
        "nebius-h200-on-demand",
        "5.4",
        1,
        EWY,
        "2026-10-10",
        EWY_ROW + "nebius,Nebius,neocloud,on_demand,H200,NVIDIA HGX H200,global,Global,1,5.4,5.4,1",
    ),
    Check(
        "nebius-b200-on-demand",
        "8.5",
        1,
        EWY,
        "2026-10-10",
        EWY_ROW + "nebius,Nebius,neocloud,on_demand,B200,NVIDIA HGX B200,global,Global,1,8.5,8.5,1",
    ),
    Check("nebius-l40s-on-demand", "1.55", 1, SILY, "2026-09-25", "nebius,L40S-48GB,on-demand,1.55,1,L40S (Intel)"),
    Check(
        "nebius-h100-sxm-spot",
        "0.79",
        1,
        NEBIUS,
        "2026-10-07",
        "name: Preemptible NVIDIA HGX H200 / H100 / RTX PRO 6000 price_text: from $0.79",
    ),
    Check(
        "gcp-h100-sxm-on-demand",
        "10.9791",
        1,
        SILY_GCP,
        "2026-09-26",
        'gcp,H100-80GB,on-demand,10.9791,1,"a3-highgpu-1g, us-central1"',
    ),
    Check(
        "gcp-h100-sxm-spot",
        "6.571",
        1,
        SILY_GCP,
        "2026-09-26",
        'gcp,H100-80GB,spot,6.571,1,"a3-highgpu-1g Spot, us-central1"',
    ),
    Check(
        "hyperstack-b300-on-demand",
        "7.40",
        1,
        HYPERSTACK,
        "2026-08-26",
        "resource: NVIDIA B300 vram_gb: 288 ... price_per_hour: 7.40",
    ),
    Check(
        "hyperstack-b200-on-demand",
        "6.00",
        1,
        HYPERSTACK,
        "2026-08-26",
        "resource: NVIDIA B200 vram_gb: 192 ... price_per_hour: 6.00",
    ),
    Check(
        "hyperstack-h200-on-demand",
        "3.99",
        1,
        HYPERSTACK,
        "2026-08-26",
        "resource: NVIDIA H200 SXM vram_gb: 141 ... price_per_hour: 3.99",
    ),
    Check(
        "hyperstack-h100-sxm-on-demand",
        "3.20",
        1,
        HYPERSTACK,
        "2026-08-26",
        "resource: NVIDIA H100 SXM vram_gb: 80 ... price_per_hour: 3.20",
    ),
    Check(
        "hyperstack-rtx-pro-6000-blackwell-server-on-demand",
        "1.85",
        1,
        HYPERSTACK,
        "2026-08-26",
        "resource: NVIDIA RTX Pro 6000 SE vram_gb: 96 price_per_hour: 1.85",
    ),
    Check(
        "hyperstack-a100-sxm-80gb-on-demand",
        "1.60",
        1,
        HYPERSTACK,
        "2026-08-26",
        "resource: NVIDIA A100 SXM vram_gb: 80 price_per_hour: 1.60",
    ),
    Check(
        "hyperstack-l40-on-demand",
        "1.00",
        1,
        HYPERSTACK,
        "2026-08-26",
        "resource: NVIDIA L40 vram_gb: 48 price_per_hour: 1.00",
    ),
    Check(
        "hyperstack-rtx-a6000-on-demand",
        "0.50",
        1,
        HYPERSTACK,
        "2026-08-26",
        "resource: NVIDIA A6000 vram_gb: 48 price_per_hour: 0.50",
    ),
    Check(
        "hyperstack-rtx-a4000-on-demand",
        "0.15",
        1,
        HYPERSTACK,
        "2026-08-26",
        "resource: NVIDIA A4000 vram_gb: 16 price_per_hour: 0.15",
    ),
    Check(
        "hyperstack-h100-pcie-spot",
        "2.00",
        1,
        HYPERSTACK,
        "2026-08-26",
        "Spot VMs ... resource: NVIDIA H100 PCIe price_per_hour: 2.00",
    ),
    Check(
        "hyperstack-l40-spot",
        "0.80",
        1,
        HYPERSTACK,
        "2026-08-26",
        "Spot VMs ... resource: NVIDIA L40 price_per_hour: 0.80",
    ),
    Check("akash-b300-on-demand", "6.00", 1, AKASH, "2026-09-20", "B300 288GB SXM6 price_text: $6.00/hr"),
    Check("akash-b200-on-demand", "5.00", 1, AKASH, "2026-09-20", "B200 180GB HBM3e price_text: $5.00/hr"),
    Check("akash-h200-on-demand", "4.45", 1, AKASH, "2026-09-20", "H200 141GB SXM5 price_text: $4.45/hr"),
    Check("akash-h100-sxm-on-demand", "2.71", 1, AKASH, "2026-09-20", "H100 80GB SXM5 price_text: $2.71/hr"),
    Check(
        "akash-rtx-pro-6000-blackwell-server-on-demand",
        "2.04",
        1,
        AKASH,
        "2026-09-20",
        "Pro 6000 SE 96GB PCIe price_text: $2.04/hr",
    ),
    Check("akash-rtx-5090-on-demand", "0.67", 1, AKASH, "2026-09-20", "RTX 5090 32GB PCIe price_text: $0.67/hr"),
    Check("akash-rtx-4090-on-demand", "0.39", 1, AKASH, "2026-09-20", "RTX 4090 24GB PCIe price_text: $0.39/hr"),
    Check("akash-t4-on-demand", "0.15", 1, AKASH, "2026-09-20", "T4 16GB PCIe price_text: $0.15/hr"),
    Check("akash-v100-32gb-on-demand", "0.17", 1, AKASH, "2026-09-20", "V100 32GB PCIe price_text: $0.17/hr"),
    Check(
        "crusoe-h200-on-demand",
        "4.29",
        1,
        CRUSOE,
        "2026-09-20",
        "NVIDIA H200 141GB HGX (on-demand) price_text: $4.29/GPU-hr",
    ),
    Check(
        "crusoe-h100-sxm-on-demand",
        "3.90",
        1,
        CRUSOE,
        "2026-09-20",
        "NVIDIA H100 80GB HGX (on-demand) price_text: $3.90/GPU-hr",
    ),
    Check(
        "crusoe-mi300x-on-demand",
        "3.45",
        1,
        CRUSOE,
        "2026-09-20",
        "AMD MI300X 192GB (on-demand) price_text: $3.45/GPU-hr",
    ),
    Check(
        "crusoe-a100-sxm-80gb-on-demand",
        "2.30",
        1,
        CRUSOE,
        "2026-09-20",
        "NVIDIA A100 80GB SXM (on-demand) price_text: $2.30/GPU-hr",
    ),
    Check(
        "crusoe-a100-pcie-80gb-on-demand",
        "2.00",
        1,
        CRUSOE,
        "2026-09-20",
        "NVIDIA A100 80GB PCIe (on-demand) price_text: $2.00/GPU-hr",
    ),
    Check(
        "crusoe-l40s-on-demand",
        "1.50",
        1,
        CRUSOE,
        "2026-09-20",
        "NVIDIA L40S 48GB (on-demand) price_text: $1.50/GPU-hr",
    ),
    Check(
        "vultr-l40s-on-demand",
        "1.671",
        1,
        TOOLSHED,
        "2026-10-03",
        '"vultr": {"A16 16GB": 0.4709, "L40S 48GB": 1.671}} ... "collected_at": "2026-10-03T11:38:46+00:00"',
    ),
    Check(
        "vast-l4-on-demand",
        "0.3252",
        1,
        TOOLSHED,
        "2026-10-03",
        '"vastai": {... "L4 24GB": 0.3252, ...} ... "collected_at": "2026-10-03T11:38:46+00:00"',
    ),
    Check(
        "vast-rtx-4090-on-demand",
        "0.3344",
        1,
        TOOLSHED,
        "2026-10-03",
        '"vastai": {... "RTX 4090 24GB": 0.3344, ...} ... "collected_at": "2026-10-03T11:38:46+00:00"',
    ),
    Check(
        "vast-rtx-5090-on-demand",
        "0.4089",
        1,
        TOOLSHED,
        "2026-10-03",
        '"vastai": {... "RTX 5090 32GB": 0.4089, ...} ... "collected_at": "2026-10-03T11:38:46+00:00"',
    ),
    Check(
        "vast-h100-nvl-on-demand",
        "2.5344",
        1,
        EWY,
        "2026-10-10",
        EWY_ROW + "vast,Vast.ai,marketplace,on_demand,H100-NVL,median-offer,global,Global,1,2.5344,2.5344,6",
    ),
    Check(
        "vast-b200-on-demand",
        "7.8128",
        1,
        EWY,
        "2026-10-10",
        EWY_ROW + "vast,Vast.ai,marketplace,on_demand,B200,median-offer,global,Global,1,7.8128,7.8128,32",
    ),
    Check(
        "mithril-h200-spot",
        "17.26",
        8,
        MITHRIL,
        "2026-09-20",
        "H200 SXM5 (8 GPUs, 168 vCPUs, 1,600 GB RAM, 12,500 GB disk) price_text: $17.26 instance/hr",
    ),
    Check(
        "mithril-h100-sxm-spot",
        "12.03",
        8,
        MITHRIL,
        "2026-09-20",
        "H100 SXM5 (8 GPUs, 168 vCPUs, 1,814 GB RAM, 12,500 GB disk) price_text: $12.03 instance/hr",
    ),
    Check(
        "verda-rtx-a6000-on-demand",
        "0.82",
        1,
        LANTERN,
        "2026-10-29",
        "Verda (formerly DataCrunch)|RTX A6000|On-demand instance (1x GPU)|48|1 |"
        " https://verda.com/pricing | ranked | On-demand instance (1x GPU) | 0.82",
    ),
    Check(
        "verda-l40s-spot",
        "0.941",
        1,
        LANTERN,
        "2026-10-29",
        "Verda (formerly DataCrunch)|L40S|Spot instance (1x GPU)|48|1 |"
        " https://verda.com/pricing | ranked | Spot instance (1x GPU) | 0.941",
    ),
    Check(
        "together-h100-sxm-on-demand",
        "3.99",
        1,
        SCREENER,
        "2026-10-24",
        "H100,Together AI,3.99,1,observed,2026-10-24T17:47:53Z",
    ),
    Check(
        "together-h200-on-demand",
        "5.99",
        1,
        SCREENER,
        "2026-10-24",
        "H200,Together AI,5.99,1,observed,2026-10-24T17:47:53Z",
    ),
    Check(
        "qubrid-b200-reserved-1y",
        "297840",
        70080,
        QUBRID,
        "2026-09-20",
        "NVIDIA B200 180GB 8-GPU SXM Server price_text: $297,840 price: 297840 currency: USD period: year unit: server",
    ),
    Check(
        "qubrid-b300-reserved-1y",
        "389400",
        70080,
        QUBRID,
        "2026-09-20",
        "NVIDIA B300 288GB 8-GPU Bare Metal Server price_text: $389,400 price: 389400"
        " currency: USD period: year unit: server",
    ),
    Check(
        "qubrid-h200-reserved-1y",
        "210240",
        70080,
        QUBRID,
        "2026-09-20",
        "NVIDIA H200 141GB 8-GPU SXM Server price_text: $210,240 price: 210240 currency: USD period: year unit: server",
    ),
    Check(
        "qubrid-h100-sxm-reserved-1y",
        "133414.8",
        70080,
        QUBRID,
        "2026-09-20",
        "NVIDIA H100 80GB 8-GPU SXM Server price_text: $133,414.80 price: 133414.8 currency: USD period: year"
        " unit: server",
    ),
]


def test_every_shipped_offer_was_checked(reference: Catalog) -> None:
    assert sorted(o.id for o in reference.offers) == sorted(check.offer_id for check in CHECKED)


@pytest.mark.parametrize("check", CHECKED, ids=[c.offer_id for c in CHECKED])
def test_offer_carries_the_checked_figure_source_and_date(reference: Catalog, check: Check) -> None:
    offer = next(o for o in reference.offers if o.id == check.offer_id)
    assert check.page_figure in check.quote
    assert (offer.usd_per_gpu_hour, offer.source, offer.as_of) == (
        pytest.approx(float(check.page_figure) / check.divisor, abs=5e-5),
        check.source,
        date.fromisoformat(check.as_of),
    )


def test_the_community_h100_is_pcie_and_each_runpod_tier_is_its_own_offer(reference: Catalog) -> None:
    runpod = {(o.gpu, o.tier): o.usd_per_gpu_hour for o in reference.offers if o.provider == "runpod"}
    assert (runpod[("h100-pcie", "community")], runpod[("h100-pcie", "secure")]) == (1.99, 2.89)
    assert [runpod[(gpu, "secure")] for gpu in ("h100-sxm", "h200", "b200")] == [3.99, 5.29, 7.99]
    assert [runpod[(gpu, "community")] for gpu in ("h100-sxm", "h200", "b200")] == [2.69, 3.59, 5.98]
    assert not any(o.provider == "runpod" and o.gpu == "mi300x" for o in reference.offers)


def test_8x_mi300x_is_rented_by_three_providers(reference: Catalog) -> None:
    providers = {o.provider for o in reference.offers if o.gpu == "mi300x" and o.gpus_per_instance == 8}
    assert len(providers) >= 3, providers


def test_the_rows_found_wrong_are_fixed(reference: Catalog) -> None:
    offers = {o.id: o for o in reference.offers}
    assert offers["aws-h200-on-demand"].usd_per_gpu_hour == pytest.approx(63.296 / 8)
    assert offers["aws-h200-on-demand"].instance == "p5en.48xlarge"
    assert offers["lambda-h100-sxm-on-demand"].usd_per_gpu_hour == 4.29
    assert not any(o.pricing == "capacity_block" and o.as_of < date(2025, 12, 1) for o in reference.offers)
