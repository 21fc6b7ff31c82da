"""Replaying a recorded transcript into a running class, in real time or faster.

Each sentence is posted when it has been said (its end time, divided by the speed); the
sentences that come due while the previous post is still being processed go in together,
as a captioning tool that buffers would send them. `lags` are, per sentence, the seconds
from when it was said (its end, on the replay's clock) to searchable (its post returning);
at speed 0, from its post.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

from ..store.classes import TranscriptEvent
from .session import LiveClasses

ProgressFn = Callable[[int, int], None]


@dataclasses.dataclass
class ReplayReport:
    """What a replay did."""

    events: int = 0
    posts: int = 0
    seconds: float = 0.0
    lags: list[float] = dataclasses.field(default_factory=list)

    def percentile(self, q: float) -> float:
        """The q-th percentile (0-100) of the lags, nearest rank."""
        if not self.lags:
            return 0.0
        ordered = sorted(self.lags)
        return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def replay(live: LiveClasses, tenant: str, course: str, class_id: str,
           events: Sequence[TranscriptEvent], speed: float = 1.0,
           progress: ProgressFn | None = None,
           sleep: Callable[[float], None] = time.sleep) -> ReplayReport:
    """Post `events` (in time order) to the class as they would have been said; `speed` 0
    posts them as fast as they are taken."""
    report = ReplayReport()
    if not events:
        return report
    origin = events[0].start
    started = time.monotonic()

    def due(k: int) -> float:
        return (events[k].end - origin) / speed if speed > 0 else 0.0

    i = 0
    while i < len(events):
        wait = due(i) - (time.monotonic() - started)
        if wait > 0:
            sleep(wait)
        now = time.monotonic() - started
        j = i + 1
        while speed > 0 and j < len(events) and due(j) <= now:
            j += 1
        live.post(tenant, course, class_id, events[i:j], received=time.time())
        done = time.monotonic() - started
        # from when each sentence was said (speed 0: from its post) to searchable
        report.lags += [done - (due(k) if speed > 0 else now) for k in range(i, j)]
        report.events += j - i
        report.posts += 1
        i = j
        if progress is not None:
            progress(i, len(events))
    report.seconds = time.monotonic() - started
    return report
