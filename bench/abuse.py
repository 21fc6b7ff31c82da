"""The standing abuse suite: a real `coursetutor serve` on 127.0.0.1, three tenants, and what an
attacker or a careless neighbour would do to it. Bounded loops; it stops by itself.

    python bench/abuse.py [--quick] [--json OUT] [--server-log PATH] [--keep] [--store URL]

Phases, each printing its figures:

1. **Isolation**: three tenants (A has the sample course, B and C a course each, every tenant
   a document holding a secret marker, a finished job, a session and a signed file URL). From
   every tenant's teacher and student keys, every route is aimed at the other tenants' courses,
   documents, jobs, sessions and files (also with `X-Tenant` headers, which only admins may
   use), ids are guessed, and the other tenants' signed URLs are replayed tampered (tenant,
   document, expiry, signature, staff flag, key id) with and without a key. A leak is a `2xx`
   where a refusal is due, or any body holding another tenant's marker, job, session or key
   id. Then the vector-cache side channel: B uploads A's secret sentence exactly and a wrong
   guess; their reports must be equal. >= 10,000 requests (1,000 with --quick).
2. **Fuzzing**: malformed requests on every route: junk, lone surrogates, control characters
   and over-long values in path, query, JSON and form fields, wrong JSON types, deep and broken
   JSON, broken multipart bodies, strange file names and numbers. Counts `5xx`. >= 10,000
   requests (1,000 with --quick).
3. **Noisy neighbour**: tenant B's p95 latency of short searches (each query new, so it is
   embedded) idle, then while tenant A's student sends maximum-length queries on 8 connections
   and A's teacher uploads a large file. Reports the ratio (target <= 3x).
4. **SIGKILL during ingest**: >= 50 times (3 with --quick) the server is started, an upload
   begins and the server's process group is killed with SIGKILL mid-ingest. Then a last start
   lets the queue finish, and the store is checked: `PRAGMA integrity_check`, it opens and
   migrates, no half documents (every document has chunks numbered without gaps, every chunk a
   vector, no chunk without its document), no staged folder left behind.

The 10-minute soak with a transcript feed belongs to live classes, which do not exist yet: it
is not part of this suite. Runs with the embedded store (SQLite), passages only
(`llm_backend = none`).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import signal
import sqlite3
import string
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import httpx
from _common import git_state, log, percentile
from api_load import Server, coursetutor_cli, settings_env, terminate_on_sigterm

COURSE_A = "numerical-methods-101"  # the sample course `serve` loads into tenant A
TENANTS = (("default", COURSE_A), ("uni-b", "b-course"), ("uni-c", "c-course"))
RATIO_TARGET = 3.0
WORDS = ("bracket", "root", "interval", "secant", "newton", "error", "bound", "iteration",
         "converge", "tolerance", "midpoint", "derivative", "sign", "function", "zero",
         "estimate", "step", "halve", "method", "cubic", "polynomial", "slope", "guess")
REFUSED = (400, 401, 403, 404, 405, 409, 413, 415, 422, 429)


# -- the tenants and what each holds ----------------------------------------------------------


class Tenant:
    """One tenant's course, keys and the things another tenant must never reach."""

    def __init__(self, tid: str, course: str) -> None:
        self.id, self.course = tid, course
        self.marker = "zq" + "".join(random.choices(string.ascii_lowercase, k=12))
        self.sentence = (f"The secret exam rule {self.marker} says that every answer must be "
                         "written in ink and signed on each page.")
        self.teacher = self.student = ""
        self.key_ids: list[str] = []
        self.doc = "secret-md"
        self.job = self.session = self.url = ""

    def auth(self, role: str) -> dict[str, str]:
        return {"Authorization": "Bearer " + (self.teacher if role == "teacher"
                                              else self.student)}

    def secrets(self) -> list[str]:
        """What must never show up in another tenant's replies."""
        return [s for s in (self.marker, self.job, self.session, *self.key_ids) if s]


