"""The buckets and definitions of the public statistics (``stats.yaml``), loaded and checked once.

The failure buckets are data: each names the status classes and reason keys
(:mod:`app.probe.reasons`) it takes; a reason key is looked up before its status class, so a
reason can be taken out of its class's bucket (``rate_limited`` out of ``4xx`` into ``429``).
Loading refuses a file where a status or reason is unknown or taken twice.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

import yaml

from app.probe.reasons import REASONS, STATUSES

#: Status classes of a server that is up (not a failure).
UP: Final = frozenset({"ok", "auth"})


@dataclass(frozen=True)
class Bucket:
    """One failure bucket: its key, label, definition and what it takes."""

    key: str
    label: str
    definition: str
    statuses: frozenset[str]
    reasons: frozenset[str]


@dataclass(frozen=True)
class Figures:
    """The loaded file (see the module docs)."""

    buckets: tuple[Bucket, ...]
    tool_counts: tuple[int, ...]
    protocol_versions: int
    definitions: dict[str, str]

    def bucket_of(self, status: str, reason: str) -> str | None:
        """The key of the failure bucket of a run with ``status`` and ``reason`` (``None``: up)."""
        if status in UP:
            return None
        for bucket in self.buckets:
            if reason in bucket.reasons:
                return bucket.key
        for bucket in self.buckets:
            if status in bucket.statuses:
                return bucket.key
        return None

    def tool_bucket(self, count: int) -> int:
        """The index of the tool count bucket ``count`` falls in."""
        index = 0
        for i, bound in enumerate(self.tool_counts):
            if count >= bound:
                index = i
        return index

    def tool_labels(self) -> list[str]:
        """Each tool count bucket's label: ``"2–5"``, the last one ``"101+"``."""
        bounds = self.tool_counts
        labels = []
        for i, low in enumerate(bounds):
            high = bounds[i + 1] - 1 if i + 1 < len(bounds) else None
            labels.append(f"{low}+" if high is None else str(low) if high == low else f"{low}–{high}")
        return labels


def _bucket(entry: dict[str, Any]) -> Bucket:
    statuses, reasons = frozenset(entry.get("statuses") or ()), frozenset(entry.get("reasons") or ())
    if unknown := (statuses - set(STATUSES)) | (reasons - set(REASONS)):
        raise ValueError(f"stats.yaml: unknown status or reason {sorted(unknown)}")
    if statuses & UP or {r for r in reasons if REASONS[r][0] in UP}:
        raise ValueError("stats.yaml: a failure bucket takes an up status")
    return Bucket(str(entry["key"]), str(entry["label"]), " ".join(str(entry["definition"]).split()), statuses, reasons)


@functools.cache
def figures() -> Figures:
    """The file, loaded once."""
    document = yaml.safe_load(resources.files("app.stats").joinpath("stats.yaml").read_text("utf-8"))
    buckets = tuple(_bucket(entry) for entry in document["failures"])
    for field in ("statuses", "reasons"):
        taken = [item for bucket in buckets for item in getattr(bucket, field)]
        if len(taken) != len(set(taken)):
            raise ValueError(f"stats.yaml: a {field[:-1]} is in two buckets")
    bounds = tuple(int(bound) for bound in document["tool_counts"])
    if bounds[0] != 0 or list(bounds) != sorted(set(bounds)):
        raise ValueError("stats.yaml: tool_counts must rise from 0")
    definitions = {str(key): " ".join(str(text).split()) for key, text in document["definitions"].items()}
    return Figures(buckets, bounds, int(document["protocol_versions"]), definitions)
