"""The efficiency table: every factor that turns datasheet peaks into achievable rates, by GPU family and precision,
with its source and band; the values live in domain/data/factors.toml."""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any, Literal, get_args

from domain.catalog import Gpu

Scenario = Literal["expected", "pessimistic", "optimistic"]
Family = Literal["ampere", "hopper", "blackwell", "ada", "cdna3", "cdna4", "gaudi", "ascend"]
FactorName = Literal[
    "decode_mbu_dense",
    "decode_mbu_moe",
    "prefill_mfu",
    "step_floor_us_dense",
    "step_floor_us_moe",
    "train_mfu",
    "diffusion_mfu",
    "fp8_decode",
    "fp4_compute",
]
SCENARIOS: tuple[Scenario, ...] = ("expected", "pessimistic", "optimistic")


@dataclass(frozen=True)
class Factor:
    """An efficiency with its expected value, a low-high band and where it comes from."""

    expected: float
    low: float
    high: float
    source: str
    # Floors and latencies slow things down as they grow; efficiencies speed them up.
    higher_is_faster: bool = True
    # Where it sits in the table (domain/data/factors.toml): an estimate records these with the value it used.
    name: str = ""
    family: str = ""
    precision: str = ""
    status: str = ""  # fitted | measured | default (fitted once, but no two fit-set sources identify it)

    def at(self, scenario: Scenario) -> float:
        """The value a scenario uses: pessimistic takes the slow end of the band, optimistic the fast end."""
        return self._by_scenario[scenario]

    def describe(self) -> str:
        return self._description

    # Worked out once per factor: the factors are constants, and every estimate asks for them many times.
    @cached_property
    def _by_scenario(self) -> dict[str, float]:
        fast, slow = (self.high, self.low) if self.higher_is_faster else (self.low, self.high)
        return {"expected": self.expected, "optimistic": fast, "pessimistic": slow}

    @cached_property
    def _description(self) -> str:
        return f"{self.expected:g} ({self.low:g}-{self.high:g})"


@dataclass(frozen=True)
class FactorUse:
    """A factor an estimate read, as it used it: the table's factor, times a share the model worked out (or 1)."""

    name: str  # what the estimate states it as
    family: str  # the GPU family whose row it came from, or "all"
    precision: str  # the precision of the estimate it applied to
    factor: Factor
    scale: float = 1.0

    def value(self, scenario: Scenario) -> float:
        """The value the estimate used in a scenario."""
        return self.factor.at(scenario) * self.scale

    def describe(self) -> str:
        """Expected (band), and where a share scaled it, the table's value and the share."""
        if self.scale == 1.0:
            return self.factor.describe()
        f, scale = self.factor, self.scale
        return f"{f.expected * scale:.3g} ({f.low * scale:.3g}-{f.high * scale:.3g}): {f.describe()} x {scale:.3g}"


FAMILY_NAMES: dict[Family, str] = {
    "ampere": "NVIDIA Ampere/Volta (HBM)",
    "hopper": "NVIDIA Hopper",
    "blackwell": "NVIDIA Blackwell",
    "ada": "NVIDIA Ada and workstation cards (GDDR, PCIe)",
    "cdna3": "AMD CDNA 2/3 (MI250X, MI300X, MI325X)",
    "cdna4": "AMD CDNA 4 (MI350X, MI355X)",
    "gaudi": "Intel Gaudi",
    "ascend": "Huawei Ascend",
}

FITTED = "gpu-advisor fit to the calibration points (GET /v1/accuracy)"
# In factors.toml FITTED marks a row the fit may move; an estimate states it so only while two fit-set sources identify
# it (status "fitted"). Otherwise the fit leaves the value as it is, and the stated source says why.
UNREAD = "gpu-advisor default: no fit-set calibration point reads it"
UNDERDETERMINED = "gpu-advisor default: fewer than two fit-set calibration sources read it (the fit leaves it as it is)"
KERNELS = "aiconfigurator-core measured kernel tables (github.com/ai-dynamo/aiconfigurator)"
# A factor set apart from any GPU family: quantised kernels, training and diffusion runtimes.
ALL_FAMILIES = "all"
SharedName = Literal[
    "w4_decode",
    "fp8_prefill",
    "w4_compute",
    "moe_gemm_half_rows",
    "qlora_slowdown",
    "moe_train",
    "pytorch_train",
    "fp8_train_other_work",
    "tp_overlap",
    "diffusion_pass_floor_ms",
    "compiled_diffusion",
    "ort_cuda_diffusion",
]


class FactorTableError(ValueError):
    """A factor document that does not hold the whole table."""


@dataclass(frozen=True)
class FactorTable:
    """The factors of domain/data/factors.toml: family rows, the size curve, block-scaled FP8 MoE and shared ones."""

    rows: dict[Family, dict[FactorName, Factor]]
    gemm_size: dict[Family, tuple[Factor, float]]
    block_fp8_moe: dict[Family, Factor]
    shared: dict[str, Factor]
    # (lower, upper) bound of each fitted factor's expected value: the fitter's search range.
    bounds: dict[str, tuple[float, float]]