class Tally:
    """Requests, statuses, 5xx and leaks of one phase (thread-safe)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.requests = 0
        self.statuses: Counter[int] = Counter()
        self.errors: list[str] = []  # 5xx and transport failures
        self.leaks: list[str] = []
        self._lock = threading.Lock()

    def record(self, what: str, response: httpx.Response | None, refuse: bool,
               foreign: Iterable[str], sent: str = "") -> None:
        """Count one reply; `sent` is what the request carried (an id or text it sent may be
        echoed back, as in "job 'j_...' does not exist": that tells the caller nothing)."""
        with self._lock:
            self.requests += 1
            if response is None:
                self.errors.append(f"{what}: no response")
                return
            self.statuses[response.status_code] += 1
            if response.status_code >= 500:
                self.errors.append(f"{what}: {response.status_code} {response.text[:200]}")
            if refuse and 200 <= response.status_code < 300:
                self.leaks.append(f"{what}: {response.status_code} where a refusal is due")
            body = response.text
            for secret in foreign:
                if secret in body and secret not in sent:
                    self.leaks.append(f"{what}: the reply holds another tenant's {secret!r}")

    def figures(self) -> dict[str, Any]:
        return {"requests": self.requests, "5xx": len(self.errors), "leaks": len(self.leaks),
                "statuses": dict(sorted(self.statuses.items())),
                "examples": (self.leaks + self.errors)[:10]}


def send(client: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response | None:
    try:
        return client.request(method, path, **kwargs)
    except httpx.HTTPError:
        return None


def expect(client: httpx.Client, method: str, path: str, status: int = 200,
           **kwargs: Any) -> Any:
    """A set-up request that must succeed."""
    r = client.request(method, path, **kwargs)
    if r.status_code != status:
        raise SystemExit(f"set-up: {method} {path} answered {r.status_code}: {r.text[:300]}")
    return r.json() if r.content else None


def wait_job(client: httpx.Client, headers: dict[str, str], job: str,
             seconds: float = 600) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found: dict[str, Any] = client.get(f"/v1/jobs/{job}", headers=headers).json()
        if found.get("status") in ("done", "failed", "cancelled"):
            return found
        time.sleep(0.3)
    raise SystemExit(f"set-up: job {job} did not finish in {seconds:.0f} s")


def set_up(client: httpx.Client, admin: str) -> list[Tenant]:
    """Tenants B and C, keys, courses, enrolments and a secret document in each tenant."""
    root = {"Authorization": "Bearer " + admin}
    tenants = [Tenant(t, c) for t, c in TENANTS]
    for t in tenants:
        if t.id != "default":
            expect(client, "POST", "/v1/tenants", 201, headers=root,
                   json={"id": t.id, "name": t.id})
        student = f"student-{t.id}"
        for role in ("teacher", "student"):
            made = expect(client, "POST", "/v1/keys", 201, headers=root, json={
                "tenant": t.id, "role": role, "student": student if role == "student" else "",
                "name": f"abuse {role}"})
            setattr(t, role, made["key"])
            t.key_ids.append(made["id"])
        if t.course != COURSE_A:
            expect(client, "POST", "/v1/courses", 201, headers=t.auth("teacher"),
                   json={"id": t.course, "title": f"Course of {t.id}", "language": "en"})
        expect(client, "PUT", f"/v1/courses/{t.course}/students/{student}", 204,
               headers=t.auth("teacher"))
        job = expect(client, "POST", f"/v1/courses/{t.course}/documents", 202,
                     headers=t.auth("teacher"), data={"title": "Secret"},
                     files=[("files", ("secret.md", f"# Secret\n\n{t.sentence}\n".encode()))])
        t.job = job["id"]
        if wait_job(client, t.auth("teacher"), t.job)["status"] != "done":
            raise SystemExit(f"set-up: the secret document of {t.id} was not ingested")
        hits = expect(client, "GET", f"/v1/courses/{t.course}/search",
                      headers=t.auth("student"), params={"q": f"secret exam rule {t.marker}"})
        t.url = next(h["url"] for h in hits["hits"] if h["document"] == f"{t.course}:{t.doc}")
        asked = expect(client, "POST", f"/v1/courses/{t.course}/ask",
                       headers=t.auth("student"), json={"question": "What is the exam rule?"})
        t.session = asked["session_id"]
    return tenants


# -- 1. isolation -----------------------------------------------------------------------------


def cross_probes(x: Tenant, v: Tenant) -> list[tuple[str, str, str, dict[str, Any], bool]]:
    """(role, method, path, request kwargs, must refuse) of tenant x's keys against tenant v."""
    c, d = v.course, v.doc
    probes: list[tuple[str, str, dict[str, Any], bool]] = [
        ("GET", f"/v1/courses/{c}", {}, True),
        ("GET", f"/v1/courses/{c}/documents", {}, True),
        ("GET", f"/v1/courses/{c}/search", {"params": {"q": f"secret exam rule {v.marker}"}},
         True),
        ("POST", f"/v1/courses/{c}/ask", {"json": {"question": f"What is {v.marker}?"}}, True),
        ("POST", "/v1/chat/completions", {"json": {"model": c, "messages": [
            {"role": "user", "content": f"What is {v.marker}?"}]}}, True),
        ("GET", f"/v1/courses/{c}/jobs", {}, True),
        ("GET", f"/v1/jobs/{v.job}", {}, True),
        ("DELETE", f"/v1/jobs/{v.job}", {}, True),
        ("GET", f"/v1/courses/{c}/students", {}, True),
        ("PUT", f"/v1/courses/{c}/students/intruder", {}, True),
        ("GET", f"/v1/courses/{c}/sessions", {}, True),
        ("GET", f"/v1/courses/{c}/sessions/{v.session}", {}, True),
        ("POST", f"/v1/courses/{c}/sessions/{v.session}/end", {}, True),
        ("POST", f"/v1/courses/{c}/ask", {"json": {"question": "And then?",
                                                   "session_id": v.session}}, True),
        ("GET", f"/v1/courses/{c}/analytics", {}, True),
        ("GET", f"/v1/courses/{c}/check", {}, True),
        ("PATCH", f"/v1/courses/{c}", {"json": {"title": "taken over"}}, True),
        ("GET", f"/v1/documents/{c}:{d}/file", {}, True),
        ("DELETE", f"/v1/courses/{c}/documents/{d}", {}, True),
        ("POST", f"/v1/courses/{c}/documents", {"files": [("files", ("x.md", b"# x\n"))]},
         True),
        ("DELETE", f"/v1/keys/{v.key_ids[-1]}", {}, True),
        ("GET", "/v1/keys", {}, False),
        ("GET", "/v1/courses", {}, False),
        ("GET", "/v1/me", {}, False),
        ("GET", f"/v1/courses/{x.course}/search", {"params": {"q": v.sentence}}, False),
        ("POST", f"/v1/courses/{x.course}/ask", {"json": {"question": v.sentence}}, False),
    ]
    out = []
    for role in ("teacher", "student"):
        for method, path, kwargs, refuse in probes:
            out.append((role, method, path, kwargs, refuse))
            if refuse and method == "GET":  # X-Tenant is for admins only
                out.append((role, method, path, {**kwargs, "headers": {"X-Tenant": v.id}},
                            refuse))
    return out


