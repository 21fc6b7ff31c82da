"""The route fuzz of tests/test_route_fuzz.py: an app to fuzz, the requests sent to every
field of every route of its route table, and what each reply is checked for.

Every path, query and body field gets one value of each kind (a lone surrogate, a control
character, an empty, an oversized and an odd string, negative, huge and non-finite numbers,
wrong types; percent-encoded bad UTF-8 in paths and queries), picked with a fixed seed, so
every run sends the same requests.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import random
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from fastapi import routing
from fastapi.routing import APIRoute, APIWebSocketRoute
from fastapi.testclient import TestClient
from pydantic import BaseModel
from starlette.routing import Mount
from starlette.websockets import WebSocketDisconnect

import coursetutor
from coursetutor.api import create_app
from coursetutor.api.access import mint_key
from coursetutor.api.state import AppState
from coursetutor.api.validate import problem
from coursetutor.config import load_settings
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.types import FileMeta
from coursetutor.workspace import Workspace

from .api_support import COURSE, STUDENT, Api, add_callers

SEED = 27
SPARE = "zoe"  # a student the DELETE routes may erase and unenrol
DOOMED_COURSE = "doomed-course"  # a course DELETE may remove
DOOMED_TENANT = "doomed-tenant"
NOTE = (b"# Root finding\n\n## Bisection\n\nThe bisection method halves a bracket that holds a "
        b"sign change until the bracket is small enough.\n\n## Secant\n\nThe secant method "
        b"draws a line through the last two iterates and takes its zero as the next one.\n")
UNLIMITED = {f"api_rate_{role}_{window}": 10**6 for role in ("admin", "teacher", "student")
             for window in ("per_minute", "per_hour")} | {
    "api_cpu_key_seconds_per_minute": 0.0, "api_cpu_key_concurrent": 0}
EVENTS = "POST /v1/courses/{course}/classes/{class_id}/events"
EVENT = {"start": 1, "end": 2, "text": "Bisection halves the bracket.", "speaker": "Rossi"}


# -- the app -------------------------------------------------------------------------------


@dataclasses.dataclass
class Site:
    """The app and the ids its routes' valid requests name."""

    api: Api
    state: AppState
    ids: dict[str, str]  # path parameter -> a value that exists
    signed: dict[str, str]  # the query of a signed file URL

    @property
    def events(self) -> str:
        return f"/v1/courses/{COURSE}/classes/{self.ids['class_id']}/events"

    def stored_events(self) -> list[Any]:
        return self.api.store.classes.list_events("default", COURSE, self.ids["class_id"])

    def socket(self) -> Any:
        return self.api.client.websocket_connect(self.events.removesuffix("/events") +
                                                 "/stream", headers=self.api.headers("teacher"))


