"""The spool: recommendations waiting for the database, journaled to local disk before the client is answered."""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any

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


def _locked(path: Path, mode: str) -> IO[bytes] | None:
    """The file opened and exclusively locked, or None when a live process holds it (or it is gone).

    The lock dies with its process, SIGKILL included, so a file nobody holds belongs to a process that stopped.
    """
    try:
        handle = path.open(mode)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


def _sync_folder(folder: Path) -> None:
    """Make a new or renamed name in the folder durable, as fsync does for the file's contents."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class Spool:
    """A folder of spool files, each held (locked) by the one live process that writes or took it up."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._claimed: list[tuple[Path, IO[bytes]]] = []
        self._journal: tuple[Path, IO[bytes]] | None = None
        self._lock = threading.Lock()

    def _name(self) -> str:
        return f"pending-{os.getpid()}-{uuid.uuid4().hex[:12]}.jsonl"

    def append(self, entries: Iterable[Spooled]) -> int:
        """Add the entries to this process's journal and fsync it: once this returns they outlive a SIGKILL."""
        data = b"".join(msgspec.json.encode(entry) + b"\n" for entry in entries)
        if not data:
            return 0
        with self._lock:
            if self._journal is None:
                self.folder.mkdir(parents=True, exist_ok=True)
                path = self.folder / self._name()
                opened: IO[bytes] = path.open("ab")
                fcntl.flock(opened, fcntl.LOCK_EX)
                _sync_folder(self.folder)
                self._journal = (path, opened)
            journal = self._journal[1]
            journal.write(data)
            journal.flush()
            os.fsync(journal.fileno())
        return data.count(b"\n")

    def discard_journal(self) -> None:
        """Everything journaled is stored (or spooled again by write()): delete the journal."""
        with self._lock:
            journal, self._journal = self._journal, None
        if journal is not None:
            journal[0].unlink(missing_ok=True)
            journal[1].close()

    def write(self, entries: Iterable[Spooled]) -> int:
        """Write the entries to a file of this process's own; the journal and the files claimed earlier go."""
        lines = [msgspec.json.encode(entry) + b"\n" for entry in entries]
        name = self._name()
        self.folder.mkdir(parents=True, exist_ok=True)
        # Written beside and renamed into place, so a crash mid-write leaves no half file that looks complete.
        partial = self.folder / f".{name}.partial"
        with partial.open("wb") as handle:
            handle.write(b"".join(lines))
            handle.flush()
            os.fsync(handle.fileno())
        partial.replace(self.folder / name)
        _sync_folder(self.folder)
        self.discard_journal()
        self.release()
        return len(lines)

    def claim(self) -> Iterator[Spooled]:
        """The entries of every spool file no live process holds; kept on disk (and held) until release().

        That includes the journal of a process that was killed and files another process took up and then died
        holding.
        """
        if not self.folder.is_dir():
            return
        paths = sorted([*self.folder.glob("pending-*.jsonl"), *self.folder.glob(".claimed-*.jsonl")])
        for path in paths:
            handle = _locked(path, "rb")
            if handle is None:
                continue
            claimed = path.with_name(f".claimed-{os.getpid()}-{uuid.uuid4().hex[:12]}-{path.name.lstrip('.')}")
            try:
                # Renaming keeps the lock (it is the inode's): the file stays this process's under its new name.
                path.rename(claimed)
            except FileNotFoundError:
                handle.close()
                continue
            self._claimed.append((claimed, handle))
            for number, line in enumerate(handle.read().splitlines(), 1):
                try:
                    yield _decoder.decode(line)
                except msgspec.DecodeError as error:
                    # A line cut short by a crash mid-append was never acknowledged; the rest are read.
                    log.error("spool %s line %d unreadable, skipped: %s", path, number, error)

    @property
    def holds_claims(self) -> bool:
        return bool(self._claimed)

    def release(self) -> None:
        """Everything claimed is stored (or spooled again): delete the claimed files."""
        for path, handle in self._claimed:
            path.unlink(missing_ok=True)
            handle.close()
        self._claimed = []