def tampered(url: str, x: Tenant) -> list[str]:
    """The signed URL `url` changed in every part a forger could change."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    path = parts.path
    sig = query.get("sig", "")
    flipped = (("A" if sig[:1] != "A" else "B") + sig[1:]) if sig else "x"
    variants = [
        {**query, "tenant": x.id},
        {**query, "sig": flipped},
        {**query, "exp": str(int(query.get("exp", "0")) + 86400 * 365)},
        {**query, "staff": "1"},
        {**query, "key": x.key_ids[0]},
        {k: v for k, v in query.items() if k != "sig"},
        {k: v for k, v in query.items() if k != "key"},
        {**query, "sig": sig.upper()},
    ]
    urls = [f"{path}?{urlencode(v)}" for v in variants]
    course, _, _doc = path.split("/")[3].partition(":")
    urls.append(path.replace(f"{course}:", f"{course}:..%2F") + "?" + parts.query)
    urls.append(path.replace("secret-md", "lecture-01-root-finding-md") + "?" + parts.query)
    return urls


def guesses(x: Tenant, rng: random.Random) -> list[tuple[str, str]]:
    """Ids nobody was given: random jobs, sessions, courses, documents and keys."""
    hexed = "".join(rng.choices("0123456789abcdef", k=16))
    return [
        ("GET", f"/v1/jobs/j_{hexed}"),
        ("DELETE", f"/v1/jobs/j_{hexed}"),
        ("GET", f"/v1/courses/{x.course}/sessions/s_{hexed}"),
        ("GET", f"/v1/courses/course-{rng.randrange(1000)}"),
        ("GET", f"/v1/courses/{rng.choice(TENANTS)[1]}-{rng.randrange(10)}/documents"),
        ("GET", f"/v1/documents/{rng.choice(TENANTS)[1]}:doc-{hexed[:6]}/file"),
        ("DELETE", f"/v1/keys/{hexed[:12]}"),
    ]


def isolation(client: httpx.Client, tenants: list[Tenant], target: int,
              workers: int) -> Tally:
    tally = Tally("isolation")
    rng = random.Random(15)
    plan: list[Callable[[], None]] = []

    def probe(headers: dict[str, str], method: str, path: str, kwargs: dict[str, Any],
              refuse: bool, foreign: list[str], what: str) -> Callable[[], None]:
        def run() -> None:
            extra = kwargs.get("headers", {})
            args = {k: v for k, v in kwargs.items() if k != "headers"}
            response = send(client, method, path, headers={**headers, **extra}, **args)
            tally.record(what, response, refuse, foreign, sent=path + json.dumps(
                args, default=str) + json.dumps(extra))
        return run

    for x in tenants:
        foreign = [s for v in tenants if v is not x for s in v.secrets()]
        for v in (t for t in tenants if t is not x):
            for role, method, path, kwargs, refuse in cross_probes(x, v):
                plan.append(probe(x.auth(role), method, path, kwargs, refuse, foreign,
                                  f"{x.id} {role} {method} {path}"))
            for url in tampered(v.url, x):
                plan.append(probe({}, "GET", url, {}, True, foreign, f"no key, tampered {url}"))
                for role in ("teacher", "student"):
                    plan.append(probe(x.auth(role), "GET", url, {}, True, foreign,
                                      f"{x.id} {role} tampered {url}"))
    rounds = 0
    with ThreadPoolExecutor(workers) as pool:
        while tally.requests < target:
            batch = list(plan)
            for x in tenants:
                foreign = [s for v in tenants if v is not x for s in v.secrets()]
                for _ in range(10):
                    for method, path in guesses(x, rng):
                        batch.append(probe(x.auth(rng.choice(("teacher", "student"))), method,
                                           path, {}, True, foreign,
                                           f"{x.id} guess {method} {path}"))
            rng.shuffle(batch)
            list(pool.map(lambda f: f(), batch))
            rounds += 1
            log(f"isolation: {tally.requests} requests, {len(tally.leaks)} leaks, "
                f"{len(tally.errors)} 5xx")
    # nothing another tenant sent may have changed a tenant's own data
    for v in tenants:
        docs = send(client, "GET", f"/v1/courses/{v.course}/documents",
                    headers=v.auth("teacher"))
        ok = docs is not None and docs.status_code == 200 and any(
            d["document"] == v.doc for d in docs.json()["documents"])
        title = send(client, "GET", f"/v1/courses/{v.course}", headers=v.auth("teacher"))
        if not ok or title is None or "taken over" in title.text:
            tally.leaks.append(f"{v.id}: its course or document was changed by another tenant")
        students = send(client, "GET", f"/v1/courses/{v.course}/students",
                        headers=v.auth("teacher"))
        if students is not None and "intruder" in students.text:
            tally.leaks.append(f"{v.id}: another tenant enrolled a student")
    return tally


def side_channel(client: httpx.Client, a: Tenant, b: Tenant) -> dict[str, Any]:
    """B uploads A's secret sentence exactly, and a wrong guess: the reports must agree."""
    reports = []
    for guess in (a.sentence, a.sentence.replace("ink", "pencil")):
        body = f"# Secret\n\n{guess}\n".encode()
        started = time.perf_counter()
        job = expect(client, "POST", f"/v1/courses/{b.course}/documents", 202,
                     headers=b.auth("teacher"), data={"title": "Secret"},
                     files=[("files", ("guess.md", body))])
        found = wait_job(client, b.auth("teacher"), job["id"])
        seconds = time.perf_counter() - started
        (line,) = found["report"]["files"]
        reports.append({"embedded": line["embedded"], "chunks": line["chunks"],
                        "status": line["status"], "seconds": round(seconds, 2)})
        expect(client, "DELETE", f"/v1/courses/{b.course}/documents/guess-md", 204,
               headers=b.auth("teacher"))
    same = {k: v for k, v in reports[0].items() if k != "seconds"} == {
        k: v for k, v in reports[1].items() if k != "seconds"}
    return {"exact_guess": reports[0], "wrong_guess": reports[1], "leak": not same}


