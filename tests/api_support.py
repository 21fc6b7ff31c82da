"""What the API tests share: an app over a copy of the sample course with a key for every kind
of caller, a scripted model, and Server-Sent Events parsing.

The app runs in-process under starlette's TestClient (which streams bodies for real, and
cancels the app when a response is closed early, as a client that goes away would).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from coursetutor.api import create_app
from coursetutor.api.access import mint_key
from coursetutor.api.ratelimit import RateLimiter
from coursetutor.config import Settings, load_settings
from coursetutor.errors import BackendError
from coursetutor.llm.base import LLM, Delta, GenParams, Message, Usage
from coursetutor.llm.router import Router
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.tutor import prompts
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, Sample, copy_db

COURSE = SAMPLE_COURSE
TENANT_B = "uni-b"
COURSE_B = "b-course"
STUDENT = "ana"  # enrolled in the sample course
OUTSIDER = "bob"  # a student of the same tenant, enrolled in nothing
CONCEPT = "How does the bisection method work?"
PDF_DOC = "lecture-02-convergence-pdf"
SOLUTION_DOC = "solutions-01-md"
LECTURE_DOC = "lecture-01-root-finding-md"
# callers with a working key, by name; "revoked" has a revoked key, and the BAD_KEYS no
# usable one
CALLERS = ("admin", "teacher", "student", "outsider", "teacher_b", "student_b")
BAD_KEYS = {"none": None, "malformed": "ct_not-a-key",
            "unknown": "ct_000000000000_" + "A" * 43}


# -- a scripted model ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Say:
    """One scripted answer: its pieces, then `error` (if any) instead of the final usage."""

    pieces: tuple[str, ...] = ()
    error: BaseException | None = None
    gate: threading.Event | None = None  # wait for it before each piece after the first


HELPER_PROMPTS = {prompts.load(name)[:40]: name
                  for name in ("categorize", "grade", "rewrite", "leak_rewrite", "translate")}
DEFAULTS = {"grade": '{"supported": true}', "categorize": "no verdict", "rewrite": ""}


class ScriptedLLM(LLM):
    """Answers from a script, records what it was asked, and whether its stream was closed."""

    backend = "scripted"

    def __init__(self, answers: Sequence[str | Say] = (),
                 check_error: BackendError | None = None) -> None:
        super().__init__("scripted-model")
        self.answers = list(answers)
        self.check_error = check_error
        self.kinds: list[str] = []
        self.yielded: list[str] = []  # answer pieces handed out
        self.answer_messages: list[list[Message]] = []  # what each answer call was sent
        self.started = threading.Event()  # an answer stream began
        self.closed = threading.Event()  # an answer stream was closed before its end
        self.finished = threading.Event()  # an answer stream left its generator, either way

    @classmethod
    def from_settings(cls, settings: Settings, model: str) -> ScriptedLLM:
        return cls()

    def check(self) -> None:
        if self.check_error is not None:
            raise self.check_error

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    @staticmethod
    def kind(messages: Sequence[Message]) -> str:
        if messages[0].role == "system":
            return "answer"
        return HELPER_PROMPTS.get(messages[0].content[:40], "unknown")

    def stream(self, messages: Sequence[Message], params: GenParams) -> Iterator[Delta]:
        kind = self.kind(messages)
        self.kinds.append(kind)
        if kind != "answer":
            yield Delta(DEFAULTS.get(kind, ""), Usage(3, 1), "stop")
            return
        self.answer_messages.append(list(messages))
        say = self.answers.pop(0) if self.answers else "Bisection halves the bracket [1]."
        if isinstance(say, str):
            say = Say((say,))
        self.started.set()
        try:
            for i, piece in enumerate(say.pieces):
                if i and say.gate is not None:
                    say.gate.wait(60)
                self.yielded.append(piece)
                yield Delta(piece)
            if say.error is not None:
                raise say.error
            yield Delta(usage=Usage(sum(len(m.content.split()) for m in messages),
                                    len(say.pieces)), finish="stop")
        except GeneratorExit:
            self.closed.set()
            raise
        finally:
            self.finished.set()


def scripted_router(settings: Settings, fake: LLM) -> Router:
    return Router(settings, factory=lambda task, model: fake)


# -- an app with keys for every caller -----------------------------------------------------


@dataclasses.dataclass
class Api:
    """A running app over a private copy of the sample course, and a key per caller."""

    client: TestClient
    app: FastAPI
    store: SQLiteStore
    settings: Settings
    keys: dict[str, str]  # caller -> the key's full text
    key_ids: dict[str, str]

    def headers(self, who: str, **extra: str) -> dict[str, str]:
        """Authorization for `who` (a caller or a BAD_KEYS name)."""
        text = self.keys[who] if who in self.keys else BAD_KEYS[who]
        return {**({"Authorization": f"Bearer {text}"} if text else {}), **extra}

    def call(self, who: str, method: str, path: str, **kwargs: Any) -> Any:
        headers = {**self.headers(who), **kwargs.pop("headers", {})}
        return self.client.request(method, path, headers=headers, **kwargs)

    def ask(self, who: str, question: str = CONCEPT, course: str = COURSE,
            **body: Any) -> Any:
        return self.call(who, "POST", f"/v1/courses/{course}/ask",
                         json={"question": question, **body})

    def metric(self, sample: str) -> float:
        """The value of one sample line of /metrics (0 when it is not there)."""
        for line in self.client.get("/metrics").text.splitlines():
            if line.startswith(sample + " "):
                return float(line.rsplit(" ", 1)[1])
        return 0.0


def prepare_data(sample: Sample, data_dir: Path) -> SQLiteStore:
    """A data directory holding a copy of the ingested sample course and its files."""
    copy_db(sample.db_path, data_dir / "coursetutor.db")
    shutil.copytree(sample.db_path.parent / "files", data_dir / "files")
    return SQLiteStore(data_dir / "coursetutor.db")


def add_callers(store: SQLiteStore) -> tuple[dict[str, str], dict[str, str]]:
    """Tenant B with a course, and one key per caller; returns (keys, key ids)."""
    store.create_tenant(TENANT_B, "University B")
    store.ensure_course(TENANT_B, COURSE_B, "B's own course", "en")
    store.enroll("default", COURSE, STUDENT)
    store.enroll(TENANT_B, COURSE_B, "bea")
    made = {
        "admin": mint_key(store, "default", "admin", name="root"),
        "teacher": mint_key(store, "default", "teacher", name="Prof. Rossi"),
        "student": mint_key(store, "default", "student", STUDENT),
        "outsider": mint_key(store, "default", "student", OUTSIDER),
        "teacher_b": mint_key(store, TENANT_B, "teacher"),
        "student_b": mint_key(store, TENANT_B, "student", "bea"),
        "revoked": mint_key(store, "default", "student", STUDENT),
    }
    store.revoke_key(made["revoked"][0].id)
    return {k: v[1] for k, v in made.items()}, {k: v[0].id for k, v in made.items()}


@contextlib.contextmanager
def open_api(sample: Sample, embedder: EmbeddingModel, data_dir: Path,
             fake: LLM | None = None, limiter: RateLimiter | None = None,
             router: Callable[[Settings], Router] | None = None,
             **settings: Any) -> Iterator[Api]:
    """An app over a copy of the sample course: passages only, or answered by `fake`."""
    store = prepare_data(sample, data_dir)
    keys, key_ids = add_callers(store)
    if fake is not None:
        settings.setdefault("llm_backend", "ollama")  # any server backend; `fake` answers
    settings.setdefault("llm_backend", "none")
    config = load_settings(env={}, data_dir=data_dir, **settings)
    built = router(config) if router else (
        scripted_router(config, fake) if fake is not None else None)
    app = create_app(config, workspace=Workspace(config, store=store, embedder=embedder),
                     router=built, limiter=limiter)
    try:
        with TestClient(app) as client:
            yield Api(client, app, store, config, keys, key_ids)
    finally:
        store.close()


# -- reading replies -----------------------------------------------------------------------


def sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The (event, data) pairs of a Server-Sent Events body; comments (keep-alives) skipped."""
    events = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line and not line.startswith(":")]
        if not lines:
            continue
        fields = dict(line.split(": ", 1) for line in lines)
        events.append((fields.get("event", "message"), json.loads(fields["data"])))
    return events


def shape(events: Sequence[tuple[str, Any]]) -> list[str]:
    """Event names with runs of tokens collapsed: ['meta', 'token', 'sources', 'done']."""
    names = [name for name, _ in events]
    return [n for i, n in enumerate(names) if i == 0 or n != "token" or names[i - 1] != n]


def coded(kind: str, message: str, code: str = "", /, **params: object) -> dict[str, Any]:
    """An `error` object as error_of returns it: its type, message, the code a page translates
    (the class's own, `kind`, unless the raise site names one) and that code's params."""
    return {"type": kind, "message": message, "code": code or kind, "params": params}


def error_of(response: Any) -> dict[str, Any]:
    """The `error` object of a JSON error reply, without its request id."""
    found: dict[str, Any] = dict(response.json()["error"])
    assert found.pop("request_id") == response.headers["x-request-id"]
    return found


def assert_clean(text: str, *paths: Path) -> None:
    """No stack trace and no server path in a reply."""
    assert "Traceback" not in text and 'File "' not in text
    for path in paths:
        assert str(path) not in text
