"""Live class sessions: start and end a class, feed it transcript events and slide changes.

`LiveClasses` is what the CLI and the API use. Every change to a running class (its events,
a teacher's slide change, its end) goes through the class's serial queue, so they apply in
the order they arrived; ending a class flushes its chunker into the class document first.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence

from ..errors import ConflictError, InputError, NotFoundError
from ..store.classes import ClassEvent, LiveClass, TranscriptEvent
from ..store.redis import RedisLink
from ..workspace import Workspace
from .pipeline import (
    ClassPipeline,
    LagFn,
    SlideFn,
    optional_module,
    slide_following,
    slide_pages,
)
from .queue import Job, JobResult, RedisSerialQueues, SerialQueues

__all__ = ["ClassStatus", "LiveClasses", "default_title"]

WAIT_SECONDS = 60.0  # a request waits this long for its class's queue to reach it


def default_title(when: float | None = None) -> str:
    """'Class 2025-03-14 10:05' (local time)."""
    return time.strftime("Class %Y-%m-%d %H:%M", time.localtime(when))


@dataclasses.dataclass(frozen=True)
class ClassStatus:
    """A class with what it holds so far."""

    live: LiveClass
    events: int  # the number of its last event
    chunks: int  # chunks of its transcript document
    last: ClassEvent | None  # its last event
    slide_following: str = "teacher"  # how its slide is found (`pipeline.slide_following`)


class LiveClasses:
    """Live classes over one workspace (its tenants' views share store and embedder)."""

    def __init__(self, workspace: Workspace, link: RedisLink | None = None,
                 on_lag: LagFn | None = None, on_slide: SlideFn | None = None,
                 wait_seconds: float = WAIT_SECONDS) -> None:
        self.workspace = workspace
        self.wait_seconds = wait_seconds
        self._views: dict[str, Workspace] = {}
        self._lock = threading.Lock()
        self._following_of: dict[tuple[str, str, str, str], str] = {}
        self.pipeline = ClassPipeline(self.workspace_for, on_lag, on_slide)
        workers = workspace.settings.live_queue_workers
        self.queues: SerialQueues = (RedisSerialQueues(self.pipeline.handle, link, workers)
                                     if link else SerialQueues(self.pipeline.handle, workers))

    def workspace_for(self, tenant: str) -> Workspace:
        if tenant == self.workspace.tenant:
            return self.workspace
        with self._lock:
            if tenant not in self._views:
                self._views[tenant] = self.workspace.for_tenant(tenant)
            return self._views[tenant]

    def close(self) -> None:
        self.queues.close()

    def start(self, tenant: str, course: str, title: str = "",
              slides: str | None = None) -> LiveClass:
        """Start a class of the course, optionally following one of its documents as the
        slide deck."""
        store = self.workspace.store
        store.course_settings(tenant, course)
        if slides and store.find_document(tenant, course, slides) is None:
            raise NotFoundError(f"document {slides!r} does not exist in course {course!r}",
                                code="document_not_found", document=slides)
        return store.classes.start_class(tenant, course, title.strip() or default_title(),
                                         slides or None)

    def running(self, tenant: str, course: str, class_id: str) -> LiveClass:
        """The class, if it is still running (ConflictError once it has ended)."""
        live = self.workspace.store.classes.get_class(tenant, course, class_id)
        if not live.running:
            raise ConflictError(f"class {class_id!r} has ended", code="class_ended",
                                klass=class_id)
        return live

    def current(self, tenant: str, course: str) -> LiveClass:
        """The course's one running class (InputError when none or several run)."""
        found = self.workspace.store.classes.list_classes(tenant, course, running=True)
        if len(found) != 1:
            which = "no class is" if not found else f"{len(found)} classes are"
            raise InputError(f"{which} running in course {course!r}; name the class")
        return found[0]

    def post(self, tenant: str, course: str, class_id: str,
             events: Sequence[TranscriptEvent], received: float | None = None) -> JobResult:
        """Add events to a running class; returns once they are searchable."""
        self.running(tenant, course, class_id)
        if not events:
            raise InputError("no events to add")
        return self._run(Job(tenant, course, class_id, "events", tuple(events),
                             received=received or time.time()))

    def set_slide(self, tenant: str, course: str, class_id: str, page: int) -> LiveClass:
        """The teacher's presentation moved to `page`: it overrides the tracked slide."""
        self.running(tenant, course, class_id)
        if page < 1:
            raise InputError(f"a slide page is 1 or more, got {page}", code="invalid_slide_page",
                             page=page)
        self._run(Job(tenant, course, class_id, "slide", page=page, received=time.time()))
        return self.workspace.store.classes.get_class(tenant, course, class_id)

    def end(self, tenant: str, course: str, class_id: str) -> LiveClass:
        """End the class once the events before this call are in (ending twice is fine)."""
        live = self.workspace.store.classes.get_class(tenant, course, class_id)
        if live.running:
            self._run(Job(tenant, course, class_id, "end", received=time.time()))
        return self.workspace.store.classes.get_class(tenant, course, class_id)

    def _run(self, job: Job) -> JobResult:
        self.queues.submit(job)
        return self.queues.wait(job.id, self.wait_seconds).unwrap()

    def status(self, tenant: str, course: str, class_id: str) -> ClassStatus:
        store = self.workspace.store
        live = store.classes.get_class(tenant, course, class_id)
        seq = store.classes.last_seq(tenant, course, class_id)
        last = store.classes.list_events(tenant, course, class_id, since=seq - 1) if seq else []
        document = store.find_document(tenant, course, live.document_id)
        return ClassStatus(live, seq, document.chunks if document else 0,
                           last[-1] if last else None, self._following(live))

    def _following(self, live: LiveClass) -> str:
        """How the class finds its slide, remembered per version of its deck."""
        deck = (self.workspace.store.find_document(live.tenant, live.course,
                                                   live.slides_document_id)
                if live.slides_document_id else None)
        key = (live.tenant, live.course, deck.id, deck.content_hash) if deck else None
        if key is None:
            return "teacher"
        if key not in self._following_of:
            pages = slide_pages(self.workspace, live)
            tracker = optional_module("slides") is not None
            self._following_of[key] = slide_following(pages, tracker)
        return self._following_of[key]
