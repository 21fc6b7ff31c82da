"""The store contract every backend (SQLite, PostgreSQL) fulfils and is tested against."""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from ..types import (
    ApiKey,
    Chunk,
    Course,
    CourseActivity,
    Document,
    Job,
    Locator,
    SearchFilters,
    Session,
    Tenant,
    Turn,
)
from .classes import ClassStore
from .lti import LtiStore
from .mastery import MasteryStore, TopicMastery, WeakArea
from .profiles import Profile, Profiles
from .reuse import ReuseStore
from .summaries import Summaries, Summary

Vector = npt.NDArray[np.float32]


@dataclasses.dataclass(frozen=True)
class ChunkRow:
    """A chunk as the ingest pipeline hands it to the store."""

    id: str
    text: str
    section_path: tuple[str, ...]
    locator: Locator
    ordinal: int
    n_tokens: int
    terms: tuple[str, ...]
    vector_key: str
    content_hash: str = ""
    cues: tuple[tuple[float, float, int], ...] = ()


@dataclasses.dataclass(frozen=True)
class JobFile:
    """One staged file of a queued ingest job: its name in the job's folder, its metadata
    (FileMeta as JSON) and, once ingested, its report line (JSON)."""

    ordinal: int
    name: str
    meta: str
    result: str | None = None


@dataclasses.dataclass(frozen=True)
class QueueDepth:
    """The unfinished ingest jobs of one tenant."""

    tenant: str
    queued: int
    running: int
    oldest: float  # when the oldest of them was created


@dataclasses.dataclass(frozen=True)
class KeywordResult:
    """Keyword hits plus how much of the query's IDF mass the best hit matched."""

    hits: list[tuple[str, float]]
    evidence: float


@dataclasses.dataclass
class HybridResult:
    """Both retrievers' lists fused by the store itself (backends that search in SQL)."""

    fused: list[tuple[str, float]] = dataclasses.field(default_factory=list)  # best first
    ranks: dict[str, dict[str, int | None]] = dataclasses.field(default_factory=dict)
    scores: dict[str, dict[str, float | None]] = dataclasses.field(default_factory=dict)
    chunks: dict[str, Chunk] = dataclasses.field(default_factory=dict)
    evidence: float = 0.0  # the keyword evidence that weighted the keyword list
    milliseconds: float = 0.0


@dataclasses.dataclass(frozen=True)
class CourseState:
    """What a tutor turn needs of its course, read once: its settings, its chunks per
    language, the search version (None where results are not cached) and the generation
    that answer reuse keys its entries by."""

    course: Course
    languages: dict[str, int]
    version: int | None
    generation: int

    @property
    def chunks(self) -> int:
        return sum(self.languages.values())

    @property
    def search(self) -> tuple[str, int | None]:
        """The course's `Store.search_state`."""
        return self.course.language, self.version


@dataclasses.dataclass(frozen=True)
class LearnerState:
    """What a tutor turn needs of its student, read once: the profile, mastery estimates and
    active weak areas, this session's running summary and the last session summaries."""

    profile: Profile
    estimates: tuple[TopicMastery, ...]
    weak: tuple[WeakArea, ...]
    running: Summary | None
    latest: tuple[Summary, ...]  # newest first, this session's included