# -- 2. fuzzing -------------------------------------------------------------------------------


JUNK = ["", " ", "\x00", "%00", "..", "../..", "%2e%2e%2f", "\ud800", "\udfff", "\x1b[31m",
        "a" * 5000, "²", "٣", "9" * 5000, "-1", "1e309", "NaN", "null", "[]", "{}", "'; DROP",
        "<script>", "\u202e", "\ufeff", "ﬁ", "𝕏" * 50, "\n\r", "%ZZ", "😀" * 300]


def junk(rng: random.Random) -> str:
    pick = rng.choice(JUNK)
    if rng.random() < 0.3:
        pick += "".join(chr(rng.randrange(0, 0x3000)) for _ in range(rng.randrange(1, 40)))
    return pick


def encoded(text: str) -> str:
    """`text` percent-encoded for a URL, lone surrogates included (as their raw UTF-8 form)."""
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


def raw_json(value: Any) -> bytes:
    return json.dumps(value).encode()


def fuzz_case(rng: random.Random, t: Tenant) -> tuple[str, str, dict[str, Any]]:
    c = t.course
    j = encoded(junk(rng))
    kind = rng.randrange(12)
    if kind == 0:
        route = rng.choice([f"/v1/courses/{j}", f"/v1/courses/{c}/documents/{j}",
                            f"/v1/jobs/{j}", f"/v1/courses/{c}/sessions/{j}",
                            f"/v1/documents/{j}/file", f"/v1/courses/{j}/search?q=x",
                            f"/v1/courses/{c}/students/{j}", f"/v1/keys/{j}"])
        return rng.choice(["GET", "DELETE", "PUT", "POST", "PATCH"]), route, {}
    if kind == 1:
        params = {"q": junk(rng), "k": rng.choice(["0", "-1", "abc", "9" * 30, "5", "²"]),
                  "mode": rng.choice(["hybrid", "evil", "", "bm25'"]),
                  "type": rng.choice(["poem", "lecture", junk(rng)]),
                  "max_difficulty": rng.choice(["²", "0", "6", "3", junk(rng)])}
        query = "&".join(f"{k}={encoded(v)}" for k, v in params.items() if rng.random() < 0.7)
        return "GET", f"/v1/courses/{c}/search?{query}", {}
    if kind == 2:
        body = rng.choice([
            {"question": junk(rng)}, {"question": 5}, {"question": None}, {},
            {"question": "ok", "session_id": junk(rng)}, {"question": "ok", "level": junk(rng)},
            {"question": "ok", "level": 99}, {"question": "ok", "student": junk(rng)},
            {"question": ["a"]}, {"question": "x" * 200_000}])
        return "POST", f"/v1/courses/{c}/ask", {"content": raw_json(body),
                                                  "headers": {"Content-Type":
                                                              "application/json"}}
    if kind == 3:
        depth = rng.choice([50, 1000, 100_000])
        return "POST", f"/v1/courses/{c}/ask", {"content": b"[" * depth + b"]" * depth,
                                                  "headers": {"Content-Type":
                                                              "application/json"}}
    if kind == 4:
        broken = rng.choice([b"{", b'{"question": "\\ud800"}', b'{"question": "\\udfff x"}',
                             b"\xff\xfe", b'{"question": 1e999}', b"null", b'"str"',
                             b'{"question": "a", "question": "b"}', bytes(rng.randbytes(64))])
        return "POST", rng.choice([f"/v1/courses/{c}/ask", "/v1/chat/completions",
                                   "/v1/courses", "/v1/keys"]), {
            "content": broken, "headers": {"Content-Type": "application/json"}}
    if kind == 5:
        body = {"model": rng.choice([c, junk(rng), 5]), "stream": rng.choice([True, False]),
                "session_id": rng.choice([None, junk(rng)]), "user": rng.choice([None, junk(rng)]),
                "messages": rng.choice([[], [{"role": "user", "content": junk(rng)}],
                                        [{"role": junk(rng), "content": "x"}],
                                        [{"role": "user", "content": [{"type": "text",
                                                                       "text": junk(rng)}]}],
                                        "not a list"])}
        return "POST", "/v1/chat/completions", {"content": raw_json(body),
                                                "headers": {"Content-Type": "application/json"}}
    if kind == 6:
        body = rng.choice([{"id": junk(rng)}, {"id": "ok-course", "title": junk(rng)},
                           {"id": "x", "language": junk(rng)}, {"id": 5},
                           {"id": "x", "allow_solutions": "maybe"}])
        return rng.choice(["POST", "PATCH"]), rng.choice(["/v1/courses", f"/v1/courses/{c}"]), {
            "content": raw_json(body), "headers": {"Content-Type": "application/json"}}
    if kind == 7:
        body = rng.choice([{"role": junk(rng)}, {"role": "student", "student": junk(rng)},
                           {"role": "admin"}, {"role": "student", "tenant": junk(rng)},
                           {"role": "student", "name": junk(rng)}])
        return "POST", "/v1/keys", {"content": raw_json(body),
                                    "headers": {"Content-Type": "application/json"}}
    if kind in (8, 9):
        form = {k: v for k, v in {
            "difficulty": rng.choice(["²", "9" * 5000, "0", "6", "-1", "3", junk(rng)]),
            "type": rng.choice(["lecture", "poem", junk(rng)]),
            "title": junk(rng), "topic": junk(rng), "language": junk(rng),
            "media_url": rng.choice(["javascript:alert(1)", "ftp://x", junk(rng)])}.items()
            if rng.random() < 0.5}
        name = rng.choice(["a" * 300 + ".md", "../../etc/passwd.md", "x\x00y.md", ".md",
                           "notes.exe", "\ud800.md", "ok.md", "CON.md", "a/b/c.md",
                           "😀" * 80 + ".md", " .md", "..md"])
        name = name.encode("utf-8", "surrogateescape" if "\ud800" not in name else
                           "surrogatepass").decode("utf-8", "replace")
        data = rng.choice([b"", b"# ok\n\nfine text\n", b"%PDF-1.7 broken", rng.randbytes(200),
                           b"[" * 10_000])
        return "POST", f"/v1/courses/{c}/documents", {"data": form,
                                                      "files": [("files", (name, data))]}
    if kind == 10:
        boundary = "XyZ"
        body = rng.choice([b"--XyZ\r\nContent-Disposition: form-data; name=\"files\"\r\n\r\n",
                           b"garbage", b"--XyZ--", b"--XyZ\r\n\r\n\r\n--XyZ--\r\n",
                           b"--XyZ\r\nContent-Disposition: form-data; name=\"files\"; "
                           b"filename=\"" + b"a" * 300 + b".md\"\r\n\r\nx\r\n--XyZ--\r\n"])
        return "POST", f"/v1/courses/{c}/documents", {
            "content": body,
            "headers": {"Content-Type": f"multipart/form-data; boundary={boundary}"}}
    method = rng.choice(["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"])
    return method, rng.choice(["/v1/me", "/v1/me/", "/v1/tenants", "/v1/courses",
                               f"/v1/courses/{c}/analytics?days={encoded(junk(rng))}",
                               f"/v1/courses/{c}/sessions?student={encoded(junk(rng))}",
                               "/v1/" + j, "/" + j, "/static/" + j]), {
        "headers": rng.choice([{}, {"Host": "evil.example"}, {"X-Tenant": junk(rng)[:100]},
                               {"Content-Type": "text/evil"}])}


