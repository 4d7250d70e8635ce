"""What checking a memory found, and what saving a damaged one saved."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CheckReport:
    chunks: int = 0
    vectors: int = 0
    problems: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    #: SQLite found damaged pages: nothing can be repaired in place, only saved.
    damaged: bool = False
    #: For a damaged file: rows still readable per table ("what can be saved").
    readable: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        if self.damaged:
            return False
        return not self.problems or len(self.repaired) == len(self.problems)

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "ok": self.ok,
            "chunks": self.chunks,
            "vectors": self.vectors,
            "problems": self.problems,
            "repaired": self.repaired,
            "damaged": self.damaged,
        }
        if self.damaged:
            data["readable"] = self.readable
        return data


@dataclass
class RecoveryReport:
    """What ``recover`` saved into the new file, per table, and what it could not."""

    path: str
    saved: dict[str, int] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    readded: list[str] = field(default_factory=list)  # KB documents re-chunked from their text
    incomplete: list[str] = field(default_factory=list)  # still missing chunks

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "saved": self.saved,
            "unreadable": self.unreadable,
            "readded": self.readded,
            "incomplete": self.incomplete,
        }


@dataclass(frozen=True)
class CompactReport:
    """What compacting a memory gave back (``Store.compact``)."""

    #: cached vectors of texts no chunk holds any more
    vectors_dropped: int
    #: the memory's size on disk before (file and WAL, or tables)
    bytes_before: int
    #: its size once compacted (the file alone)
    bytes_after: int
    #: on disk right after compacting (file and WAL): more than ``bytes_after`` while
    #: reads begun before the rewrite keep it in the WAL (``settled`` is False then);
    #: the file shrinks at the first checkpoint after they end
    bytes_on_disk: int
    settled: bool
