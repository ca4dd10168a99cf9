"""Quiet hours: whether a moment falls in a person's quiet hours, and when those end.

A person's :class:`~countersign.store.workspaces.QuietHours` are two local times of day and an IANA
time zone; while they run, no card email goes out (the notification waits, and the email goes out
when they end). The start counts as quiet, the end does not; an end before the start runs past
midnight. Daylight saving time is the zone's: on a day the clocks skip the end time, the quiet
hours end at the moment the skipped time maps to (the zone's offset before the change).
"""

from __future__ import annotations

import logging
from datetime import datetime, time as clock_time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..store.workspaces import QuietHours

log = logging.getLogger("countersign.notify")


def _minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def quiet_until(quiet: QuietHours | None, now: int) -> int | None:
    """If ``now`` (epoch seconds) falls in ``quiet``, the epoch second they end; else None."""
    if quiet is None:
        return None
    try:
        zone = ZoneInfo(quiet.zone)
    except (ZoneInfoNotFoundError, ValueError):  # checked when stored; this machine lacks the zone
        log.warning("quiet hours in the unknown time zone %r are not applied", quiet.zone)
        return None
    local = datetime.fromtimestamp(now, zone)
    minute = local.hour * 60 + local.minute
    start, end = _minutes(quiet.start), _minutes(quiet.end)
    if start < end:
        if not start <= minute < end:
            return None
        end_day = local.date()
    else:  # runs past midnight
        if start <= minute:
            end_day = local.date() + timedelta(days=1)
        elif minute < end:
            end_day = local.date()
        else:
            return None
    ends = int(datetime.combine(end_day, clock_time(end // 60, end % 60), tzinfo=zone).timestamp())
    return ends if ends > now else None


def local_time(at: int, zone_name: str) -> str:
    """``at`` as ``HH:MM`` in ``zone_name`` (for what the test email says)."""
    return datetime.fromtimestamp(at, ZoneInfo(zone_name)).strftime("%H:%M")
