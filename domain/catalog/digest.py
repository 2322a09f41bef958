"""The catalog version: a sum of per-record digests, so one offer's change moves it by a difference a writer can add.

A hash of the whole catalog can only be computed by a writer that holds every table still, which made each offer
write wait for all others across the cluster. A sum of digests (a multiset hash) is the same for the same content
whatever the order, and a writer that replaces offer A by A' adds digest(A') - digest(A) to the stored sum in one
statement, while other writers do the same for other offers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import msgspec

from domain.catalog.records import Offer

# Two digests below 2**62 add up below 2**63: the sum fits the signed 64-bit integer column of every store before
# it is reduced.
DIGEST_MODULUS = 2**62
_encoder = msgspec.json.Encoder()


def digest(payload: Any) -> int:
    """A 62-bit digest of a record (or of a list of records) as its JSON encoding."""
    return int.from_bytes(hashlib.sha256(_encoder.encode(payload)).digest()[:8], "big") % DIGEST_MODULUS


def offers_digest(offers: Iterable[Offer]) -> int:
    """The sum of the offers' digests, reduced."""
    return sum(digest(offer) for offer in offers) % DIGEST_MODULUS


def structure_digest(gpus: Any, systems: Any, providers: Any, models: Any) -> int:
    """The digest of everything but the offers (the tables offers reference, and the models)."""
    return digest([gpus, systems, providers, models])


def version_of(structure: int, offers: int) -> str:
    """The catalog version: both digests as one 16-digit hexadecimal number."""
    return f"{(structure + offers) % DIGEST_MODULUS:016x}"


def offers_delta(added: Iterable[Offer], removed: Iterable[Offer]) -> int:
    """What replacing `removed` by `added` adds to the offers' digest, as a non-negative number below the modulus."""
    return (offers_digest(added) - offers_digest(removed)) % DIGEST_MODULUS


def deltas_by_gpu(added: Iterable[Offer], removed: Iterable[Offer]) -> dict[str, int]:
    """What replacing `removed` by `added` adds to each GPU's offers' digest (each GPU's sum, not reduced)."""
    deltas: dict[str, int] = {}
    for offer in added:
        deltas[offer.gpu] = deltas.get(offer.gpu, 0) + digest(offer)
    for offer in removed:
        deltas[offer.gpu] = deltas.get(offer.gpu, 0) - digest(offer)
    return deltas