def fuzzing(client: httpx.Client, tenants: list[Tenant], target: int, workers: int) -> Tally:
    tally = Tally("fuzzing")
    rng = random.Random(16)
    bad_keys = ["", "Bearer ", "Bearer ct_" + "A" * 60, "Bearer \x7f", "Basic abc"]

    def one(seed: int) -> None:
        r = random.Random(seed)
        t = r.choice(tenants)
        method, path, kwargs = fuzz_case(r, t)
        headers = dict(kwargs.pop("headers", {}))
        if r.random() < 0.05:
            value = r.choice(bad_keys)
            if value:
                headers["Authorization"] = value
        else:
            headers.update(t.auth(r.choice(("teacher", "student"))))
        try:
            response = client.request(method, path, headers=headers, **kwargs)
        except (httpx.LocalProtocolError, httpx.UnsupportedProtocol, httpx.InvalidURL,
                UnicodeError, ValueError):
            return  # the client itself refused to send it: not a request
        except httpx.TransportError as exc:  # the server dropped it
            tally.record(f"{method} {path[:120]} ({type(exc).__name__})", None, False, ())
            return
        foreign = [s for v in tenants if v is not t for s in v.secrets()]
        tally.record(f"{method} {path[:120]}", response, False, foreign,
                     sent=path + json.dumps(kwargs, default=str) + json.dumps(headers))

    seeds = itertools.count(rng.randrange(1 << 30))
    with ThreadPoolExecutor(workers) as pool:
        while tally.requests < target:
            list(pool.map(one, [next(seeds) for _ in range(500)]))
            log(f"fuzzing: {tally.requests} requests, {len(tally.errors)} 5xx")
    return tally


