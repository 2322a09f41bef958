"""The frozen split of calibration sources into a fit set and a test set, and the regimes errors are reported by."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Literal
from urllib.parse import urlsplit

Side = Literal["fit", "test"]
Regime = Literal["le_64", "65_256", "gt_256", "one_node", "multi_node", "all"]

# A quarter of the sources of each stratum (GPU family and workload kind) are held out, chosen by a hash of their
# address, never by their error: a stratum of n >= 2 sources holds out its ceil(n / 4) lowest-hash sources, a lone
# source is held out when its hash is below 0.25. A new source can only take a place whose hash it beats.
TEST_SHARE = 0.25
SPLIT_RULE = (
    "Sources (one page, repository file, paper or measured-table release; all its points on one side, the same page "
    "read at two commits, releases or languages, or under a Markdown and an MDX name, being one source) are split by "
    "a SHA-256 hash of the address, per stratum (the GPU family and workload kind most of its points measure; a "
    "source read at several addresses takes the lowest of their hashes): a stratum of n >= 2 sources holds out its "
    "ceil(n / 4) lowest-hash sources as the test set, a lone source is held out when its hash, read as a fraction, "
    "is below 0.25. The fit reads the fit set only; the test set is read only to report."
)


# Path segments that name a language or a release of a page, not another page: the same page read at two commits or
# in two languages is one source, and must sit on one side of the split.
_LOCALE = re.compile(r"(en|zh|ja|ko|de|fr|es|pt|ru|it)(-[a-z]{2,4})?")
# A release is v-prefixed or has three parts (v0.8.0, 1.0.0): two parts would also match a paper's arXiv number.
_RELEASE = re.compile(r"v\d+(\.\d+)*[a-z0-9.-]*|\d+\.\d+\.\d+[a-z0-9.-]*|latest|stable")
_GITHUB_FILE = re.compile(r"(?P<repo>[^/]+/[^/]+)/(blob|tree|raw)/[^/]+/(?P<path>.+)")


def address(source: str) -> str:
    """A point's source as written: its address without scheme, 'www.', query, fragment or trailing slash."""
    text = source.strip()
    if "://" not in text:
        return text.split(";")[0].strip().lower()
    parts = urlsplit(text.split()[0])
    return parts.netloc.lower().removeprefix("www.") + parts.path.rstrip("/")


def source_group(source: str) -> str:
    """The source a point comes from: its address without language or release, so one page is one source however
    many commits or languages it was read at."""
    text = address(source)
    if "/" not in text:
        return text
    host, path = text.split("/", 1)
    if host == "raw.githubusercontent.com":
        owner, repo, _, rest = [*path.split("/", 3), "", "", ""][:4]
        host, path = "github.com", f"{owner}/{repo}/blob/ref/{rest}"
    if host == "github.com" and (file := _GITHUB_FILE.fullmatch(path)):
        path = f"{file['repo']}/{file['path']}"
    segments = [s for s in path.split("/") if not (_LOCALE.fullmatch(s.lower()) or _RELEASE.fullmatch(s.lower()))]
    group = "/".join([host, *segments])
    # Documentation sites move Markdown pages to MDX: one page under either name.
    return group.removesuffix(".mdx") + ".md" if group.endswith(".mdx") else group


def source_hash(group: str) -> float:
    """The group's SHA-256 read as a fraction in [0, 1)."""
    return int(hashlib.sha256(group.encode()).hexdigest()[:15], 16) / 16**15


def held_out_sources(strata: Mapping[str, str], hashes: Mapping[str, float]) -> frozenset[str]:
    """The held-out sources, given each source's stratum (its points' most common GPU family and workload kind) and
    hash (the lowest of the addresses it was read at, so adding a page's other release cannot move its other points)."""
    by_stratum: dict[str, list[str]] = {}
    for group, stratum in strata.items():
        by_stratum.setdefault(stratum, []).append(group)
    held: set[str] = set()
    for groups in by_stratum.values():
        ordered = sorted(groups, key=lambda group: (hashes[group], group))
        count = math.ceil(len(ordered) * TEST_SHARE) if len(ordered) >= 2 else int(hashes[ordered[0]] < TEST_SHARE)
        held.update(ordered[:count])
    return frozenset(held)


def majority(labels: Iterable[str]) -> str:
    """The most common label, ties broken by name so the split never depends on order."""
    counts = Counter(labels)
    return min(counts, key=lambda label: (-counts[label], label))


def regime(kind: str, sequences_per_copy: float, gpu_count: int) -> Regime:
    """Serving by sequences per model copy, training by scale, images as one regime."""
    if kind == "inference":
        if sequences_per_copy <= 64:
            return "le_64"
        return "65_256" if sequences_per_copy <= 256 else "gt_256"
    if kind in ("training", "fine_tuning"):
        return "one_node" if gpu_count <= 8 else "multi_node"
    return "all"


def conformal_spread(residuals: Iterable[float], coverage: float) -> float | None:
    """Split-conformal half-width of a band in relative terms (e^q - 1), or None with too few residuals."""
    # Lei et al. 2018: the ceil((n + 1) * coverage)-th smallest |log error| holds a new exchangeable point with at
    # least that probability; with fewer residuals than that rank needs, no finite band is promised.
    ordered = sorted(abs(value) for value in residuals)
    rank = math.ceil((len(ordered) + 1) * coverage)
    if rank > len(ordered):
        return None
    return math.exp(ordered[rank - 1]) - 1
