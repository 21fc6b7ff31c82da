"""The API's edge under abuse: every input a caller controls is validated (422 naming the
field, never a 500), signed file URLs die with their key, and failed authentications,
signed-URL fetches and students with several keys are rate-limited."""

from __future__ import annotations

import json
import random
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest
import uvicorn
from click.testing import CliRunner

from coursetutor.api import logs
from coursetutor.api.access import mint_key
from coursetutor.api.middleware import json_depth
from coursetutor.api.validate import MAX_FILE_NAME_BYTES, file_name, problem
from coursetutor.cli import cli
from coursetutor.cli import serve as cli_serve
from coursetutor.config import Settings
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.store.files import FileStore

from .api_support import COURSE, PDF_DOC, STUDENT, Api, ScriptedLLM, error_of, open_api
from .support import Sample, copy_db

SURROGATE = "\ud800"


@pytest.fixture
def api(sample: Sample, embedder: EmbeddingModel, tmp_path: Path) -> Iterator[Api]:
    with open_api(sample, embedder, tmp_path / "data", fake=ScriptedLLM(),
                  api_secret="test-secret") as found:
        yield found


def post_json(api: Api, who: str, path: str, body: Any, **headers: str) -> Any:
    """POST `body` as JSON with \\u escapes, so that lone surrogates travel as JSON allows."""
    return api.call(who, "POST", path, content=json.dumps(body).encode(),
                    headers={"content-type": "application/json", **headers})


def fields_of(response: Any) -> list[str]:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/json"
    return [f["field"] for f in error_of(response)["fields"]]


# -- finding 4: text fields ----------------------------------------------------------------


@pytest.mark.parametrize(("value", "reason"), [
    ("plain text", None),
    ("two\tcolumns\nand lines\r\n", None),
    ("é ü 中文 😀", None),
    (SURROGATE, "not valid Unicode text (a lone surrogate)"),
    ("a\x00b", "control character U+0000 is not allowed"),
    ("bell\x07", "control character U+0007 is not allowed"),
    ("c1\x85", "control character U+0085 is not allowed"),
    ("del\x7f", "control character U+007F is not allowed"),
])
def test_what_text_is_acceptable(value: str, reason: str | None) -> None:
    assert problem(value, multiline=True) == reason


def test_one_line_fields_refuse_newlines_and_tabs() -> None:
    assert problem("a\nb") == "control character U+000A is not allowed"
    assert problem("a\tb") == "control character U+0009 is not allowed"


ASK = f"/v1/courses/{COURSE}/ask"


@pytest.mark.parametrize(("who", "body", "field"), [
    ("student", {"question": SURROGATE}, "question"),
    ("student", {"question": "What is \x00 bisection?"}, "question"),
    ("student", {"question": "x" * 100_001}, "question"),
    ("student", {"question": "Bisection?", "session_id": SURROGATE}, "session_id"),
    ("student", {"question": "Bisection?", "session_id": "s\n1"}, "session_id"),
    ("student", {"question": "Bisection?", "session_id": "s" * 129}, "session_id"),
    ("teacher", {"question": "Bisection?", "student": SURROGATE}, "student"),
    ("teacher", {"question": "Bisection?", "student": "ana\x1b[31m"}, "student"),
])
def test_bad_ask_fields_are_422_naming_the_field(api: Api, who: str, body: dict[str, Any],
                                                 field: str) -> None:
    assert fields_of(post_json(api, who, ASK, body)) == [field]
    streamed = post_json(api, who, ASK, body, accept="text/event-stream")
    assert fields_of(streamed) == [field]
    assert api.store.list_sessions("default", COURSE, STUDENT) == []


CHAT = "/v1/chat/completions"


def chat(**change: Any) -> dict[str, Any]:
    body = {"model": COURSE, "messages": [{"role": "user", "content": "Bisection?"}]}
    return {**body, **change}