def _wait(api: Api, path: str, seconds: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        found: dict[str, Any] = api.call("teacher", "GET", path).json()
        if found["status"] not in ("queued", "running") or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def _prepare(api: Api) -> tuple[dict[str, str], dict[str, str]]:
    """Ids for the path parameters, made through the API, and a signed file URL's query."""
    course = f"/v1/courses/{COURSE}"
    live = api.call("teacher", "POST", f"{course}/classes", json={"title": "Live"}).json()
    doomed = api.call("teacher", "POST", f"{course}/classes", json={"title": "Doomed"}).json()
    session = api.ask("student", "How does the bisection method work?").json()["session_id"]
    job = api.call("teacher", "POST", f"{course}/documents", files=[
        ("files", ("secant.md", NOTE.replace(b"Root", b"More root"), "text/markdown"))]).json()
    assert _wait(api, f"/v1/jobs/{job['id']}")["status"] == "done"
    check = api.call("teacher", "POST", f"{course}/check", json={"answers": False}).json()
    assert _wait(api, f"{course}/check/{check['id']}")["status"] == "done"
    hit = api.call("student", "GET", f"{course}/search", params={"q": "bisection"}).json()
    url = urlsplit(hit["hits"][0]["url"])
    ref = url.path.split("/")[3]
    ids = {"course": COURSE, "class_id": live["id"], "doomed_class": doomed["id"],
           "student": STUDENT, "session_id": session, "job": job["id"],
           "check_id": check["id"], "ref": ref, "document": ref.split(":", 1)[1],
           "tenant": DOOMED_TENANT}
    return ids, dict(parse_qsl(url.query))


@contextlib.contextmanager
def open_site(embedder: EmbeddingModel, root: Path) -> Iterator[Site]:
    """An app over one small course (no sample ingest, so that the fuzz stays fast), the model
    off, the rate limits and compute budgets out of the way."""
    data_dir = root / "data"
    config = load_settings(env={}, data_dir=data_dir, llm_backend="none",
                           api_secret="fuzz-secret", **UNLIMITED)
    store = SQLiteStore(data_dir / "coursetutor.db")
    workspace = Workspace(config, store=store, embedder=embedder)
    workspace.create_course(COURSE, "Root finding", "en")
    (root / "roots.md").write_bytes(NOTE)
    workspace.ingest(COURSE, [(root / "roots.md", FileMeta(topic="roots"))])
    keys, key_ids = add_callers(store)
    store.ensure_course("default", DOOMED_COURSE, "Doomed", "en")
    store.enroll("default", COURSE, SPARE)
    store.create_tenant(DOOMED_TENANT, "Doomed")
    spare_key = mint_key(store, "default", "student", SPARE)[0].id
    app = create_app(config, workspace=workspace)
    try:
        with TestClient(app) as client:
            api = Api(client, app, store, config, keys, key_ids)
            ids, signed = _prepare(api)
            yield Site(api, app.state.coursetutor, ids | {"key_id": spare_key}, signed)
    finally:
        store.close()


# -- what is sent --------------------------------------------------------------------------

SURROGATE = "\ud800"
# body values by kind; each field gets one of each kind
BODY_KINDS: dict[str, list[Any]] = {
    "surrogate": [SURROGATE, "a\udfffb"],
    "control": ["\x00", "bell\x07", "\x1b[31mred", "del\x7f", "nel\x85", "tab\tand\nline"],
    "empty": ["", " "],
    "oversized": ["x" * 5000, "\u00e9" * 301, "x" * 100_001],
    "odd text": ["../../etc/passwd", "NaN", "-1", "9" * 400, "\u202eevil",
                 "<script>alert(1)</script>", "'; DROP TABLE x; --"],
    "negative": [-1, -0.5, -1e308, -(10**30)],
    "huge": [1e308, 10**30, 2**63],
    "not finite": [float("nan"), float("inf"), float("-inf")],
    "number": [0, 1.5],
    "wrong type": [None, True, [], {}, [1, "a"], {"a": {"b": 1}}],
}
# path and query values by kind, percent-encoded as sent
ENCODED_KINDS: dict[str, list[str]] = {
    "surrogate": ["%ED%A0%80", "%ED%BF%BF"],
    "bad UTF-8": ["%FF", "%C3%28", "%E2%82"],
    "control": ["%00", "bell%07", "%1B%5B31m", "%C2%85", "tab%09", "a%0Ab"],
    "not finite": ["nan", "NaN", "inf", "-Infinity"],
    "negative": ["-1", "-1e308"],
    "huge": ["1e308", "9" * 40, "9" * 5000],
    "empty": ["", "%20"],
    "oversized": ["x" * 5000],
    "odd": ["true", "%5B%5D", "..%2F..%2Fetc", "%E2%80%AE", "%25", "0"],
}
UNDECLARED = ["%ED%A0%80", "%00", "x" * 5000, "1"]  # a query parameter no route reads
# whole bodies: bad UTF-8, a CESU-8 surrogate, JSON that is not an object, numbers JSON
# allows but Python reads as infinite or refuses to read, nesting
RAW_BODIES = [b"", b"\xff\xfe\x00", b'{"x": "\xc3\x28"}', b'"\xed\xa0\x80"', b"{", b"null",
              b"[]", b'"text"', b"1e999", b"NaN", b"-Infinity", b"9" * 5000,
              b'{"x": ' + b"9" * 5000 + b"}", b"\x00", b"[" * 20 + b"]" * 20]

# valid bodies, by route; the fuzz changes one field at a time
BODIES: dict[str, dict[str, Any]] = {
    "POST /v1/tenants": {"id": "fuzz-tenant", "name": "Fuzz"},
    "POST /v1/keys": {"role": "student", "student": SPARE, "name": "fuzz", "tenant": None},
    "POST /v1/courses": {"id": "fuzz-course", "title": "Fuzz", "language": "en",
                         "allow_solutions": False},
    "PATCH /v1/courses/{course}": {"title": "Root finding", "allow_solutions": False,
                                   "language": "en", "retention_days": 0},
    "POST /v1/courses/{course}/check": {"k": 5, "sections": 2, "answers": False},
    "POST /v1/courses/{course}/ask": {"question": "How does the bisection method work?",
                                      "session_id": None, "level": 3, "student": STUDENT,
                                      "class_id": None},
    "POST /v1/chat/completions": {
        "model": COURSE, "stream": False, "session_id": None, "user": STUDENT,
        "messages": [{"role": "user", "content": "How does the secant method work?"},
                     {"role": "user", "content": [{"type": "text", "text": "And why?"}]}]},
    "PUT /v1/courses/{course}/topics": {"topics": ["bisection", "secant"]},
    "PATCH /v1/courses/{course}/students/{student}/profile": {
        "level": 2, "style": "step by step", "goals": "pass the exam", "language": "en",
        "resolve_weak_areas": [], "remove_topics": []},
    "POST /v1/courses/{course}/classes": {"title": "Fuzz class", "slides": None},
    "POST /v1/courses/{course}/classes/{class_id}/slide": {"page": 2},
    EVENTS: {**EVENT, "final": True},  # read by the route itself, through the same checks
    "POST /v1/lti/platforms": {
        "issuer": "https://lms.example.edu", "client_id": "fuzz-client", "deployment_ids": ["1"],
        "jwks_url": "https://lms.example.edu/jwks", "auth_login_url": "https://lms.example.edu/auth",
        "token_url": "https://lms.example.edu/token", "frame_origins": []},
    "PUT /v1/lti/platforms/{platform_id}/links": {"context": "ctx-1", "course": COURSE,
                                                  "grades": False, "topic": ""},
    "POST /v1/lti/registration-url": {"hours": 24},
}
LIST_FIELDS = ("resolve_weak_areas", "remove_topics")  # empty when valid: a member is fuzzed
FIELD_PREFIX = {EVENTS: "events.0."}  # how a route's refusal names the body's fields
# the LTI routes read the forms a browser posts from an LMS; each field is a token this tool
# or the platform signed, refused (401) unless its signature verifies
HAND_PARSED = {EVENTS, "POST /v1/courses/{course}/documents", "POST /lti/login",
               "POST /lti/launch", "POST /lti/deep-link"}
BODYLESS = {"PUT /v1/courses/{course}/students/{student}",
            "POST /v1/courses/{course}/sessions/{session_id}/end",
            "POST /v1/courses/{course}/classes/{class_id}/end",
            "POST /v1/courses/{course}/lti/roster"}
CUES = {"text/vtt": "WEBVTT\n\n00:00:{a}.000 --> 00:00:{b}.000\n{text}\n",
        "application/x-subrip": "1\n00:00:{a},000 --> 00:00:{b},000\n{text}\n"}
BAD_CUES = [("-01", "02", "negative"), ("05", "04", "backwards"), ("01", "02", "nul\x00"),
            ("01", "02", "bell\x07"), ("01", "02", "\x1f"), ("01", "02", "\x85"),
            ("01", "02", SURROGATE), ("01", "02", "x" * 4001), ("01", "99999999999", "huge"),
            ("01", "02", "")]
UPLOAD_FIELDS = {"type": "lecture", "topic": "roots", "difficulty": "2", "title": "Fuzz note",
                 "language": "en", "media_url": "https://example.org/v.mp4"}
FORM_KINDS = {**{k: v for k, v in BODY_KINDS.items() if isinstance(v[0], str)},
              "digits": ["99999", "\u00b2", "\u0663", "-1", "9" * 5000]}
ODD_FILES = [("../../etc/passwd", NOTE), ("\x00.md", NOTE), ("a" * 400 + ".md", NOTE),
             ("note.exe", NOTE), ("bad.md", b"\xff\xfe\x00# \xc3\x28"),
             ("nul.md", b"# N\x00L\n\nBisection\x07 halves it.\n")]
QUERIES: dict[str, dict[str, str]] = {
    "GET /v1/courses/{course}/search": {"q": "bisection bracket", "k": "3", "mode": "hybrid",
                                        "type": "lecture", "max_difficulty": "3"},
    "GET /v1/courses/{course}/students": {"idle_days": "14"},
    "GET /v1/courses/{course}/analytics": {"days": "30"},
    "GET /v1/courses/{course}/insights": {"limit": "10"},
    "GET /v1/courses/{course}/students/{student}/memory": {"limit": "5"},
    "GET /v1/courses/{course}/sessions": {"student": STUDENT},
}
SIGNED = "GET /v1/documents/{ref}/file"  # its query is the signed URL's
# who sends each route's requests: a teacher unless named here
ADMIN = {"POST /v1/tenants", "GET /v1/tenants", "DELETE /v1/tenants/{tenant}",
         "GET /v1/students/{student}/export", "DELETE /v1/students/{student}/data",
         "GET /v1/courses/{course}/students/{student}/export",
         "DELETE /v1/courses/{course}/students/{student}/data",
         "PATCH /v1/courses/{course}/students/{student}/profile",
         "GET /v1/lti/platforms", "POST /v1/lti/platforms",
         "DELETE /v1/lti/platforms/{platform_id}", "POST /v1/lti/registration-url"}
STUDENT_TOO = {"POST /v1/courses/{course}/ask", "POST /v1/chat/completions",
               "GET /v1/courses/{course}/search"}
# what the destructive routes are pointed at, so that the rest keeps its data
TARGETS = {"DELETE /v1/courses/{course}": {"course": DOOMED_COURSE},
           "DELETE /v1/courses/{course}/documents/{document}": {"course": DOOMED_COURSE},
           "DELETE /v1/courses/{course}/students/{student}": {"student": SPARE},
           "DELETE /v1/courses/{course}/students/{student}/data": {"student": SPARE},
           "DELETE /v1/students/{student}/data": {"student": SPARE},
           "POST /v1/courses/{course}/classes/{class_id}/end": {"class_id": "doomed_class"}}
DOCS = ("/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc")  # they name exceptions


@dataclasses.dataclass(frozen=True)
class Case:
    """One request of the fuzz and the field it changes: `query:k`, `body:messages.0.role`,
    `form:topic`, or `body` for the whole body."""

    route: str
    field: str
    method: str
    url: str
    who: str | None
    content: bytes | None = None
    content_type: str = "application/json"
    form: tuple[tuple[str, str], ...] | None = None  # a multipart upload: fields, one file
    file_name: str = "note.md"
    file_data: bytes = NOTE

    def send(self, client: TestClient, api: Api) -> Any:
        headers = api.headers(self.who) if self.who else {}
        if self.form is not None:
            # a value's bytes as a careless client sends them (a surrogate as CESU-8)
            fields = {k: v.encode("utf-8", "surrogatepass") for k, v in self.form}
            return client.request(self.method, self.url, headers=headers, data=fields,
                                  files=[("files", (self.file_name, self.file_data,
                                                    "text/markdown"))])
        if self.content is not None:
            headers = {**headers, "Content-Type": self.content_type}
        return client.request(self.method, self.url, headers=headers, content=self.content)

    @property
    def names(self) -> str | None:
        """The field a 422 of this case must name (None: any)."""
        kind, _, name = self.field.partition(":")
        return FIELD_PREFIX.get(self.route, "") + name if kind == "body" and name else (
            name or None)


@dataclasses.dataclass(frozen=True)
class Route:
    """One entry of the route table: its method, path and what it reads."""

    key: str  # "POST /v1/courses/{course}/ask"
    method: str
    path: str
    path_params: tuple[str, ...]
    query_params: tuple[str, ...]
    body: type[BaseModel] | None
    websocket: bool = False


def _model(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model of a body parameter (`Model | None` too)."""
    for candidate in (annotation, *getattr(annotation, "__args__", ())):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def route_table(app: Any) -> list[Route]:
    """Every route of the app, as FastAPI's route table lists it (included routers too)."""
    found = []
    for context in routing.iter_route_contexts(app.routes):
        route = context.original_route
        if isinstance(route, APIRoute | APIWebSocketRoute):
            dep = route.dependant
            bodies = [_model(p.field_info.annotation) for p in dep.body_params]
            methods = sorted(route.methods) if isinstance(route, APIRoute) else ["WS"]
            found += [Route(f"{method} {context.path}", method, context.path,
                            tuple(p.name for p in dep.path_params),
                            tuple(p.name for p in dep.query_params),
                            bodies[0] if bodies else None, method == "WS")
                      for method in methods]
        elif isinstance(route, Mount):
            found.append(Route(f"GET {context.path}/{{path}}", "GET", context.path + "/{path}",
                               ("path",), (), None))
        else:
            found.append(Route(f"GET {context.path}", "GET", context.path, (), (), None))
    return found


def leaves(value: Any, prefix: str = "") -> Iterator[str]:
    """The paths of a JSON value's fields (`messages`, `messages.0`, `messages.0.role` ...)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(
        value, list) else ()
    for key, member in items:
        path = f"{prefix}{key}"
        yield path
        yield from leaves(member, path + ".")


def replaced(body: Any, path: str, value: Any) -> Any:
    """A copy of `body` with the field at `path` set to `value`."""
    copy = json.loads(json.dumps(body))
    *parents, last = path.split(".")
    here = copy
    for part in parents:
        here = here[int(part)] if isinstance(here, list) else here[part]
    if isinstance(here, list):
        here[int(last)] = value
    else:
        here[last] = value
    return copy


class Fuzz:
    """The requests of the fuzz for every route of `site`'s app, in a seeded order."""

    def __init__(self, site: Site, rng: random.Random) -> None:
        self.site = site
        self.rng = rng

    def pick(self, kinds: dict[str, list[Any]]) -> list[Any]:
        """One value of each kind."""
        return [self.rng.choice(values) for values in kinds.values()]

    def url(self, route: Route, change: dict[str, str] | None = None,
            query: dict[str, str] | None = None) -> str:
        """The route's path with valid ids, `change` (encoded values) put in, and `query`."""
        ids = self.site.ids
        values = {name: quote(ids.get(name, "x"), safe=":") for name in route.path_params}
        for name, target in TARGETS.get(route.key, {}).items():
            values[name] = quote(ids.get(target, target), safe=":")
        path = route.path.format(**(values | (change or {})))
        return path + "?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else path

    def query(self, route: Route) -> dict[str, str]:
        valid = self.site.signed if route.key == SIGNED else QUERIES.get(route.key, {})
        return {k: quote(v, safe="") for k, v in valid.items()}

    def callers(self, route: Route) -> list[str | None]:
        if not route.path.startswith("/v1") or route.key == SIGNED:
            return [None]
        if route.key in ADMIN:
            return ["admin"]
        return ["teacher", "student"] if route.key in STUDENT_TOO else ["teacher"]

    def cases(self, routes: Iterable[Route]) -> list[Case]:
        found = [case for route in routes if not route.websocket
                 for who in self.callers(route) for case in self.of(route, who)]
        self.rng.shuffle(found)
        # the destructive routes last, so that the rest runs against data that is there
        return sorted(found, key=lambda c: c.route.startswith("DELETE") or c.route in TARGETS)

    def of(self, route: Route, who: str | None) -> Iterator[Case]:
        base = self.query(route)
        body = BODIES.get(route.key)
        content = json.dumps(body).encode() if body is not None else None
        for name in route.path_params:
            for value in self.pick(ENCODED_KINDS):
                yield Case(route.key, f"path:{name}", route.method,
                           self.url(route, {name: value}, base), who, content)
        for name in route.query_params:
            for value in self.pick(ENCODED_KINDS):
                yield Case(route.key, f"query:{name}", route.method,
                           self.url(route, query={**base, name: value}), who, content)
        for value in UNDECLARED:
            yield Case(route.key, "query:zz", route.method,
                       self.url(route, query={**base, "zz": value}), who, content)
        if route.key == "POST /v1/courses/{course}/documents":
            yield from self.uploads(route, who)
        elif body is not None:
            yield from self.bodies(route, who, body)
        if route.key == EVENTS:
            yield from self.cues(route, who)
        if route.method in ("POST", "PUT", "PATCH"):
            for raw in RAW_BODIES:
                yield Case(route.key, "body", route.method, self.url(route, query=base),
                           who, raw)

    def bodies(self, route: Route, who: str | None, body: dict[str, Any]) -> Iterator[Case]:
        url = self.url(route, query=self.query(route))
        declared = route.body.model_fields if route.body else {}
        paths = [*leaves(body), *(name for name in declared if name not in body)]
        for path in paths + [f"{name}.0" for name in LIST_FIELDS if name in body]:
            # an empty list of the valid body gets a member to change
            holder = {**body, path[:-2]: [None]} if path.endswith(".0") and path[
                :-2] in LIST_FIELDS else body
            for value in self.pick(BODY_KINDS):
                yield Case(route.key, f"body:{path}", route.method, url, who,
                           json.dumps(replaced(holder, path, value)).encode())
        for extra in self.pick(BODY_KINDS):  # a field the route does not know
            yield Case(route.key, "body", route.method, url, who,
                       json.dumps({**body, "zz": extra}).encode())

    def cues(self, route: Route, who: str | None) -> Iterator[Case]:
        """WebVTT and SubRip bodies: bad text, and times negative, huge or backwards."""
        url = self.url(route)
        for kind, template in CUES.items():
            for a, b, text in BAD_CUES:
                raw = template.format(a=a, b=b, text=text).encode("utf-8", "surrogatepass")
                yield Case(route.key, "body", route.method, url, who, raw, kind)
            for raw in (b"\xff\xfe", b"WEBVTT\n\n\xc3\x28", b"\x00" * 10):
                yield Case(route.key, "body", route.method, url, who, raw, kind)

    def uploads(self, route: Route, who: str | None) -> Iterator[Case]:
        """Every form field of an upload, then odd file names and bytes."""
        url = self.url(route)
        for name in UPLOAD_FIELDS:
            for value in self.pick(FORM_KINDS):
                yield Case(route.key, f"form:{name}", route.method, url, who,
                           form=tuple({**UPLOAD_FIELDS, name: value}.items()))
        for file_name, data in ODD_FILES:
            yield Case(route.key, "form", route.method, url, who,
                       form=tuple(UPLOAD_FIELDS.items()), file_name=file_name, file_data=data)

    def socket_messages(self) -> list[str | bytes]:
        """The captions WebSocket's messages: every event field changed, cues, raw bytes."""
        body = BODIES[EVENTS]
        found: list[str | bytes] = [json.dumps(replaced(body, path, value))
                                    for path in leaves(body) for value in self.pick(BODY_KINDS)]
        found += [template.format(a=a, b=b, text=text) for template in CUES.values()
                  for a, b, text in BAD_CUES]
        found += [raw for raw in RAW_BODIES if raw]
        self.rng.shuffle(found)
        return found


# -- what is checked -----------------------------------------------------------------------

PACKAGE = str(Path(coursetutor.__file__).parent.parent)
INTERNAL = re.compile(r"Traceback|File \"|\b[A-Z][A-Za-z]*(?:Error|Exception)\b|\.py\b|"
                      r"site-packages|sqlite3|pydantic")


class Watch:
    """Which tables of the store changed, read from a connection of its own: `PRAGMA
    data_version` tells at no cost whether another connection committed, and only then are
    the tables read."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        self.version = self._version()
        self.digests = self._digests()

    def _version(self) -> int:
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def _digests(self) -> dict[str, str]:
        found = {}
        tables = self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        for (table,) in tables.fetchall():  # names from the schema itself
            h = hashlib.blake2b()
            for row in self.db.execute(f'SELECT * FROM "{table}" ORDER BY rowid'):
                h.update(repr(row).encode())
            found[table] = h.hexdigest()
        return found

    def changed(self) -> list[str]:
        """The tables whose rows changed since the last call."""
        version = self._version()
        if version == self.version:
            return []
        self.version, before, self.digests = version, self.digests, self._digests()
        return sorted(t for t in before.keys() | self.digests.keys()
                      if before.get(t) != self.digests.get(t))

    def texts(self) -> Iterator[tuple[str, str]]:
        """Every text value the store holds, with its table."""
        for table in self.digests:
            for row in self.db.execute(f'SELECT * FROM "{table}"'):
                yield from ((table, v) for v in row if isinstance(v, str))


def settle(state: AppState, store: SQLiteStore) -> None:
    """Wait for the work an accepted request left running: a turn's last steps, an ingest
    job, a course check."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        jobs = [j for c in (COURSE, DOOMED_COURSE) for j in store.list_jobs("default", c)]
        check = state.checks.latest("default", COURSE)
        if not (state.asks.running or state.asks.waiting or
                any(j.status in ("queued", "running") for j in jobs) or
                (check is not None and check.status in ("queued", "running"))):
            return
        time.sleep(0.005)


def problems(where: str, status: int, text: str, json_reply: bool,
             server_paths: tuple[str, ...]) -> list[str]:
    """What is wrong with one reply (nothing when it is as it should be)."""
    found = []
    if status >= 500:
        found.append(f"{where}: {status} {text[:200]}")
    leak = INTERNAL.search(text) if json_reply or status >= 400 else None
    if leak:
        found.append(f"{where}: internal text {leak.group()!r} in {text[:200]}")
    if any(p in text for p in server_paths) or "Traceback" in text:
        found.append(f"{where}: a server path or a traceback in the reply")
    return found


def names_it(expected: str | None, error: dict[str, Any]) -> bool:
    """Whether a refusal's `fields` name the field a case changed (any, for a whole body);
    a field inside it or the list holding it count too (`events` for `events.0.text`)."""
    fields = [f["field"] for f in error.get("fields", [])]
    return bool(fields) and (expected is None or any(
        f == expected or f.startswith(expected + ".") or expected.startswith(f + ".")
        for f in fields))


@dataclasses.dataclass
class Report:
    """What one run of the fuzz sent and found."""

    requests: int = 0
    routes: int = 0
    seconds: float = 0.0
    failures: list[str] = dataclasses.field(default_factory=list)


def run(site: Site, seed: int = SEED) -> Report:
    """The fuzz: every case over HTTP, then the WebSocket's messages."""
    started = time.monotonic()
    api = site.api
    watch = Watch(api.settings.data_dir / "coursetutor.db")
    server_paths = (str(api.settings.data_dir), PACKAGE)
    fuzz = Fuzz(site, random.Random(seed))
    routes = route_table(api.app)
    cases = fuzz.cases(routes)
    report = Report(len(cases), len(routes))
    missed = {r.key for r in routes if not r.websocket} - {c.route for c in cases}
    report.failures += [f"{key}: not fuzzed" for key in sorted(missed)]
    for case in cases:
        response = case.send(api.client, api)
        where = f"{case.route} {case.field}"
        json_reply = response.headers.get("content-type", "").startswith(
            "application/json") and not case.route.endswith(DOCS)
        report.failures += problems(where, response.status_code, response.text, json_reply,
                                    server_paths)
        if response.status_code < 400:
            settle(site.state, api.store)
            watch.changed()
            continue
        changed = watch.changed()
        if changed:
            report.failures.append(f"{where}: refused ({response.status_code}) but {changed} "
                                   "changed")
        if response.status_code == 422 and not names_it(case.names, response.json()["error"]):
            report.failures.append(f"{where}: the 422 names {response.text[:200]}")
    messages = fuzz.socket_messages()
    report.requests += len(messages)
    report.failures += _socket(site, watch, messages, server_paths)
    report.failures += [f"{table} stores {text[:40]!r}" for table, text in watch.texts()
                        if problem(text, multiline=True)]
    report.seconds = time.monotonic() - started
    return report


def _socket(site: Site, watch: Watch, messages: list[str | bytes],
            server_paths: tuple[str, ...]) -> list[str]:
    """The captions WebSocket's messages, each answered; what went wrong."""
    failures: list[str] = []
    where = "WS"
    try:
        with site.socket() as ws:
            for message in messages:
                where = f"WS {str(message)[:60]!r}"
                ws.send_bytes(message) if isinstance(message, bytes) else ws.send_text(message)
                reply = ws.receive_json()
                error = reply.get("error")
                failures += problems(where, error["status"] if error else 200,
                                     json.dumps(reply), True, server_paths)
                if error is None:
                    settle(site.state, site.api.store)
                    watch.changed()
                elif watch.changed():
                    failures.append(f"{where}: refused but the store changed")
    except WebSocketDisconnect as exc:
        failures.append(f"{where}: the socket closed ({exc.code})")
    except Exception as exc:  # the route crashed: the test client raises its error
        failures.append(f"{where}: the socket's route failed ({exc!r})")
    return failures
