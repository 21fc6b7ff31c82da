"""Courses, enrolments, documents, uploads as ingest jobs, and the original files."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np
import numpy.typing as npt
import pytest

from coursetutor.retrieval import EmbeddingModel

from .api_support import (
    COURSE,
    COURSE_B,
    LECTURE_DOC,
    PDF_DOC,
    SOLUTION_DOC,
    STUDENT,
    Api,
    assert_clean,
    coded,
    error_of,
    open_api,
)
from .support import SAMPLE_DIR, Sample

LIMIT = 4096  # api_max_upload_bytes of these tests
SAMPLE_COURSE_JSON = {"id": COURSE, "title": "Numerical Methods 101", "language": "en",
                      "documents": 6, "chunks": 76, "allow_solutions": False}
SAMPLE_DOCS = ["exercises-01-md", "lecture-01-riassunto-it-md", LECTURE_DOC,
               "lecture-01-video-srt", PDF_DOC, SOLUTION_DOC]
REGULA_FALSI = (b"# Regula falsi\n\nThe regula falsi method keeps a bracket, as bisection "
                b"does, but cuts it where the secant line through the two ends crosses zero. "
                b"It converges faster than bisection while keeping the guarantee of a bracket."
                b"\n")
CORRUPT_PDF = b"%PDF-1.7\n1 0 obj <<>> broken beyond repair\n"
SOLUTION_QUERY = "bisection steps on the cubic: final answer c_5 and error bound"


@pytest.fixture
def api(sample: Sample, embedder: EmbeddingModel, tmp_path: Path) -> Iterator[Api]:
    """A private app: these tests change courses and documents."""
    with open_api(sample, embedder, tmp_path / "data", api_max_upload_bytes=LIMIT,
                  api_secret="test-secret") as found:
        yield found


def upload(api: Api, who: str, files: list[tuple[str, bytes]], course: str = COURSE,
           **form: str) -> Any:
    return api.call(who, "POST", f"/v1/courses/{course}/documents", data=form,
                    files=[("files", (name, data, "application/octet-stream"))
                           for name, data in files])


def wait_for_job(api: Api, job_id: str, seconds: float = 180) -> dict[str, Any]:
    """Poll the job until it ends."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        response = api.call("teacher", "GET", f"/v1/jobs/{job_id}")
        if response.status_code == 429:  # polled faster than the rate limit on a slow machine
            time.sleep(float(response.headers.get("Retry-After", "1")))
            continue
        job: dict[str, Any] = response.json()
        if job["status"] in ("done", "failed"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish in {seconds} s")


def uploads_left(api: Api) -> list[Path]:
    folder = api.settings.data_dir / "uploads"
    return sorted(folder.rglob("*")) if folder.exists() else []


def eventually(check: Callable[[], bool], seconds: float = 5) -> bool:
    """True once `check` is (the job thread tidies up just after it records the status)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def doc_ids(api: Api, who: str) -> list[str]:
    response = api.call(who, "GET", f"/v1/courses/{COURSE}/documents")
    return [d["document"] for d in response.json()["documents"]]


# -- courses -------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["admin", "teacher", "student"])
def test_get_course(api: Api, who: str) -> None:
    response = api.call(who, "GET", f"/v1/courses/{COURSE}")
    assert (response.status_code, response.json()) == (200, SAMPLE_COURSE_JSON)


def test_list_courses(api: Api) -> None:
    assert api.call("student", "GET", "/v1/courses").json() == {"courses": [SAMPLE_COURSE_JSON]}
    assert api.call("outsider", "GET", "/v1/courses").json() == {"courses": []}


def test_create_a_course(api: Api) -> None:
    body = {"id": "calculus-1", "title": "Calculus 1", "language": "it", "allow_solutions": True}
    created = api.call("teacher", "POST", "/v1/courses", json=body)
    expected = {**body, "documents": 0, "chunks": 0}
    assert (created.status_code, created.json()) == (201, expected)
    assert api.call("teacher", "GET", "/v1/courses/calculus-1").json() == expected
    listed = api.call("teacher", "GET", "/v1/courses").json()["courses"]
    assert [c["id"] for c in listed] == ["calculus-1", COURSE]


@pytest.mark.parametrize("who", ["teacher", "admin"])
def test_a_taken_course_id_is_409(api: Api, who: str) -> None:
    response = api.call(who, "POST", "/v1/courses", json={"id": COURSE, "title": "Again"})
    assert (response.status_code, error_of(response)) == (
        409, coded("conflict", f"course {COURSE!r} already exists", "course_exists",
                   course=COURSE))
    assert api.call(who, "GET", f"/v1/courses/{COURSE}").json() == SAMPLE_COURSE_JSON


def test_another_tenant_may_reuse_a_course_id(api: Api) -> None:
    response = api.call("teacher_b", "POST", "/v1/courses", json={"id": COURSE})
    assert response.status_code == 201
    assert [c["id"] for c in api.call("teacher_b", "GET", "/v1/courses").json()["courses"]] == [
        COURSE_B, COURSE]
    assert api.call("teacher", "GET", f"/v1/courses/{COURSE}").json() == SAMPLE_COURSE_JSON
    assert api.call("teacher_b", "GET", f"/v1/courses/{COURSE}").json()["documents"] == 0


@pytest.mark.parametrize(("body", "status", "message"), [
    ({"id": "bad id!"}, 400, "course id 'bad id!' is not valid: use 1-128 letters, digits and "
                             "_ . @ -, starting with a letter or digit"),
    ({"id": "a:b"}, 400, "course id 'a:b' is not valid: use 1-128 letters, digits and "
                         "_ . @ -, starting with a letter or digit"),
])
def test_invalid_course_ids_are_400(api: Api, body: dict[str, Any], status: int,
                                    message: str) -> None:
    response = api.call("teacher", "POST", "/v1/courses", json=body)
    assert (response.status_code, error_of(response)) == (status, coded(
        "input", message, "invalid_id", kind="course", value=body["id"]))


@pytest.mark.parametrize(("body", "fields"), [
    ({}, ["id"]),
    ({"id": ""}, ["id"]),
    ({"id": "x", "language": "e"}, ["language"]),
    ({"id": "x", "allow_solutions": "sometimes"}, ["allow_solutions"]),
])
def test_invalid_course_bodies_are_422(api: Api, body: dict[str, Any],
                                       fields: list[str]) -> None:
    response = api.call("teacher", "POST", "/v1/courses", json=body)
    found = error_of(response)
    assert (response.status_code, found["type"]) == (422, "validation")
    assert [f["field"] for f in found["fields"]] == fields
    assert found["message"] == "; ".join(f"{f['field']}: {f['reason']}"
                                          for f in found["fields"])


def test_patch_a_course(api: Api) -> None:
    response = api.call("teacher", "PATCH", f"/v1/courses/{COURSE}",
                        json={"title": "Numerical Methods", "allow_solutions": True})
    expected = {**SAMPLE_COURSE_JSON, "title": "Numerical Methods", "allow_solutions": True}
    assert (response.status_code, response.json()) == (200, expected)
    untouched = api.call("teacher", "PATCH", f"/v1/courses/{COURSE}", json={})
    assert untouched.json() == expected


def test_patch_an_unknown_course_is_404(api: Api) -> None:
    response = api.call("teacher", "PATCH", "/v1/courses/no-such-course", json={"title": "x"})
    assert (response.status_code, error_of(response)) == (
        404, coded("not_found", "course 'no-such-course' does not exist", "course_not_found",
                   course="no-such-course"))


def test_delete_a_course_removes_its_files(api: Api) -> None:
    files = api.app.state.coursetutor.workspace.files
    doc = api.store.find_document("default", COURSE, PDF_DOC)
    assert doc is not None and files.find(doc) is not None
    assert api.call("student", "POST", f"/v1/courses/{COURSE}/ask",
                    json={"question": "What is bisection?"}).status_code == 200
    assert api.call("teacher", "DELETE", f"/v1/courses/{COURSE}").status_code == 204
    assert api.call("teacher", "GET", f"/v1/courses/{COURSE}").status_code == 404
    assert files.find(doc) is None
    assert api.store.list_sessions("default", COURSE, STUDENT) == []
    assert api.call("student", "GET", "/v1/me").json()["courses"] == []
    again = api.call("teacher", "DELETE", f"/v1/courses/{COURSE}")
    assert again.status_code == 404


# -- enrolments ----------------------------------------------------------------------------


def test_enrol_and_unenrol(api: Api) -> None:
    path = f"/v1/courses/{COURSE}/students"
    assert api.call("teacher", "GET", path).json()["students"] == [STUDENT]
    assert api.call("outsider", "GET", f"/v1/courses/{COURSE}").status_code == 404
    assert api.call("teacher", "PUT", f"{path}/bob").status_code == 204
    assert api.call("teacher", "PUT", f"{path}/bob").status_code == 204  # idempotent
    assert api.call("teacher", "GET", path).json()["students"] == [STUDENT, "bob"]
    assert api.call("outsider", "GET", f"/v1/courses/{COURSE}").json() == SAMPLE_COURSE_JSON
    assert api.call("outsider", "GET", "/v1/me").json()["courses"] == [COURSE]
    assert api.call("teacher", "DELETE", f"{path}/bob").status_code == 204
    assert api.call("outsider", "GET", f"/v1/courses/{COURSE}").status_code == 404
    missing = api.call("teacher", "DELETE", f"{path}/bob")
    assert (missing.status_code, error_of(missing)) == (
        404, coded("not_found", f"student 'bob' is not enrolled in {COURSE!r}",
                   "student_not_enrolled", student="bob", course=COURSE))


def test_enrol_in_an_unknown_course_is_404(api: Api) -> None:
    response = api.call("teacher", "PUT", "/v1/courses/no-such-course/students/bob")
    assert response.status_code == 404


def test_enrol_an_invalid_student_id_is_400(api: Api) -> None:
    response = api.call("teacher", "PUT", f"/v1/courses/{COURSE}/students/-bob")
    assert (response.status_code, error_of(response)["type"]) == (400, "input")


# -- documents and solutions ---------------------------------------------------------------


def test_documents_of_the_course(api: Api) -> None:
    response = api.call("teacher", "GET", f"/v1/courses/{COURSE}/documents")
    pdf = next(d for d in response.json()["documents"] if d["document"] == PDF_DOC)
    assert pdf == {"id": f"{COURSE}:{PDF_DOC}", "document": PDF_DOC, "course": COURSE,
                   "title": "Lecture 2: Convergence of iterative methods", "type": "lecture",
                   "topic": "convergence of iterative methods", "difficulty": 3,
                   "language": "en", "name": "lecture-02-convergence.pdf", "pages": 6,
                   "chunks": 14, "media_url": ""}
    assert doc_ids(api, "teacher") == SAMPLE_DOCS


def search_types(api: Api, who: str, **params: Any) -> list[str]:
    response = api.call(who, "GET", f"/v1/courses/{COURSE}/search",
                        params={"q": SOLUTION_QUERY, "k": 20, **params})
    assert response.status_code == 200
    return [h["type"] for h in response.json()["hits"]]


def ask_types(api: Api, who: str) -> list[str]:
    response = api.call(who, "POST", f"/v1/courses/{COURSE}/ask",
                        json={"question": "What are the bisection steps for the cubic in "
                                          "solution 1, with the final answer c_5?"})
    return [s["type"] for s in response.json()["sources"]]


def solution_file(api: Api, who: str) -> int:
    response = api.call(who, "GET", f"/v1/documents/{COURSE}:{SOLUTION_DOC}/file")
    status: int = response.status_code
    return status


def test_students_do_not_see_solutions_unless_the_course_allows_them(api: Api) -> None:
    hidden = [d for d in SAMPLE_DOCS if d != SOLUTION_DOC]
    assert doc_ids(api, "student") == hidden
    assert "solution" not in search_types(api, "student")
    assert search_types(api, "student", type="solution") == []
    assert "solution" not in ask_types(api, "student")
    assert solution_file(api, "student") == 404
    missing = api.call("student", "GET", f"/v1/documents/{COURSE}:{SOLUTION_DOC}/file")
    assert error_of(missing) == coded("not_found", f"document {SOLUTION_DOC!r} does not exist",
                                      "document_not_found", document=SOLUTION_DOC)
    # teachers see them all the time
    assert doc_ids(api, "teacher") == SAMPLE_DOCS
    assert set(search_types(api, "teacher", type="solution")) == {"solution"}
    assert solution_file(api, "teacher") == 200

    api.call("teacher", "PATCH", f"/v1/courses/{COURSE}", json={"allow_solutions": True})
    assert doc_ids(api, "student") == SAMPLE_DOCS
    assert set(search_types(api, "student", type="solution")) == {"solution"}
    assert "solution" in search_types(api, "student")
    assert "solution" in ask_types(api, "student")
    assert solution_file(api, "student") == 200

    api.call("teacher", "PATCH", f"/v1/courses/{COURSE}", json={"allow_solutions": False})
    assert doc_ids(api, "student") == hidden
    assert solution_file(api, "student") == 404


def test_old_turns_do_not_sign_solutions_once_they_are_hidden(api: Api) -> None:
    api.call("teacher", "PATCH", f"/v1/courses/{COURSE}", json={"allow_solutions": True})
    sid = api.call("student", "POST", f"/v1/courses/{COURSE}/ask", json={
        "question": "What are the bisection steps for the cubic in solution 1, with the final "
                    "answer c_5?"}).json()["session_id"]
    api.call("teacher", "PATCH", f"/v1/courses/{COURSE}", json={"allow_solutions": False})
    turns = api.call("student", "GET", f"/v1/courses/{COURSE}/sessions/{sid}").json()["turns"]
    assert [s for s in turns[0]["sources"] if s["type"] == "solution"] == []


def test_a_student_url_to_a_solution_closes_when_solutions_are_hidden(api: Api) -> None:
    api.call("teacher", "PATCH", f"/v1/courses/{COURSE}", json={"allow_solutions": True})
    found = api.call("student", "GET", f"/v1/courses/{COURSE}/search", params={
        "q": "bisection steps for the cubic, final answer c_5", "type": "solution"}).json()
    urls = [h["url"].split("#")[0] for h in found["hits"]]
    assert urls and [api.client.get(url).status_code for url in urls] == [200] * len(urls)
    api.call("teacher", "PATCH", f"/v1/courses/{COURSE}", json={"allow_solutions": False})
    assert [api.client.get(url).status_code for url in urls] == [404] * len(urls)


def test_a_teacher_url_to_a_solution_opens_whatever_the_policy(api: Api) -> None:
    found = api.call("teacher", "GET", f"/v1/courses/{COURSE}/search", params={
        "q": "bisection steps for the cubic, final answer c_5", "type": "solution"}).json()
    urls = [h["url"].split("#")[0] for h in found["hits"]]
    assert urls and all("staff=1" in u for u in urls)
    assert [api.client.get(url).status_code for url in urls] == [200] * len(urls)
    forged = urls[0].replace("staff=1&", "")
    assert api.client.get(forged).status_code == 401


def test_delete_a_document_removes_its_file(api: Api) -> None:
    files = api.app.state.coursetutor.workspace.files
    doc = api.store.find_document("default", COURSE, LECTURE_DOC)
    assert doc is not None
    path = files.find(doc)
    assert path is not None and path.is_file()
    response = api.call("teacher", "DELETE", f"/v1/courses/{COURSE}/documents/{LECTURE_DOC}")
    assert response.status_code == 204
    assert not path.exists() and not path.parent.exists()
    assert doc_ids(api, "teacher") == [d for d in SAMPLE_DOCS if d != LECTURE_DOC]
    assert api.call("teacher", "GET", f"/v1/courses/{COURSE}").json()["chunks"] == 76 - 19
    hits = api.call("teacher", "GET", f"/v1/courses/{COURSE}/search",
                    params={"q": "bisection", "k": 50}).json()["hits"]
    assert LECTURE_DOC not in {h["document"].split(":")[1] for h in hits}
    gone = api.call("teacher", "GET", f"/v1/documents/{COURSE}:{LECTURE_DOC}/file")
    assert (gone.status_code, error_of(gone)) == (404, coded(
        "not_found", f"document '{COURSE}:{LECTURE_DOC}' has no stored file", "document_no_file",
        document=f"{COURSE}:{LECTURE_DOC}"))
    again = api.call("teacher", "DELETE", f"/v1/courses/{COURSE}/documents/{LECTURE_DOC}")
    assert again.status_code == 404


# -- files ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("document", "name", "kind"), [
    (PDF_DOC, "lecture-02-convergence.pdf", "application/pdf"),
    (LECTURE_DOC, "lecture-01-root-finding.md", "text/markdown; charset=utf-8"),
    ("lecture-01-video-srt", "lecture-01-video.srt", "text/plain; charset=utf-8"),
])
def test_files_open_with_their_content_type(api: Api, document: str, name: str,
                                            kind: str) -> None:
    response = api.call("student", "GET", f"/v1/documents/{COURSE}:{document}/file")
    assert response.status_code == 200
    assert response.content == (SAMPLE_DIR / name).read_bytes()
    assert (response.headers["content-type"], response.headers["content-disposition"]) == (
        kind, f'inline; filename="{name}"')


@pytest.mark.parametrize("ref", [f"{COURSE}:no-such-doc", f"{COURSE}", "no-such-course:x"])
def test_unknown_files_are_404(api: Api, ref: str) -> None:
    response = api.call("teacher", "GET", f"/v1/documents/{ref}/file")
    assert (response.status_code, error_of(response)["type"]) == (404, "not_found")


def pdf_hit(api: Api) -> dict[str, Any]:
    hits = api.call("student", "GET", f"/v1/courses/{COURSE}/search",
                    params={"q": "order of convergence of Newton's method"}).json()["hits"]
    return next(h for h in hits if h["document"] == f"{COURSE}:{PDF_DOC}")


def test_pdf_citations_point_at_their_page(api: Api) -> None:
    hit = pdf_hit(api)
    assert hit["page"] is not None and hit["url"].endswith(f"#page={hit['page']}")
    assert hit["url"].startswith(f"/v1/documents/{COURSE}:{PDF_DOC}/file?tenant=default&exp=")
    sources = api.call("student", "POST", f"/v1/courses/{COURSE}/ask",
                       json={"question": "What is the order of convergence of Newton's method?"}
                       ).json()["sources"]
    pdfs = [s for s in sources if s["type"] == "lecture" and s["page"] is not None]
    assert pdfs and all(s["url"].endswith(f"#page={s['page']}") for s in pdfs)


def signed(api: Api) -> tuple[str, dict[str, str]]:
    """The path and query of a signed URL from a search hit (without the fragment)."""
    parts = urlsplit(pdf_hit(api)["url"])
    return parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()}


def test_a_signed_url_opens_without_a_key(api: Api) -> None:
    path, query = signed(api)
    response = api.client.get(path, params=query)
    assert (response.status_code, response.headers["content-type"]) == (200, "application/pdf")
    assert response.content == (SAMPLE_DIR / "lecture-02-convergence.pdf").read_bytes()


def expired(api: Api) -> dict[str, str]:
    signer = api.app.state.coursetutor.signer
    url = signer.url("default", COURSE, PDF_DOC, now=time.time() - 2 * signer.seconds - 7200)
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


@pytest.mark.parametrize("change", ["sig", "exp", "tenant", "document", "expired"])
def test_a_bad_signature_falls_back_to_the_key(api: Api, change: str) -> None:
    path, query = signed(api)
    if change == "sig":
        query["sig"] = ("0" if query["sig"][0] != "0" else "1") + query["sig"][1:]
    elif change == "exp":
        query["exp"] = str(int(query["exp"]) + 3600)
    elif change == "tenant":
        query["tenant"] = "uni-b"
    elif change == "document":
        path = path.replace(PDF_DOC, SOLUTION_DOC)
    else:
        query = expired(api)
    without = api.client.get(path, params=query)
    assert (without.status_code, error_of(without)) == (401, coded(
        "authentication", "no API key: send 'Authorization: Bearer ct_...'", "no_key"))
    with_key = api.client.get(path, params=query, headers=api.headers("teacher"))
    assert with_key.status_code == 200
    if change == "document":  # a student key still may not open a solution
        assert api.client.get(path, params=query,
                              headers=api.headers("student")).status_code == 404


def test_a_signed_url_of_a_deleted_document_is_404(api: Api) -> None:
    path, query = signed(api)
    api.call("teacher", "DELETE", f"/v1/courses/{COURSE}/documents/{PDF_DOC}")
    response = api.client.get(path, params=query)
    assert response.status_code == 404


# -- uploads -------------------------------------------------------------------------------


def test_upload_a_good_file_and_a_corrupt_pdf(api: Api) -> None:
    response = upload(api, "teacher", [("regula-falsi.md", REGULA_FALSI),
                                       ("broken.pdf", CORRUPT_PDF)],
                      type="lecture", topic="root finding", difficulty="3")
    assert response.status_code == 202
    queued = response.json()
    assert queued["id"].startswith("j_")
    assert {k: v for k, v in queued.items() if k not in ("id", "created", "updated")} == {
        "course": COURSE, "status": "queued", "files_total": 2, "files_done": 0,
        "stage": "queued", "current": "", "embedded": 0, "to_embed": 0, "report": None,
        "error": "", "error_code": ""}
    job = wait_for_job(api, queued["id"])
    report = job.pop("report")
    assert {k: v for k, v in job.items() if k not in ("created", "updated")} == {
        "id": queued["id"], "course": COURSE, "status": "done", "files_total": 2,
        "files_done": 2, "stage": "done", "current": job["current"],
        "embedded": job["embedded"], "to_embed": job["to_embed"], "error": "", "error_code": ""}
    assert job["current"] in ("regula-falsi.md", "broken.pdf")
    assert job["updated"] >= job["created"] == queued["created"]
    good, bad = sorted(report["files"], key=lambda f: f["name"] != "regula-falsi.md")
    assert (good["name"], good["status"], good["document"], good["chunks"]) == (
        "regula-falsi.md", "added", "regula-falsi-md", 1)
    assert (bad["name"], bad["status"], bad["chunks"]) == ("broken.pdf", "failed", 0)
    # the line's code and its params, for the page to say it in its language
    assert (good["code"], good["params"]) == ("", {})
    assert (bad["code"], bad["params"]) == ("pdf_unreadable", {"file": "broken.pdf"})
    assert bad["message"] and "\n" not in bad["message"]
    assert_clean(bad["message"], api.settings.data_dir)
    assert (report["totals"]["files"], report["totals"]["failed"]) == (2, 1)

    assert doc_ids(api, "teacher") == sorted([*SAMPLE_DOCS, "regula-falsi-md"])
    doc = next(d for d in api.call("teacher", "GET", f"/v1/courses/{COURSE}/documents").json()[
        "documents"] if d["document"] == "regula-falsi-md")
    assert (doc["title"], doc["type"], doc["topic"], doc["difficulty"], doc["name"]) == (
        "Regula falsi", "lecture", "root finding", 3, "regula-falsi.md")
    hits = api.call("student", "GET", f"/v1/courses/{COURSE}/search",
                    params={"q": "regula falsi secant line bracket", "k": 1}).json()["hits"]
    assert hits[0]["document"] == f"{COURSE}:regula-falsi-md"
    stored = api.call("student", "GET", f"/v1/documents/{COURSE}:regula-falsi-md/file")
    assert stored.content == REGULA_FALSI
    listed = api.call("teacher", "GET", f"/v1/courses/{COURSE}/jobs").json()["jobs"]
    assert [j["id"] for j in listed] == [queued["id"]]
    assert eventually(lambda: uploads_left(api) == [])
    assert eventually(lambda: api.metric('coursetutor_ingest_jobs_total{status="done"}') == 1)


def test_an_upload_where_every_file_fails_is_a_failed_job(api: Api) -> None:
    response = upload(api, "teacher", [("broken.pdf", CORRUPT_PDF)])
    job = wait_for_job(api, response.json()["id"])
    assert (job["status"], job["error"], job["error_code"], job["files_done"]) == (
        "failed", "no file could be ingested", "no_file_ingested", 1)
    assert [f["status"] for f in job["report"]["files"]] == ["failed"]
    assert doc_ids(api, "teacher") == SAMPLE_DOCS
    assert eventually(lambda: api.metric('coursetutor_ingest_jobs_total{status="failed"}') == 1)
    assert eventually(lambda: uploads_left(api) == [])


def test_upload_metadata_is_checked(api: Api) -> None:
    response = upload(api, "teacher", [("notes.md", b"# Notes\n")], difficulty="hard")
    reason = "must be a whole number 1-5, got 'hard'"
    assert (response.status_code, error_of(response)) == (422, {
        "type": "validation", "message": f"difficulty: {reason}", "code": "validation",
        "params": {"fields": "difficulty"},
        "fields": [{"field": "difficulty", "reason": reason}]})
    response = upload(api, "teacher", [("notes.md", b"# Notes\n")], type="poem")
    assert (response.status_code, error_of(response)) == (400, {
        "type": "input", "code": "invalid_doc_type", "params": {"value": "poem"},
        "message": "unknown document type 'poem'; valid: lecture, slides, "
                                    "textbook, exercise, solution, exam, transcript, summary"})
    assert api.call("teacher", "GET", f"/v1/courses/{COURSE}/jobs").json() == {"jobs": []}
    assert uploads_left(api) == []


def test_an_upload_without_files_is_400(api: Api) -> None:
    response = api.call("teacher", "POST", f"/v1/courses/{COURSE}/documents",
                        data={"type": "lecture"})
    assert (response.status_code, error_of(response)) == (400, coded(
        "input", "no files: send them in the multipart field 'files'", "no_files"))


@pytest.mark.parametrize(("size", "message"), [
    (LIMIT + 1, f"the files are larger than {LIMIT} bytes (api_max_upload_bytes)"),
    (LIMIT + 70 * 1024, None),  # refused from its Content-Length, before the body is read
])
def test_an_upload_over_the_limit_is_413_and_keeps_nothing(api: Api, size: int,
                                                           message: str | None) -> None:
    response = upload(api, "teacher", [("small.md", b"# Small\n\nfine\n"),
                                       ("big.md", b"# Big\n\n" + b"x" * size)])
    found = error_of(response)
    assert (response.status_code, found["type"]) == (413, "payload_too_large")
    if message is not None:
        assert found["message"] == message
    else:
        assert found["message"].endswith(f"bytes; the limit is {LIMIT} bytes "
                                         "(api_max_upload_bytes)")
    assert api.call("teacher", "GET", f"/v1/courses/{COURSE}/jobs").json() == {"jobs": []}
    assert doc_ids(api, "teacher") == SAMPLE_DOCS
    assert uploads_left(api) == []


def test_an_upload_at_the_limit_is_accepted(api: Api) -> None:
    body = b"# Exactly at the limit\n\n"
    body += b"word " * ((LIMIT - len(body)) // 5)
    body += b"." * (LIMIT - len(body))
    response = upload(api, "teacher", [("at-limit.md", body)])
    assert response.status_code == 202
    assert wait_for_job(api, response.json()["id"])["status"] == "done"


@pytest.mark.parametrize("name", ["notes.docx", "slides.pptx", "noextension"])
def test_an_unsupported_file_type_is_415(api: Api, name: str) -> None:
    response = upload(api, "teacher", [("ok.md", b"# Fine\n"), (name, b"PK\x03\x04 zip")])
    found = error_of(response)
    assert (response.status_code, found["type"]) == (415, "unsupported_file")
    assert found["message"].startswith(f"{name}: unsupported file type; supported: ")
    assert ".pdf" in found["message"] and ".md" in found["message"]
    assert api.call("teacher", "GET", f"/v1/courses/{COURSE}/jobs").json() == {"jobs": []}
    assert uploads_left(api) == []


def test_upload_file_names_cannot_leave_the_upload_folder(api: Api) -> None:
    response = upload(api, "teacher", [("../../escape.md", REGULA_FALSI)])
    assert response.status_code == 202
    job = wait_for_job(api, response.json()["id"])
    assert [f["name"] for f in job["report"]["files"]] == ["escape.md"]
    assert not (api.settings.data_dir / "escape.md").exists()


def test_two_files_with_one_name_in_one_upload_are_refused(api: Api) -> None:
    first, second = b"# Notes\n\nRegula falsi keeps a bracket.\n", b"# Notes\n\nSecant.\n"
    response = upload(api, "teacher", [("notes.md", first), ("notes.md", second)])
    assert (response.status_code, error_of(response)) == (400, coded(
        "input", "two files named notes.md in one upload: rename one", "same_file_names",
        files="notes.md"))
    stored = api.call("teacher", "GET", f"/v1/documents/{COURSE}:notes-md/file")
    assert stored.status_code == 404


def test_upload_to_an_unknown_course_is_404(api: Api) -> None:
    response = upload(api, "teacher", [("notes.md", b"# Notes\n")], course="no-such-course")
    assert (response.status_code, error_of(response)) == (
        404, coded("not_found", "course 'no-such-course' does not exist", "course_not_found",
                   course="no-such-course"))


def test_jobs_of_an_unknown_course_are_404(api: Api) -> None:
    response = api.call("teacher", "GET", "/v1/courses/no-such-course/jobs")
    assert response.status_code == 404


def test_a_job_of_another_tenant_is_404(api: Api) -> None:
    job_id = upload(api, "teacher", [("regula-falsi.md", REGULA_FALSI)]).json()["id"]
    wait_for_job(api, job_id)
    for who, status in (("teacher_b", 404), ("student", 403), ("student_b", 403)):
        response = api.call(who, "GET", f"/v1/jobs/{job_id}")
        assert response.status_code == status
        assert_clean(response.text, api.settings.data_dir)


class GatedEmbedder(EmbeddingModel):
    """The real embedder, holding passage batches after the first until released."""

    def __init__(self, inner: EmbeddingModel) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.batches = 0
        self.waiting = threading.Event()
        self.release = threading.Event()

    def embed_batch(self, texts: list[str], is_query: bool) -> npt.NDArray[np.float32]:
        if not is_query:
            self.batches += 1
            if self.batches > 1:
                self.waiting.set()
                self.release.wait(10)
        return self.inner.embed_batch(texts, is_query)

    def token_count(self, text: str) -> int:
        return self.inner.token_count(text)


def test_a_running_job_reports_its_progress(sample: Sample, embedder: EmbeddingModel,
                                            tmp_path: Path) -> None:
    gated = GatedEmbedder(embedder)
    text = "# Fixed-point iteration\n\n" + "\n\n".join(
        f"## Step {i}\n\nIteration {i} of the fixed point map moves the estimate x_{i} closer "
        f"to the root when the derivative of g stays below one near it, step {i}." for i in
        range(1, 9))
    with open_api(sample, gated, tmp_path / "data", embed_batch_size=1,
                  chunk_target_tokens=30, chunk_max_tokens=40) as api:
        job_id = upload(api, "teacher", [("fixed-point.md", text.encode())]).json()["id"]
        assert gated.waiting.wait(10)
        running = api.call("teacher", "GET", f"/v1/jobs/{job_id}").json()
        gated.release.set()
        done = wait_for_job(api, job_id)
    assert {k: v for k, v in running.items() if k not in ("created", "updated", "to_embed")} == {
        "id": job_id, "course": COURSE, "status": "running", "files_total": 1, "files_done": 0,
        "stage": "embedding", "current": "fixed-point.md", "embedded": 1, "report": None,
        "error": "", "error_code": ""}
    (file,) = done["report"]["files"]
    assert running["to_embed"] == file["embedded"] == file["chunks"] > 1
    # a finished job reports everything it embedded, of as many to embed
    assert (done["status"], done["stage"], done["files_done"], done["embedded"],
            done["to_embed"]) == ("done", "done", 1, file["embedded"], file["embedded"])