@pytest.mark.parametrize(("body", "field"), [
    (chat(model=SURROGATE), "model"),
    (chat(model="m" * 129), "model"),
    (chat(session_id=SURROGATE), "session_id"),
    (chat(user="bob\x00"), "user"),
    (chat(messages=[{"role": "user", "content": SURROGATE}]), "messages.0.content"),
    (chat(messages=[{"role": "user", "content": "x" * 100_001}]), "messages.0.content"),
    (chat(messages=[{"role": SURROGATE, "content": "hi"}]), "messages.0.role"),
])
@pytest.mark.parametrize("stream", [False, True])
def test_bad_chat_fields_are_422_before_any_stream(api: Api, body: dict[str, Any],
                                                   field: str, stream: bool) -> None:
    assert fields_of(post_json(api, "teacher", CHAT, {**body, "stream": stream})) == [field]


@pytest.mark.parametrize("stream", [False, True])
def test_a_surrogate_in_a_content_part_is_422(api: Api, stream: bool) -> None:
    body = chat(messages=[{"role": "user", "content": [{"type": "text", "text": SURROGATE}]}],
                stream=stream)
    assert fields_of(post_json(api, "student", CHAT, body)) == ["messages.0.content"]


def test_content_parts_still_work(api: Api) -> None:
    body = chat(messages=[{"role": "user", "content": [
        {"type": "text", "text": "How does the bisection method work?"},
        {"type": "image_url", "image_url": {"url": "https://example.org/x.png"}}]}])
    assert post_json(api, "student", CHAT, body).status_code == 200


@pytest.mark.parametrize(("path", "params", "field"), [
    (f"/v1/courses/{COURSE}/search", {"q": "bisection\x00"}, "q"),
    (f"/v1/courses/{COURSE}/search", {"q": "x" * 4001}, "q"),
    (f"/v1/courses/{COURSE}/sessions", {"student": "ana\x01"}, "student"),
    ("/v1/courses/a%00b/sessions", {}, "course"),
    (f"/v1/courses/{COURSE}/sessions/{quote(chr(7))}", {}, "session_id"),
    (f"/v1/courses/{'c' * 600}", {}, "course"),
])
def test_bad_path_and_query_parameters_are_422(api: Api, path: str, params: dict[str, str],
                                               field: str) -> None:
    assert fields_of(api.call("teacher", "GET", path, params=params)) == [field]


def test_a_query_may_hold_a_newline(api: Api) -> None:
    response = api.call("student", "GET", f"/v1/courses/{COURSE}/search",
                        params={"q": "bisection\nmethod", "k": 1})
    assert response.status_code == 200


def test_course_and_key_bodies_are_validated(api: Api) -> None:
    assert fields_of(post_json(api, "teacher", "/v1/courses",
                               {"id": "c1", "title": "T\x00"})) == ["title"]
    assert fields_of(post_json(api, "teacher", "/v1/keys",
                               {"role": "student", "student": SURROGATE})) == ["student"]
    assert fields_of(post_json(api, "admin", "/v1/tenants",
                               {"id": "t1", "name": "x" * 301})) == ["name"]


# -- finding 4: uploads --------------------------------------------------------------------


def upload(api: Api, files: list[tuple[str, bytes]], **form: str) -> Any:
    return api.call("teacher", "POST", f"/v1/courses/{COURSE}/documents", data=form,
                    files=[("files", (name, data, "text/markdown")) for name, data in files])


def uploads_left(api: Api) -> list[Path]:
    folder = api.settings.data_dir / "uploads"
    return sorted(folder.rglob("*")) if folder.exists() else []


NOTE = b"# Regula falsi\n\nRegula falsi keeps a bracket like bisection.\n"


@pytest.mark.parametrize(("form", "field"), [
    ({"difficulty": "\u00b2"}, "difficulty"),  # str.isdigit() is true, int() fails
    ({"difficulty": "9" * 5000}, "difficulty"),
    ({"difficulty": "99999"}, "difficulty"),
    ({"difficulty": "-1"}, "difficulty"),
    ({"difficulty": "\u0663"}, "difficulty"),  # Arabic-Indic three: a digit, not ASCII
    ({"title": "x" * 1_000_000}, "title"),
    ({"title": "bad\x00title"}, "title"),
    ({"topic": "t" * 201}, "topic"),
    ({"language": "en\n"}, "language"),
    ({"media_url": "https://x.org/" + "v" * 3000}, "media_url"),
])
def test_bad_upload_fields_are_422_and_stage_nothing(api: Api, form: dict[str, str],
                                                     field: str) -> None:
    assert fields_of(upload(api, [("note.md", NOTE)], **form)) == [field]
    assert uploads_left(api) == []