class Store(abc.ABC):
    """Courses, documents, chunks, vectors and the keyword index of one deployment."""

    classes: ClassStore  # live classes and their transcript events (store/classes.py)
    profiles: Profiles  # student profiles, studied topics, topic lists (store/profiles.py)
    summaries: Summaries  # running and session summaries (store/summaries.py)
    mastery: MasteryStore  # mastery per topic and weak areas (store/mastery.py)
    reuse: ReuseStore  # answered lecture questions, for reuse (store/reuse.py)
    lti: LtiStore  # LTI platforms, tool keys, LMS users and links (store/lti.py)

    @abc.abstractmethod
    def close(self) -> None: ...

    def scrub(self, tables: Sequence[str] = ()) -> None:
        """After an erasure, make what was deleted unreadable where the store can (SQLite
        empties its WAL; PostgreSQL vacuums the `tables` rows were deleted from); a store
        with nothing to do here does nothing."""
        return None

    @abc.abstractmethod
    def migrate(self) -> int:
        """Apply pending schema migrations (opening a store does this); return the version."""

    def connections(self) -> int:
        """Database connections this store holds open now."""
        return 1

    def reopen(self) -> Store:
        """A store on its own connection to the same data, for a background writer (so
        readers keep a consistent snapshot while it writes). Backends with a connection pool
        return themselves."""
        return self

    # courses
    @abc.abstractmethod
    def ensure_course(
        self, tenant: str, course: str, title: str = "", language: str = "en"
    ) -> Course: ...

    @abc.abstractmethod
    def set_course_policy(self, tenant: str, course: str, allow_solutions: bool) -> Course:
        """Whether students of `course` may see solution documents and full solutions."""

    @abc.abstractmethod
    def get_course(self, tenant: str, course: str) -> Course: ...

    def course_settings(self, tenant: str, course: str) -> Course:
        """The course without its document and chunk counts (backends make this cheap)."""
        return self.get_course(tenant, course)

    def course_language(self, tenant: str, course: str) -> str:
        """The course's language (backends override this with a cheaper query)."""
        return self.get_course(tenant, course).language

    def course_state(self, tenant: str, course: str) -> CourseState:
        """The course as a turn reads it, in one call (NotFoundError when it does not
        exist)."""
        settings = self.course_settings(tenant, course)
        language, version = self.search_state(tenant, course)
        return CourseState(dataclasses.replace(settings, language=language),
                           self.course_languages(tenant, course), version,
                           self.reuse.generation(tenant, course))

    def learner_state(self, tenant: str, course: str, student: str, session_id: str,
                      sessions: int) -> LearnerState:
        """The student as a turn reads them, in one call; `sessions` summaries at most."""
        return LearnerState(
            self.profiles.get(tenant, course, student),
            tuple(self.mastery.estimates(tenant, course, student)),
            tuple(self.mastery.weak_areas(tenant, course, student)),
            self.summaries.get(tenant, course, session_id, "running"),
            tuple(self.summaries.latest(tenant, course, student, sessions)))

    @abc.abstractmethod
    def course_languages(self, tenant: str, course: str) -> dict[str, int]:
        """The course's chunks per language of their documents, most first: a question in
        one of these languages is searched in it (retrieval.language.search_language)."""

    @abc.abstractmethod
    def explicit_language(self, tenant: str, course: str) -> str | None:
        """The language set for the course, or None when it follows its documents."""

    @abc.abstractmethod
    def set_course_language(self, tenant: str, course: str, language: str | None) -> Course:
        """Set the course's language and keep it whatever its documents are in; None: the
        course follows its documents again (the language most of its chunks are in, updated
        by every write to them)."""

    def search_state(self, tenant: str, course: str) -> tuple[str, int | None]:
        """The course's language and a version that changes with every write to its
        documents, so a process may keep search results per version; None where the store
        searches so fast that caching results is not worth it."""
        return self.course_language(tenant, course), None

    @abc.abstractmethod
    def list_courses(self, tenant: str) -> list[Course]: ...

    @abc.abstractmethod
    def remove_course(self, tenant: str, course: str) -> None: ...

    # documents
    @abc.abstractmethod
    def find_document(self, tenant: str, course: str, document_id: str) -> Document | None: ...

    @abc.abstractmethod
    def list_documents(self, tenant: str, course: str) -> list[Document]: ...

    @abc.abstractmethod
    def replace_document(self, document: Document, chunks: list[ChunkRow]) -> int:
        """Atomically store `document` with `chunks`, replacing any earlier version.

        Returns how many chunks were stored (identical chunks in one course are stored once).
        """

    @abc.abstractmethod
    def remove_document(self, tenant: str, course: str, document_id: str) -> None: ...

    # vectors (a cache keyed by embedding model and text hash)
    @abc.abstractmethod
    def get_vectors(self, model: str, keys: list[str]) -> dict[str, Vector]: ...

    @abc.abstractmethod
    def put_vectors(self, model: str, vectors: dict[str, Vector]) -> None: ...

    # search
    @abc.abstractmethod
    def keyword_search(
        self, filters: SearchFilters, terms: list[str], limit: int
    ) -> KeywordResult: ...

    @abc.abstractmethod
    def vector_search(
        self, filters: SearchFilters, model: str, vector: Vector, limit: int
    ) -> list[tuple[str, float]]: ...

    @abc.abstractmethod
    def get_chunks(self, filters: SearchFilters, chunk_ids: list[str]) -> dict[str, Chunk]: ...

    @abc.abstractmethod
    def chunk_at(self, filters: SearchFilters, document_id: str, ordinal: int) -> Chunk | None:
        """The chunk of a document at its position (`ordinal`), None past its end: what
        follows a passage (a theorem whose label closes one chunk and whose statement opens
        the next)."""

    # True where `hybrid_search` fuses in the store (it then needs the question's vector first)
    fuses_hybrid = False

    def hybrid_search(
        self, filters: SearchFilters, model: str, vector: Vector, terms: list[str],
        limit: int, fusion: str, rrf_k: int, top: int,
    ) -> HybridResult | None:
        """Both searches (`limit` candidates each) fused in the store, the `top` best with
        their chunks; None where the store leaves fusion to the retriever."""
        return None

    # sessions and turns (the tutor's memory of a conversation)
    @abc.abstractmethod
    def start_session(self, tenant: str, course: str, student: str) -> Session: ...

    @abc.abstractmethod
    def get_session(self, tenant: str, course: str, session_id: str) -> Session:
        """The session, or NotFoundError when it is not in this tenant and course."""

    @abc.abstractmethod
    def list_sessions(self, tenant: str, course: str, student: str) -> list[Session]:
        """A student's sessions in a course, most recent first."""

    @abc.abstractmethod
    def end_session(self, tenant: str, course: str, session_id: str) -> Session: ...

    def record_turn(self, turn: Turn, topics: Sequence[str] = ()) -> Turn:
        """Add a turn and count it for each of the course `topics` it was about (the
        student's profile), in one call; the stored turn, numbered."""
        stored = self.add_turn(turn)
        if topics:
            self.profiles.record_topics(stored.tenant, stored.course, stored.student, topics,
                                        f"{stored.session_id}:{stored.ordinal}",
                                        stored.created or None)
        return stored

    @abc.abstractmethod
    def add_turn(self, turn: Turn) -> Turn:
        """Append `turn` to its session (the ordinal is assigned by the store)."""

    @abc.abstractmethod
    def list_turns(
        self, tenant: str, course: str, session_id: str, last: int | None = None
    ) -> list[Turn]:
        """The session's turns in order (only the `last` ones when given)."""

    @abc.abstractmethod
    def count_exercise_turns(
        self, tenant: str, course: str, student: str, exercise_key: str
    ) -> int:
        """How many earlier turns this student spent on the exercise `exercise_key`."""

    @abc.abstractmethod
    def course_activity(self, tenant: str, course: str, since: float = 0.0,
                        examples: int = 20) -> CourseActivity:
        """Counts of students, sessions and turns since `since`, by category, intent, grade
        and level; recent questions the material did not cover; the busiest exercises."""

    # tenants, keys and enrolments (who may do what)
    @abc.abstractmethod
    def create_tenant(self, tenant: str, name: str = "") -> Tenant:
        """A new tenant, or ConflictError when the id is taken."""

    @abc.abstractmethod
    def ensure_tenant(self, tenant: str, name: str = "") -> Tenant: ...

    @abc.abstractmethod
    def get_tenant(self, tenant: str) -> Tenant: ...

    @abc.abstractmethod
    def list_tenants(self) -> list[Tenant]: ...

    @abc.abstractmethod
    def remove_tenant(self, tenant: str) -> None:
        """The tenant with its courses, keys and jobs."""

    @abc.abstractmethod
    def add_key(self, key: ApiKey) -> ApiKey: ...

    @abc.abstractmethod
    def find_key(self, key_id: str) -> ApiKey | None: ...

    @abc.abstractmethod
    def list_keys(self, tenant: str | None = None) -> list[ApiKey]: ...

    @abc.abstractmethod
    def revoke_key(self, key_id: str) -> ApiKey: ...

    @abc.abstractmethod
    def enroll(self, tenant: str, course: str, student: str) -> None: ...

    @abc.abstractmethod
    def unenroll(self, tenant: str, course: str, student: str) -> None: ...

    @abc.abstractmethod
    def list_students(self, tenant: str, course: str) -> list[str]: ...

    @abc.abstractmethod
    def student_courses(self, tenant: str, student: str) -> list[str]: ...

    @abc.abstractmethod
    def is_enrolled(self, tenant: str, course: str, student: str) -> bool: ...

    # ingest jobs
    @abc.abstractmethod
    def add_job(self, job: Job) -> Job: ...

    @abc.abstractmethod
    def update_job(self, job_id: str, **fields: object) -> None:
        """Set progress fields (status, files_done, stage, current, embedded, to_embed,
        report, error) of a job."""

    @abc.abstractmethod
    def get_job(self, tenant: str, job_id: str) -> Job: ...

    @abc.abstractmethod
    def list_jobs(self, tenant: str, course: str) -> list[Job]: ...

    @abc.abstractmethod
    def fail_unfinished_jobs(self, message: str) -> int:
        """Mark jobs left queued or running by a stopped process as failed."""

    # the ingest queue (jobs run by the API process itself, without Redis)
    @abc.abstractmethod
    def add_job_files(self, job_id: str, files: list[JobFile]) -> None:
        """Record the staged files of a new job."""

    @abc.abstractmethod
    def job_files(self, job_id: str) -> list[JobFile]:
        """The staged files of a job, in order, with the results of those ingested."""

    @abc.abstractmethod
    def set_job_file(self, job_id: str, ordinal: int, result: str) -> None:
        """Record the report line of one file of a job."""

    @abc.abstractmethod
    def queued_jobs(self) -> list[Job]:
        """Jobs waiting for an ingest thread, oldest first (every tenant)."""

    @abc.abstractmethod
    def claim_job(self, job_id: str) -> bool:
        """Mark a queued job running; False when it is no longer queued (another process
        took it, or it was cancelled)."""

    @abc.abstractmethod
    def requeue_jobs(self) -> int:
        """Put jobs a stopped process left running back in the queue (they resume at their
        first file without a result) and forget the files of finished jobs; return how many
        were requeued."""

    @abc.abstractmethod
    def cancel_job(self, tenant: str, job_id: str, message: str) -> Job:
        """Mark a queued or running job cancelled (NotFoundError outside the tenant,
        ConflictError once it has finished)."""

    @abc.abstractmethod
    def job_queue(self) -> list[QueueDepth]:
        """Unfinished jobs per tenant."""

    # moving a deployment to another store (coursetutor copy) without re-embedding
    @abc.abstractmethod
    def export_chunks(self, tenant: str, course: str, document_id: str) -> list[ChunkRow]:
        """The document's stored chunks as `replace_document` takes them, in order."""

    @abc.abstractmethod
    def iter_vectors(self, batch: int = 1000) -> Iterator[tuple[str, dict[str, Vector]]]:
        """Every cached vector as (model, {key: vector}) batches."""

    @abc.abstractmethod
    def all_sessions(self, tenant: str, course: str) -> list[Session]:
        """Every student's sessions in a course, most recent first."""

    @abc.abstractmethod
    def import_session(self, session: Session, turns: list[Turn]) -> None:
        """Store a session and its turns exactly as given (ids, ordinals and times kept)."""