# -- 3. noisy neighbour -----------------------------------------------------------------------


def server_timing(header: str) -> dict[str, float]:
    """`check;dur=0.4, queue;dur=12.0` as {"check": 0.4, "queue": 12.0} (ms)."""
    out: dict[str, float] = {}
    for part in header.split(","):
        name, _, rest = part.strip().partition(";dur=")
        if name and rest:
            out[name] = float(rest)
    return out


def short_searches(client: httpx.Client, b: Tenant, n: int, rng: random.Random,
                   seconds: float = 600,
                   parts: dict[str, list[float]] | None = None) -> list[float]:
    """Latency (ms) of n short searches of tenant B, each a new query (so it is embedded);
    fewer if `seconds` pass first. `parts` gathers the server's own timings of each (its
    Server-Timing header: check, queue, search) and the rest of the time (outside: the
    connection, the thread pool, the event loop)."""
    out: list[float] = []
    deadline = time.monotonic() + seconds
    for i in range(n):
        if time.monotonic() > deadline:
            break
        q = f"{rng.choice(WORDS)} {rng.choice(WORDS)} {i}"
        started = time.perf_counter()
        r = client.get(f"/v1/courses/{b.course}/search", params={"q": q},
                       headers=b.auth("student"))
        out.append((time.perf_counter() - started) * 1000)
        if r.status_code != 200:
            raise SystemExit(f"noisy neighbour: B's search answered {r.status_code}: "
                             f"{r.text[:200]}")
        if parts is not None:
            timing = server_timing(r.headers.get("server-timing", ""))
            for name, ms in timing.items():
                parts.setdefault(name, []).append(ms)
            parts.setdefault("outside", []).append(out[-1] - sum(timing.values()))
    return out


def longest_query(client: httpx.Client, a: Tenant, rng: random.Random) -> str:
    """A query as long as api_max_query_tokens allows (found by asking the server): the very
    words the server accepted, since another draw of as many words may count more tokens."""
    low, high, accepted = 1, 2000, ""
    while low < high:
        mid = (low + high + 1) // 2
        q = " ".join(rng.choice(WORDS) for _ in range(mid))
        r = client.get(f"/v1/courses/{a.course}/search", params={"q": q, "k": "1"},
                       headers=a.auth("teacher"))
        while r.status_code == 429:  # the teacher's own budget: wait for it
            time.sleep(float(r.headers.get("Retry-After", "1")))
            r = client.get(f"/v1/courses/{a.course}/search", params={"q": q, "k": "1"},
                           headers=a.auth("teacher"))
        if r.status_code == 422:
            high = mid - 1
        elif r.status_code == 200:
            low, accepted = mid, q
        else:
            raise SystemExit(f"noisy neighbour: a long query answered {r.status_code}")
    return accepted or " ".join(rng.choice(WORDS) for _ in range(low))


def noisy_neighbour(client: httpx.Client, url: str, a: Tenant, b: Tenant, n: int,
                    big_chunks: int) -> dict[str, Any]:
    rng = random.Random(17)
    short_searches(client, b, 5, rng)  # warm up
    idle = short_searches(client, b, n, rng)
    longest = longest_query(client, a, rng)
    stop = threading.Event()
    abuse: Counter[int] = Counter()
    lock = threading.Lock()

    def hammer(i: int) -> None:
        local = random.Random(i)
        with httpx.Client(base_url=url, timeout=120) as own:
            while not stop.is_set():
                words = longest.split()
                local.shuffle(words)
                r = send(own, "GET", f"/v1/courses/{a.course}/search",
                         params={"q": " ".join(words)}, headers=a.auth("student"))
                with lock:
                    abuse[r.status_code if r is not None else 0] += 1
                if r is not None and r.status_code == 429:
                    stop.wait(min(float(r.headers.get("Retry-After", "1")), 1.0))

    body = "# Large upload\n\n" + "\n\n".join(
        f"## Part {i}\n\n" + " ".join(rng.choice(WORDS) for _ in range(60)) + "."
        for i in range(big_chunks))
    job = expect(client, "POST", f"/v1/courses/{a.course}/documents", 202,
                 headers=a.auth("teacher"), files=[("files", ("large.md", body.encode()))])
    threads = [threading.Thread(target=hammer, args=(i,), daemon=True) for i in range(8)]
    for thread in threads:
        thread.start()
    time.sleep(2.0)
    parts: dict[str, list[float]] = {}
    try:
        busy = short_searches(client, b, n, rng, parts=parts)
    finally:
        stop.set()
        for thread in threads:
            thread.join(130)
    cancelled = client.delete(f"/v1/jobs/{job['id']}", headers=a.auth("teacher"))
    p95_idle, p95_busy = percentile(idle, 95), percentile(busy, 95)
    return {"searches": [len(idle), len(busy)], "idle_p50_ms": round(percentile(idle, 50), 1),
            "idle_p95_ms": round(p95_idle, 1), "abuse_p50_ms": round(percentile(busy, 50), 1),
            "abuse_p95_ms": round(p95_busy, 1), "ratio_p95": round(p95_busy / p95_idle, 2),
            # where B's searches spent their time under abuse (p50 / p95 of each part, ms)
            "abuse_parts_ms": {name: [round(percentile(v, 50), 1), round(percentile(v, 95), 1)]
                               for name, v in parts.items()},
            "target": RATIO_TARGET, "longest_query_words": len(longest.split()),
            "abuser_statuses": dict(sorted(abuse.items())),
            "large_upload_chunks_asked": big_chunks,
            "large_upload_cancelled": cancelled.status_code}


