"""The spool: recommendations still waiting for the database at shutdown, kept on local disk for the next start."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

log = logging.getLogger(__name__)


class Spooled(msgspec.Struct, frozen=True):
    """One waiting recommendation as a spool file holds it (one JSON document a line)."""

    id: str
    catalog_version: str
    request: dict[str, Any]
    response: msgspec.Raw
    created_at: datetime


_decoder = msgspec.json.Decoder(Spooled)


class Spool:
    """A folder of spool files, one per process that stopped with recommendations waiting (workers share it)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._claimed: list[Path] = []

    def write(self, entries: Iterable[Spooled]) -> int:
        """Write the entries to a file of this process's own; the files claimed earlier are then released."""
        lines = [msgspec.json.encode(entry) + b"\n" for entry in entries]
        name = f"pending-{os.getpid()}-{uuid.uuid4().hex[:12]}.jsonl"
        self.folder.mkdir(parents=True, exist_ok=True)
        # Written beside and renamed into place, so a crash mid-write leaves no half file that looks complete.
        partial = self.folder / f".{name}.partial"
        partial.write_bytes(b"".join(lines))
        partial.replace(self.folder / name)
        self.release()
        return len(lines)

    def claim(self) -> Iterator[Spooled]:
        """The entries of every spool file not claimed by another process; kept on disk until release()."""
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("pending-*.jsonl")):
            claimed = path.with_name(f".claimed-{os.getpid()}-{uuid.uuid4().hex[:12]}-{path.name}")
            try:
                # Renaming is atomic: of several processes starting together, one takes each file.
                path.rename(claimed)
            except FileNotFoundError:
                continue
            self._claimed.append(claimed)
            for number, line in enumerate(claimed.read_bytes().splitlines(), 1):
                try:
                    yield _decoder.decode(line)
                except msgspec.DecodeError as error:
                    log.error("spool %s line %d unreadable, skipped: %s", path, number, error)

    @property
    def holds_claims(self) -> bool:
        return bool(self._claimed)

    def release(self) -> None:
        """Everything claimed is stored (or spooled again): delete the claimed files."""
        for path in self._claimed:
            path.unlink(missing_ok=True)
        self._claimed = []