def stated_source(entry: dict[str, Any]) -> str:
    """The source an estimate states for a factors.toml row: a fit only where two fit-set sources identify it."""
    source: str = entry["source"]
    if not source.startswith(FITTED) or entry["status"] == "fitted":
        return source
    return (UNDERDETERMINED if entry.get("identified_by") else UNREAD) + source.removeprefix(FITTED)


def parse_factors(text: str) -> FactorTable:
    """The factor table of a factors.toml document; a row missing a factor is refused."""
    document = tomllib.loads(text)
    table = FactorTable({}, {}, {}, {}, {k: (float(v[0]), float(v[1])) for k, v in document["bounds"].items()})
    # A row with `same_as` takes that family's row of the same name, values and band: one number to refit, never a
    # stale copy. Resolved here, so the fitter's in-place trials of the origin do not move it.
    rows = {(entry["family"], entry["name"]): entry for entry in document["factor"]}
    for entry in document["factor"]:
        if (origin := entry.get("same_as")) is not None:
            if (found := rows.get((origin, entry["name"]))) is None or "same_as" in found:
                raise FactorTableError(f"{entry['family']}/{entry['name']}: no row {origin}/{entry['name']} to take")
            entry.update(expected=found["expected"], low=found["low"], high=found["high"])
    for entry in document["factor"]:
        family, name = entry["family"], entry["name"]
        item = Factor(
            entry["expected"],
            entry["low"],
            entry["high"],
            stated_source(entry),
            entry.get("higher_is_faster", True),
            name=name,
            family=family,
            precision=entry["precision"],
            status=entry["status"],
        )
        if family == ALL_FAMILIES:
            table.shared[name] = item
        elif name == "gemm_mfu_large":
            table.gemm_size[family] = (item, entry["half_params"])
        elif name == "block_fp8_moe":
            table.block_fp8_moe[family] = item
        else:
            table.rows.setdefault(family, {})[name] = item
    names = set(get_args(FactorName))
    problems = [f"{family}: {sorted(names - set(row))}" for family, row in table.rows.items() if set(row) != names]
    problems += [f"all: {name}" for name in get_args(SharedName) if name not in table.shared]
    if problems:
        raise FactorTableError("factors missing: " + "; ".join(problems))
    return table


class _Loaded(dict):  # type: ignore[type-arg]
    """A table filled by `install`: asking it before then names the cause."""

    def __missing__(self, key: object) -> Factor:
        if not self:
            raise LookupError("the factor table is not installed (api.adapters.storage.reference installs it)")
        raise KeyError(key)


# Filled in place by `install` (modules that imported them keep the same objects); the fitter and the
# cross-validation replace rows in place too.
EFFICIENCY: dict[Family, dict[FactorName, Factor]] = _Loaded()
# Dense GEMMs reach a share params / (params + half) of a large GEMM's rate (families with measured GEMM tables).
GEMM_SIZE: dict[Family, tuple[Factor, float]] = _Loaded()
BLOCK_FP8_MOE: dict[Family, Factor] = _Loaded()
SHARED: dict[str, Factor] = _Loaded()
BOUNDS: dict[str, tuple[float, float]] = {}
# Compiled graphs launch one kernel graph per pass: about half the eager launch floor.
COMPILED_DIFFUSION_FLOOR = 2.0


def install(table: FactorTable) -> None:
    """Make `table` the factors every estimate reads."""
    EFFICIENCY.clear()
    EFFICIENCY.update(table.rows)
    GEMM_SIZE.clear()
    GEMM_SIZE.update(table.gemm_size)
    BLOCK_FP8_MOE.clear()
    BLOCK_FP8_MOE.update(table.block_fp8_moe)
    SHARED.clear()
    SHARED.update(table.shared)
    BOUNDS.clear()
    BOUNDS.update(table.bounds)


def shared(name: SharedName) -> Factor:
    """A factor of no GPU family."""
    return SHARED[name]


def family_of(gpu: Gpu) -> Family:
    """The efficiency row a GPU uses: its vendor's generation, with GDDR/PCIe NVIDIA cards in one row."""
    # Asked for on every estimate of every layout: a pure function of the fields it reads (hashing the whole record
    # would cost more than the answer).
    return _family(gpu.vendor, gpu.architecture, gpu.memory_type)


@cache
def _family(vendor: str, architecture: str, memory_type: str) -> Family:
    arch = architecture.lower()
    if vendor == "amd":
        return "cdna4" if "cdna 4" in arch or "cdna4" in arch else "cdna3"
    if vendor == "intel":
        return "gaudi"
    if vendor == "huawei":
        return "ascend"
    if not memory_type.upper().startswith("HBM"):
        return "ada"
    if "blackwell" in arch:
        return "blackwell"
    if "hopper" in arch:
        return "hopper"
    return "ampere"


def factor(gpu: Gpu, name: FactorName) -> Factor:
    """The factor for this GPU's family."""
    return EFFICIENCY[family_of(gpu)][name]


def doublings(group: int) -> float:
    """log2 of a group size: how many times it doubled from one GPU."""
    return math.log2(group) if group > 1 else 0.0


def peer_to_peer(gpu: Gpu) -> bool:
    """Whether PCIe cards reach each other directly: datacenter and workstation cards do, GeForce cards do not."""
    return gpu.segment != "consumer"
