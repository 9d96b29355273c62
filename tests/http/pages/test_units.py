"""Sizes, durations and times as the pages show them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from app.http.pages.units import duration, moment, size


def test_sizes_in_binary_multiples() -> None:
    assert (size(512), size(262_144), size(1_048_576), size(1_572_864)) == ("512 bytes", "256 kB", "1 MB", "1.5 MB")


def test_durations_in_the_unit_that_reads_best() -> None:
    assert [duration(s) for s in (1, 15, 300, 3600, 86_400, 604_800)] == [
        "1 s", "15 s", "5 min", "60 min", "24 hours", "7 days"
    ]  # fmt: skip


def test_times_in_utc_to_the_minute_from_datetimes_and_iso_strings() -> None:
    local = datetime(2026, 12, 3, 14, 40, 59, tzinfo=timezone(timedelta(hours=1)))
    assert moment(local) == moment("2026-12-03T13:40:00.250000Z") == "2026-12-03 13:40 UTC"
    assert moment(datetime(2026, 12, 3, 13, 40, tzinfo=UTC)) == "2026-12-03 13:40 UTC"
    assert moment(None) == "—" and moment("not a time") == "not a time"