# -- 4. SIGKILL during ingest -----------------------------------------------------------------


def integrity(db: Path, uploads: Path) -> dict[str, Any]:
    """The checks of a store after the kills (read-only, then opened by coursetutor)."""
    problems: list[str] = []
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        check = conn.execute("PRAGMA integrity_check").fetchone()[0]
        if check != "ok":
            problems.append(f"integrity_check: {check}")
        docs = conn.execute("SELECT tenant, course, id FROM documents").fetchall()
        for tenant, course, doc in docs:
            first = conn.execute(
                "SELECT MIN(ordinal) FROM chunks WHERE tenant = ? AND course = ? AND "
                "document_id = ?", (tenant, course, doc)).fetchone()[0]
            if first is None:
                problems.append(f"document {tenant}/{course}/{doc} without chunks")
        # every document a finished job reports is there with exactly the chunks it reported
        for (report,) in conn.execute("SELECT report FROM jobs WHERE report IS NOT NULL "
                                      "AND course = ?", (COURSE_A,)):
            for line in json.loads(report)["files"]:
                if not line["name"].startswith("kill-") or line["status"] == "failed":
                    continue
                stored = conn.execute(
                    "SELECT COUNT(*) FROM chunks WHERE course = ? AND document_id = ?",
                    (COURSE_A, line["document"])).fetchone()[0]
                if stored != line["chunks"]:
                    problems.append(f"half document {line['document']}: {stored} chunks "
                                    f"stored, {line['chunks']} reported")
        orphans = conn.execute(
            "SELECT COUNT(*) FROM chunks k WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE "
            "d.tenant = k.tenant AND d.course = k.course AND d.id = k.document_id)").fetchone()[0]
        if orphans:
            problems.append(f"{orphans} chunks without their document")
        unvectored = conn.execute(
            "SELECT COUNT(*) FROM chunks k WHERE NOT EXISTS "
            "(SELECT 1 FROM vectors v WHERE v.key = k.vector_key)").fetchone()[0]
        if unvectored:
            problems.append(f"{unvectored} chunks without a vector")
        jobs = dict(conn.execute("SELECT status, COUNT(*) FROM jobs GROUP BY status").fetchall())
        unfinished = {j for (j,) in conn.execute(
            "SELECT id FROM jobs WHERE status IN ('queued', 'running')")}
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from coursetutor.store import SQLiteStore

    try:
        SQLiteStore(db).close()
    except Exception as exc:  # the point: any failure to open is a corrupt store
        problems.append(f"the store does not open: {exc}")
    left = sorted(p.name for p in uploads.iterdir() if p.name not in unfinished
                  ) if uploads.is_dir() else []
    if left:
        problems.append(f"staged folders no unfinished job owns: {left[:5]}")
    return {"documents": len(docs), "jobs": jobs, "problems": problems,
            "corrupt": int(bool(problems))}


def kills(data: Path, env: dict[str, str], log_path: Path, a_teacher: str, count: int,
          rng: random.Random) -> dict[str, Any]:
    """Start, upload, SIGKILL mid-ingest, `count` times; then let the queue finish."""
    headers = {"Authorization": "Bearer " + a_teacher}
    killed = mid_ingest = 0
    for i in range(count):
        server = Server(data, env, log_path, empty=True)
        server.start(timeout=600)
        body = f"# Kill {i}\n\n" + "\n\n".join(
            f"## Part {p}\n\n" + " ".join(rng.choice(WORDS) for _ in range(50)) + f" k{i}p{p}."
            for p in range(rng.randrange(20, 80)))
        with httpx.Client(base_url=server.url, timeout=60) as client:
            client.post(f"/v1/courses/{COURSE_A}/documents", headers=headers,
                        files=[("files", (f"kill-{i}.md", body.encode()))])
            time.sleep(rng.uniform(0.2, 2.5))
            with contextlib.suppress(httpx.HTTPError):
                jobs = client.get(f"/v1/courses/{COURSE_A}/jobs", headers=headers).json()
                mid_ingest += any(j["status"] == "running" for j in jobs["jobs"])
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        assert server.proc is not None
        server.proc.wait(30)
        killed += 1
        log(f"kill {killed}/{count} (mid-ingest so far: {mid_ingest})")
    server = Server(data, env, log_path, empty=True)
    server.start(timeout=600)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            deadline = time.monotonic() + 900
            while time.monotonic() < deadline:
                jobs = client.get(f"/v1/courses/{COURSE_A}/jobs", headers=headers).json()["jobs"]
                if all(j["status"] in ("done", "failed", "cancelled") for j in jobs):
                    break
                time.sleep(1)
            finished = Counter(j["status"] for j in jobs)
    finally:
        server.stop()
    return {"kills": killed, "killed_while_running": mid_ingest,
            "jobs_after_restart": dict(finished)}