def finished(api: Api, response: Any) -> dict[str, Any]:
    """The job of an accepted upload, once it has ended."""
    assert response.status_code == 202, response.text
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job: dict[str, Any] = api.call("teacher", "GET",
                                       f"/v1/jobs/{response.json()['id']}").json()
        if job["status"] in ("done", "failed"):
            return job
        time.sleep(0.05)
    raise AssertionError("the job did not end in 60 s")


def test_difficulty_in_range_is_taken(api: Api) -> None:
    assert finished(api, upload(api, [("note.md", NOTE)], difficulty=" 4 "))["status"] == "done"
    assert [d["difficulty"] for d in api.call("teacher", "GET", f"/v1/courses/{COURSE}/"
                                              "documents").json()["documents"]
            if d["name"] == "note.md"] == [4]


def test_a_300_character_file_name_is_shortened(api: Api) -> None:
    long_name = "é" * 150 + "x" * 150 + ".md"
    assert finished(api, upload(api, [(long_name, NOTE)]))["status"] == "done"
    names = [d["name"] for d in api.call("teacher", "GET",
                                         f"/v1/courses/{COURSE}/documents").json()["documents"]]
    stored = [n for n in names if n.startswith("é")]
    assert stored == ["é" * 73 + ".md"]  # 2 bytes each: 146 + 3 bytes, under 150


@pytest.mark.parametrize(("raw", "expected"), [
    ("notes.md", "notes.md"),
    ("../../etc/passwd.md", "passwd.md"),
    ("C:\\Users\\ana\\lecture 1.pdf", "lecture 1.pdf"),
    ("a\x00b\ud800c.md", "a_b_c.md"),
    ("x" * 300 + ".md", "x" * (MAX_FILE_NAME_BYTES - 3) + ".md"),
    ("...", ""),
    ("", ""),
])
def test_file_names_are_sanitised_and_shortened(raw: str, expected: str) -> None:
    assert file_name(raw) == expected
    assert len(file_name(raw).encode()) <= MAX_FILE_NAME_BYTES


# -- finding 4: JSON bodies ----------------------------------------------------------------


@pytest.mark.parametrize(("text", "depth"), [
    (b"{}", 1), (b'{"a": [1, [2]]}', 3), (b'"[[[["', 0), (b'["\\"[["]', 1), (b"42", 0),
    (b'{"q": "a\\\\"}', 1), (b'{"q": "a\\\\\\"[[[", "b": [[1]]}', 3), (b'["]]]]", [[[1]]]]', 4),
    (b"", 0),
    # a string scanner that rescans from every quote takes hours on this (quadratic)
    (b'"' + b'\\"' * 300_000 + b"[" * 40, 0),
])
def test_json_depth(text: bytes, depth: int) -> None:
    assert json_depth(text) == depth