# -- the run ----------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="1,000 isolation and fuzzing requests, 3 kills, 30 searches")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("--server-log", type=Path, default=None)
    parser.add_argument("--workers", type=int, default=8, help="client threads")
    parser.add_argument("--keep", action="store_true", help="keep the data folder")
    parser.add_argument("--phases", default="isolation,fuzzing,neighbour,kill")
    parser.add_argument("--store", default="",
                        help="store URL for the server (e.g. postgresql://...; an empty "
                             "database); default: SQLite in the data folder")
    args = parser.parse_args()
    terminate_on_sigterm()
    quick = args.quick
    target = 1_000 if quick else 10_000
    phases = set(args.phases.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="ct-abuse-"))
    data = tmp / "data"
    data.mkdir()
    log_path = args.server_log or tmp / "server.log"
    notes: list[str] = []
    unlimited = {f"api_rate_{r}_per_{w}": "0" for r in ("student", "teacher", "admin")
                 for w in ("minute", "hour")}
    store = {"store": args.store} if args.store else {}
    env = settings_env({"llm_backend": "none", "embed_threads": "1", **unlimited, **store,
                        "api_rate_failed_auth_per_minute": "0",
                        "api_rate_failed_auth_per_hour": "0"}, notes)
    result: dict[str, Any] = {"commit": git_state(), "quick": quick, "notes": notes,
                              "cpus": os.cpu_count(), "loadavg_start": os.getloadavg()}
    admin = json.loads(coursetutor_cli(data, "keys", "create", "--role", "admin", "--json",
                                       env=env))["key"]
    server = Server(data, env, log_path, empty=False)
    try:
        server.start(timeout=900)
        with httpx.Client(base_url=server.url, timeout=120) as client:
            tenants = set_up(client, admin)
            a, b = tenants[0], tenants[1]
            if "isolation" in phases:
                tally = isolation(client, tenants, target, args.workers)
                result["isolation"] = tally.figures()
                result["side_channel"] = side_channel(client, a, b)
            if "fuzzing" in phases:
                result["fuzzing"] = fuzzing(client, tenants, target, args.workers).figures()
            if "neighbour" in phases:
                result["noisy_neighbour"] = noisy_neighbour(
                    client, server.url, a, b, 30 if quick else 100, 400 if quick else 2000)
    finally:
        result["server_exit"] = server.stop()
    if "kill" in phases:
        result["sigkill"] = kills(data, env, log_path, a.teacher, 3 if quick else 50,
                                  random.Random(18))
        result["integrity"] = integrity(data / "coursetutor.db", data / "uploads")
    result["loadavg_end"] = os.getloadavg()
    report(result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))
    if not args.keep:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def report(r: dict[str, Any]) -> None:
    """The figures, one line each."""
    leaks = fivexx = 0
    print(f"# abuse suite ({'quick' if r['quick'] else 'full'}), {r['commit']}, "
          f"{r['cpus']} CPUs, load {r['loadavg_start'][0]:.1f} at the start")
    if "isolation" in r:
        i = r["isolation"]
        side = r["side_channel"]
        leaks += i["leaks"] + int(side["leak"])
        fivexx += i["5xx"]
        print(f"isolation: {i['requests']} requests over 3 tenants, {i['leaks']} leaks, "
              f"{i['5xx']} 5xx; statuses {i['statuses']}")
        print(f"cache side channel: exact guess {side['exact_guess']}, wrong guess "
              f"{side['wrong_guess']}: {'LEAK' if side['leak'] else 'no difference'}")
    if "fuzzing" in r:
        f = r["fuzzing"]
        fivexx += f["5xx"]
        leaks += f["leaks"]
        print(f"fuzzing: {f['requests']} malformed requests and uploads, {f['5xx']} 5xx, "
              f"{f['leaks']} leaks; statuses {f['statuses']}")
    if "noisy_neighbour" in r:
        n = r["noisy_neighbour"]
        print(f"noisy neighbour: B's short-search p95 {n['idle_p95_ms']} ms idle, "
              f"{n['abuse_p95_ms']} ms while A abuses: ratio {n['ratio_p95']}x "
              f"(target <= {n['target']}x); A's requests {n['abuser_statuses']}")
        print("  B's searches under abuse, p50 / p95 ms: " + ", ".join(
            f"{name} {a} / {b}" for name, (a, b) in n["abuse_parts_ms"].items()))
    if "integrity" in r:
        k, g = r["sigkill"], r["integrity"]
        print(f"SIGKILL during ingest: {k['kills']} kills ({k['killed_while_running']} while a "
              f"job was running), jobs after restart {k['jobs_after_restart']}; "
              f"{g['corrupt']} corrupt stores {g['problems'] or ''}")
    print(f"total: {leaks} leaks, {fivexx} 5xx")
    for example in (r.get("isolation", {}).get("examples", []) +
                    r.get("fuzzing", {}).get("examples", []))[:10]:
        print(f"  {example}")
    print("not run: the 10-minute soak with a transcript feed (needs live classes)")


if __name__ == "__main__":
    sys.exit(main())