@pytest.mark.parametrize("path", [ASK, CHAT, "/v1/courses", "/v1/keys"])
def test_a_100000_deep_body_is_refused_not_500(api: Api, path: str) -> None:
    response = api.call("teacher", "POST", path, content=b"[" * 100_000,
                        headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert error_of(response)["fields"] == [
        {"field": "body", "reason": "JSON nested deeper than 32 levels (api_max_json_depth)"}]


def test_a_body_over_the_size_limit_is_413(api: Api) -> None:
    body = json.dumps({"question": "x" * (1024 * 1024)}).encode()
    response = api.call("student", "POST", ASK, content=body,
                        headers={"content-type": "application/json"})
    assert (response.status_code, error_of(response)["type"]) == (413, "payload_too_large")


def test_a_huge_number_is_a_client_error(api: Api) -> None:
    body = b'{"question": "Bisection?", "level": ' + b"9" * 5000 + b"}"  # past int()'s limit
    response = api.call("student", "POST", ASK, content=body,
                        headers={"content-type": "application/json"})
    assert (response.status_code, error_of(response)) == (
        400, {"type": "http", "message": "There was an error parsing the body", "code": "http",
              "params": {}})
    body = b'{"question": "Bisection?", "level": ' + b"9" * 4000 + b"}"
    response = api.call("student", "POST", ASK, content=body,
                        headers={"content-type": "application/json"})
    assert fields_of(response) == ["level"]


# -- finding 6: signed file URLs die with their key ----------------------------------------


def student_url(api: Api, who: str = "student") -> str:
    hits = api.call(who, "GET", f"/v1/courses/{COURSE}/search",
                    params={"q": "order of convergence of Newton's method"}).json()["hits"]
    url: str = next(h for h in hits if h["document"] == f"{COURSE}:{PDF_DOC}")["url"]
    return url.split("#")[0]


def test_a_url_names_the_key_it_was_minted_for(api: Api) -> None:
    query = parse_qs(urlsplit(student_url(api)).query)
    assert query["key"] == [api.key_ids["student"]]


def test_a_url_stops_when_its_student_is_unenrolled(api: Api) -> None:
    url = student_url(api)
    assert api.client.get(url).status_code == 200
    api.call("teacher", "DELETE", f"/v1/courses/{COURSE}/students/{STUDENT}")
    assert api.client.get(url).status_code == 404
    api.call("teacher", "PUT", f"/v1/courses/{COURSE}/students/{STUDENT}")
    assert api.client.get(url).status_code == 200


@pytest.mark.parametrize("who", ["student", "teacher"])
def test_a_url_stops_when_its_key_is_revoked(api: Api, who: str) -> None:
    url = student_url(api, who)
    assert api.client.get(url).status_code == 200
    api.store.revoke_key(api.key_ids[who])
    gone = api.client.get(url)
    assert (gone.status_code, error_of(gone)["type"]) == (401, "authentication")


def test_a_url_cannot_be_moved_to_another_key(api: Api) -> None:
    url = student_url(api)
    moved = url.replace(f"key={api.key_ids['student']}", f"key={api.key_ids['teacher']}")
    assert api.client.get(moved).status_code == 401


def test_a_url_of_a_key_without_a_key_id_never_opens(api: Api) -> None:
    signer = api.app.state.coursetutor.signer  # not bound to any key
    assert api.client.get(signer.url("default", COURSE, PDF_DOC)).status_code == 401


# -- finding 7: limits per client address and per student ---------------------------------


@pytest.fixture(params=["memory", "redis"])
def limited(request: pytest.FixtureRequest, sample: Sample, embedder: EmbeddingModel,
            tmp_path: Path) -> Iterator[Api]:
    """Per address: 3 failed authentications and 2 signed-URL fetches a minute; per
    student: 4 requests a minute. In memory, and in Redis."""
    extra: dict[str, Any] = {}
    if request.param == "redis":
        extra["redis"] = request.getfixturevalue("redis_url")
    with open_api(sample, embedder, tmp_path / "data", api_rate_failed_auth_per_minute=3,
                  api_rate_signed_url_per_minute=2, api_rate_student_per_minute=4,
                  api_secret="test-secret", **extra) as found:
        yield found


def test_failed_authentications_are_limited_per_address(limited: Api) -> None:
    api = limited
    codes = [api.call(who, "GET", "/v1/me").status_code
             for who in ("none", "malformed", "unknown", "revoked", "none")]
    assert codes == [401, 401, 401, 429, 429]
    refused = api.call("unknown", "GET", "/v1/me")
    assert int(refused.headers["retry-after"]) > 0
    assert error_of(refused)["message"].startswith(
        "rate limit: 3 requests per minute for this client address; retry in ")
    assert api.call("teacher", "GET", "/v1/me").status_code == 200  # a good key still works
    elsewhere = api.client.__class__(api.app, client=("10.9.8.7", 4000))
    assert elsewhere.get("/v1/me").status_code == 401  # another address has its own budget
    assert api.metric('coursetutor_rate_limited_total{role="failed_auth"}') == 3


def test_signed_url_fetches_are_limited_per_address(limited: Api) -> None:
    url = student_url(limited)
    codes = [limited.client.get(url).status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    refused = limited.client.get(url)
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0


def test_several_keys_of_one_student_share_one_budget(limited: Api) -> None:
    api = limited
    _, second = mint_key(api.store, "default", "student", STUDENT)
    extra = {"Authorization": f"Bearer {second}"}
    assert [api.call("student", "GET", "/v1/me").status_code for _ in range(2)] == [200] * 2
    assert [api.client.get("/v1/me", headers=extra).status_code for _ in range(3)] == [
        200, 200, 429]
    refused = api.call("student", "GET", "/v1/me")
    assert error_of(refused)["message"].startswith(
        "rate limit: 4 requests per minute for this student; retry in ")
    assert api.call("outsider", "GET", "/v1/me").status_code == 200  # another student


# -- finding 7: redirects, file modes, first keys ------------------------------------------


@pytest.mark.parametrize("path", ["/v1/me/", "/v1/courses/"])
def test_a_redirect_never_goes_to_the_host_header(api: Api, path: str) -> None:
    response = api.call("student", "GET", path, headers={"host": "evil.example"},
                        follow_redirects=False)
    assert response.status_code in (307, 308)
    assert response.headers["location"] == path.rstrip("/")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_store_and_its_files_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = SQLiteStore(data / "coursetutor.db")
    try:
        store.ensure_tenant("default")
        assert {p.name: mode(p) for p in data.iterdir()} == {
            "coursetutor.db": 0o600, "coursetutor.db-wal": 0o600, "coursetutor.db-shm": 0o600}
        assert mode(data) == 0o700
    finally:
        store.close()
    files = FileStore(data / "files")
    written = files.put("default", "c", "d", "abc", ".md", b"# x\n")
    assert (mode(data / "files"), mode(written)) == (0o700, 0o600)


def test_a_world_readable_store_loses_its_world_bits(tmp_path: Path) -> None:
    path = tmp_path / "old" / "coursetutor.db"
    SQLiteStore(path).close()
    path.chmod(0o644)  # as versions before this one left it
    SQLiteStore(path).close()
    assert mode(path) == 0o640


@pytest.fixture
def data_dir(tmp_path: Path, sample: Sample, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no ./coursetutor.toml
    copy_db(sample.db_path, tmp_path / "data" / "coursetutor.db")
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: None)
    monkeypatch.setattr(logs, "setup", lambda level: None)
    return tmp_path / "data"


def test_first_keys_never_reach_a_log(data_dir: Path) -> None:
    result = CliRunner().invoke(cli, ["--data-dir", str(data_dir), "serve"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    saved = data_dir / cli_serve.FIRST_KEYS
    assert "ct_" not in result.stderr and "ct_" not in result.stdout
    assert result.stderr.splitlines()[0] == (
        f"New keys ({result.stderr.split('(')[1].split(',')[0]}, student-1) written to {saved} "
        "(mode 0600), not printed: stderr is not a terminal. Read them, then delete the file.")
    lines = saved.read_text().splitlines()
    assert mode(saved) == 0o600 and len(lines) == 2
    assert lines[0].startswith("New teacher key (") and ", shown only now: ct_" in lines[0]
    assert lines[1].startswith("New student key (student-1), shown only now: ct_")


def test_first_keys_go_to_a_terminal(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_serve, "_terminal", lambda: True)
    result = CliRunner().invoke(cli, ["--data-dir", str(data_dir), "serve"],
                                catch_exceptions=False)
    assert result.stderr.count("shown only now: ct_") == 2
    assert not (data_dir / cli_serve.FIRST_KEYS).exists()


def test_settings_of_the_edge_are_checked() -> None:
    assert (Settings().api_max_json_depth, Settings().api_max_json_bytes) == (32, 1024 * 1024)


# -- fuzz: no input reaches a 500 ----------------------------------------------------------


NASTY = [SURROGATE, "\x00", "\x1b[2J", "x" * 5000, "9" * 5000, "-1", "²", "..", "%", "a:b",
         "../../etc/passwd", "\udfff\ud800", "\u202e", "\ufeff", "", " ", "null", "[]", "{}",
         COURSE, f"{COURSE}:{PDF_DOC}", "🙂" * 50]
CALLERS = ["admin", "teacher", "student", "none", "malformed"]


def nasty_value(rng: random.Random) -> Any:
    """A JSON value of the kinds that reach 500s in careless servers."""
    pick = rng.randrange(9)
    if pick == 0:
        return rng.choice(NASTY)
    if pick == 1:
        return rng.choice([10 ** 400, -(10 ** 30), 1e308, -0.0, True, None])
    if pick == 2:
        return "".join(chr(rng.randrange(0, 0x110000)) for _ in range(rng.randrange(1, 30)))
    if pick == 3:
        return [nasty_value(rng) for _ in range(rng.randrange(3))]
    if pick == 4:
        return {rng.choice(["text", "type", "role", "content", "x"]): nasty_value(rng)}
    return rng.choice(NASTY[:14]) + "".join(rng.choice("ab\n\t ") for _ in range(3))


def nasty_body(rng: random.Random, path: str) -> bytes:
    pick = rng.randrange(6)
    if pick == 0:
        return rng.randbytes(rng.randrange(1, 200))
    if pick == 1:
        return rng.choice([b"[" * 50_000, b"{\"a\":" * 40 + b"1" + b"}" * 40, b"", b"nul"])
    fields = ["question", "session_id", "student", "level", "model", "messages", "stream",
              "user", "id", "title", "language", "allow_solutions", "role", "tenant", "name"]
    body = {name: nasty_value(rng) for name in rng.sample(fields, rng.randrange(1, 6))}
    if "chat" in path and rng.random() < 0.5:
        body["messages"] = [{"role": "user", "content": nasty_value(rng)}]
        body["model"] = rng.choice([COURSE, nasty_value(rng)])
    return json.dumps(body, ensure_ascii=True).encode()


def nasty_path(rng: random.Random, path: str, method: str) -> str:
    """`path` with its {parameters} filled with nasty values (now and then a real course)."""
    for name in re.findall(r"{(\w+)}", path):
        value = str(rng.choice(NASTY)) if rng.random() < 0.7 else COURSE
        if value == COURSE and (method == "DELETE" or path.endswith("/check")):
            value = "no-such-thing"  # neither remove the course nor start background work
        path = path.replace("{" + name + "}", quote(value.encode("utf-8", "surrogatepass"),
                                                    safe=""))
    return path


def safe_text(value: Any) -> str:
    """`value` as text that a multipart form can carry (surrogates replaced)."""
    return str(value).encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def test_fuzz_no_malformed_request_is_a_5xx(sample: Sample, embedder: EmbeddingModel,
                                            tmp_path: Path) -> None:
    rng = random.Random(15)
    statuses: dict[int, int] = {}
    with open_api(sample, embedder, tmp_path / "data", fake=ScriptedLLM(),
                  api_rate_student_per_minute=0, api_rate_teacher_per_minute=0,
                  api_rate_admin_per_minute=0, api_rate_failed_auth_per_minute=0) as api:
        routes = [(path, method.upper()) for path, ops in api.app.openapi()["paths"].items()
                  for method in ops if path.startswith("/v1/")]
        for i in range(300):
            path, method = routes[i % len(routes)]
            params = {rng.choice(["q", "k", "student", "type", "days", "exp", "sig", "key",
                                  "tenant", "mode"]): safe_text(rng.choice(NASTY))
                      for _ in range(rng.randrange(3))}
            kwargs: dict[str, Any] = {"params": params}
            if path.endswith("/documents") and method == "POST":
                name = rng.choice(NASTY) + rng.choice([".md", ".pdf", ".exe", ""])
                kwargs["files"] = [("files", (safe_text(name), rng.randbytes(20), "text/plain"))]
                kwargs["data"] = {rng.choice(["difficulty", "title", "type", "topic", "language",
                                              "media_url"]): safe_text(rng.choice(NASTY))}
            elif method in ("POST", "PUT", "PATCH"):
                kwargs["content"] = nasty_body(rng, path)
                kwargs["headers"] = {"content-type": "application/json"}
            response = api.call(rng.choice(CALLERS), method, nasty_path(rng, path, method),
                                **kwargs)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            assert response.status_code < 500, (method, path, response.text)
    assert sum(statuses.values()) == 300 and statuses.get(422, 0) > 50
