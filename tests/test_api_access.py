"""Keys, roles and tenants over HTTP: who may call which route, and what the others get."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coursetutor.retrieval import EmbeddingModel
from coursetutor.types import Job

from .api_support import (
    BAD_KEYS,
    CALLERS,
    CONCEPT,
    COURSE,
    COURSE_B,
    LECTURE_DOC,
    OUTSIDER,
    STUDENT,
    TENANT_B,
    Api,
    assert_clean,
    coded,
    error_of,
    open_api,
)
from .support import Sample

JOB_A = "j_0000tenanta0000"


@pytest.fixture(scope="module")
def api(sample: Sample, embedder: EmbeddingModel,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """Passages only; tenant A has a finished job and one session of its student."""
    # hundreds of bad-key probes from one address: its limit is tested in test_abuse_edge
    with open_api(sample, embedder, tmp_path_factory.mktemp("api-access"),
                  api_rate_failed_auth_per_minute=0, api_rate_failed_auth_per_hour=0) as found:
        found.store.add_job(Job(JOB_A, "default", COURSE, "done", 1, 1, "done",
                                created=time.time(), updated=time.time()))
        yield found


@pytest.fixture(scope="module")
def session_a(api: Api) -> str:
    """A session of tenant A's student."""
    sid: str = api.ask("student").json()["session_id"]
    return sid


# -- operations routes ---------------------------------------------------------------------


def test_healthz(api: Api) -> None:
    response = api.client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_readyz_without_a_model(api: Api) -> None:
    response = api.client.get("/readyz")
    assert (response.status_code, response.json()) == (200, {
        "status": "ready", "store": "ok", "llm": "off (llm_backend = none: passages only)"})


def test_openapi_lists_the_routes(api: Api) -> None:
    paths = api.client.get("/openapi.json").json()["paths"]
    assert {"/v1/me", "/v1/courses/{course}/ask", "/v1/chat/completions",
            "/v1/documents/{ref}/file", "/v1/jobs/{job}"} <= set(paths)


@pytest.mark.parametrize(("path", "kind"), [("/", "text/html"), ("/teacher", "text/html")])
def test_pages_need_no_key(api: Api, path: str, kind: str) -> None:
    response = api.client.get(path)
    assert (response.status_code, response.headers["content-type"].split(";")[0]) == (200, kind)


# -- keys ----------------------------------------------------------------------------------

BAD_KEY_MESSAGES = {
    "none": "no API key: send 'Authorization: Bearer ct_...'",
    "malformed": "malformed API key",
    "unknown": "unknown API key",
    "revoked": "this API key was revoked",
}
BAD_KEY_CODES = {"none": "no_key", "malformed": "malformed_key", "unknown": "unknown_key",
                 "revoked": "key_revoked"}
KEYED_ROUTES = [
    ("GET", "/v1/me", None),
    ("GET", "/v1/courses", None),
    ("GET", f"/v1/courses/{COURSE}", None),
    ("GET", f"/v1/courses/{COURSE}/documents", None),
    ("GET", f"/v1/courses/{COURSE}/search?q=bisection", None),
    ("POST", f"/v1/courses/{COURSE}/ask", {"question": CONCEPT}),
    ("POST", "/v1/chat/completions",
     {"model": COURSE, "messages": [{"role": "user", "content": CONCEPT}]}),
    ("GET", f"/v1/courses/{COURSE}/sessions", None),
    ("GET", f"/v1/documents/{COURSE}:{LECTURE_DOC}/file", None),
    ("GET", f"/v1/jobs/{JOB_A}", None),
    ("GET", "/v1/keys", None),
    ("GET", "/v1/tenants", None),
    ("POST", "/v1/courses", {"id": "never-made"}),
    ("DELETE", f"/v1/courses/{COURSE}", None),
]


@pytest.mark.parametrize("who", list(BAD_KEY_MESSAGES))
@pytest.mark.parametrize(("method", "path", "body"), KEYED_ROUTES)
def test_no_or_bad_key_is_401(api: Api, who: str, method: str, path: str,
                              body: dict[str, Any] | None) -> None:
    response = api.call(who, method, path, json=body)
    assert response.status_code == 401
    assert error_of(response) == coded("authentication", BAD_KEY_MESSAGES[who],
                                       BAD_KEY_CODES[who])


def test_the_key_may_come_in_x_api_key(api: Api) -> None:
    response = api.client.get("/v1/me", headers={"X-API-Key": api.keys["teacher"]})
    assert (response.status_code, response.json()["role"]) == (200, "teacher")


def test_a_key_with_a_wrong_secret_is_401(api: Api) -> None:
    key_id = api.key_ids["teacher"]
    response = api.client.get("/v1/me",
                              headers={"Authorization": f"Bearer ct_{key_id}_{'B' * 43}"})
    assert (response.status_code, error_of(response)) == (
        401, coded("authentication", "unknown API key", "unknown_key"))


@pytest.mark.parametrize(("who", "tenant", "student", "courses"), [
    ("admin", "default", "", None),
    ("teacher", "default", "", None),
    ("student", "default", STUDENT, [COURSE]),
    ("outsider", "default", OUTSIDER, []),
    ("teacher_b", TENANT_B, "", None),
    ("student_b", TENANT_B, "bea", [COURSE_B]),
])
def test_me(api: Api, who: str, tenant: str, student: str, courses: list[str] | None) -> None:
    names = {"admin": "root", "teacher": "Prof. Rossi"}
    role = who.removesuffix("_b").replace("outsider", "student")
    response = api.call(who, "GET", "/v1/me")
    assert response.json() == {"key": api.key_ids[who], "role": role, "tenant": tenant,
                               "student": student, "name": names.get(who, ""),
                               "courses": courses}


# -- who may call what ---------------------------------------------------------------------

ALL = dict.fromkeys(CALLERS, 200)
SEES_COURSE = {"admin": 200, "teacher": 200, "student": 200, "outsider": 404,
               "teacher_b": 404, "student_b": 404}
TEACHES_COURSE = {"admin": 200, "teacher": 200, "student": 403, "outsider": 403,
                  "teacher_b": 404, "student_b": 403}
TEACHERS = {"admin": 200, "teacher": 200, "student": 403, "outsider": 403,
            "teacher_b": 200, "student_b": 403}
ADMINS = {"admin": 200, "teacher": 403, "student": 403, "outsider": 403, "teacher_b": 403,
          "student_b": 403}
JOB_OF_A = {"admin": 200, "teacher": 200, "student": 403, "outsider": 403, "teacher_b": 404,
            "student_b": 403}
READ_ROUTES = [
    ("GET", "/v1/me", None, ALL),
    ("GET", "/v1/courses", None, ALL),
    ("GET", f"/v1/courses/{COURSE}", None, SEES_COURSE),
    ("GET", f"/v1/courses/{COURSE}/documents", None, SEES_COURSE),
    ("GET", f"/v1/courses/{COURSE}/search?q=bisection", None, SEES_COURSE),
    ("POST", f"/v1/courses/{COURSE}/ask", {"question": CONCEPT}, SEES_COURSE),
    ("POST", "/v1/chat/completions",
     {"model": COURSE, "messages": [{"role": "user", "content": CONCEPT}]}, SEES_COURSE),
    ("GET", f"/v1/documents/{COURSE}:{LECTURE_DOC}/file", None, SEES_COURSE),
    ("GET", f"/v1/courses/{COURSE}/sessions", None, SEES_COURSE),
    ("GET", f"/v1/courses/{COURSE}/students", None, TEACHES_COURSE),
    ("GET", f"/v1/courses/{COURSE}/jobs", None, TEACHES_COURSE),
    ("GET", f"/v1/courses/{COURSE}/analytics", None, TEACHES_COURSE),
    ("GET", f"/v1/jobs/{JOB_A}", None, JOB_OF_A),
    ("GET", "/v1/keys", None, TEACHERS),
    ("GET", "/v1/tenants", None, ADMINS),
]
ERROR_TYPES = {403: "permission_denied", 404: "not_found"}


def _case_ids(routes: list[tuple[str, str, Any, dict[str, int]]]) -> list[Any]:
    return [pytest.param(who, method, path, body, statuses[who],
                         id=f"{who}-{method}-{path}")
            for method, path, body, statuses in routes for who in statuses]


@pytest.mark.parametrize(("who", "method", "path", "body", "status"), _case_ids(READ_ROUTES))
def test_read_routes(api: Api, who: str, method: str, path: str, body: dict[str, Any] | None,
                     status: int) -> None:
    response = api.call(who, method, path, json=body)
    assert response.status_code == status, response.text
    if status >= 400:
        assert error_of(response)["type"] == ERROR_TYPES[status]


DENIED_WRITES = [
    ("POST", "/v1/courses", {"id": "never-made"},
     {"student": 403, "outsider": 403, "student_b": 403}),
    ("PATCH", f"/v1/courses/{COURSE}", {"allow_solutions": True},
     {"student": 403, "outsider": 403, "teacher_b": 404, "student_b": 403}),
    ("DELETE", f"/v1/courses/{COURSE}", None,
     {"student": 403, "outsider": 403, "teacher_b": 404, "student_b": 403}),
    ("PUT", f"/v1/courses/{COURSE}/students/zed", None,
     {"student": 403, "outsider": 403, "teacher_b": 404, "student_b": 403}),
    ("DELETE", f"/v1/courses/{COURSE}/students/{STUDENT}", None,
     {"student": 403, "outsider": 403, "teacher_b": 404, "student_b": 403}),
    ("DELETE", f"/v1/courses/{COURSE}/documents/{LECTURE_DOC}", None,
     {"student": 403, "outsider": 403, "teacher_b": 404, "student_b": 403}),
    ("POST", "/v1/tenants", {"id": "never-made"},
     {"teacher": 403, "student": 403, "teacher_b": 403, "student_b": 403}),
    ("DELETE", f"/v1/tenants/{TENANT_B}", None,
     {"teacher": 403, "student": 403, "teacher_b": 403, "student_b": 403}),
    ("POST", "/v1/keys", {"role": "student", "student": "zed"},
     {"student": 403, "outsider": 403, "student_b": 403}),
    ("POST", "/v1/keys", {"role": "teacher"}, {"teacher": 403, "teacher_b": 403}),
    ("POST", "/v1/keys", {"role": "student", "student": "zed", "tenant": TENANT_B},
     {"teacher": 403}),
]


@pytest.mark.parametrize(("who", "method", "path", "body", "status"),
                         _case_ids(DENIED_WRITES))
def test_denied_writes_change_nothing(api: Api, who: str, method: str, path: str,
                                      body: dict[str, Any] | None, status: int) -> None:
    before = (api.store.list_courses("default"), api.store.list_tenants(),
              api.store.list_keys(), api.store.list_students("default", COURSE))
    response = api.call(who, method, path, json=body)
    assert (response.status_code, error_of(response)["type"]) == (status, ERROR_TYPES[status])
    assert (api.store.list_courses("default"), api.store.list_tenants(), api.store.list_keys(),
            api.store.list_students("default", COURSE)) == before


def test_upload_by_a_student_or_another_tenant_stores_nothing(api: Api) -> None:
    files = {"files": ("notes.md", b"# Notes\n\nSome text.\n", "text/markdown")}
    statuses = {who: api.call(who, "POST", f"/v1/courses/{COURSE}/documents",
                              files=files).status_code
                for who in ("student", "outsider", "teacher_b", "student_b")}
    assert statuses == {"student": 403, "outsider": 403, "teacher_b": 404, "student_b": 403}
    assert [j.id for j in api.store.list_jobs("default", COURSE)] == [JOB_A]
    uploads = api.settings.data_dir / "uploads"
    assert not uploads.exists() or list(uploads.iterdir()) == []


# -- tenants: another tenant's ids answer exactly like ids that do not exist ----------------


@pytest.mark.parametrize("who", ["outsider", "teacher_b", "student_b"])
@pytest.mark.parametrize("route", [
    "/v1/courses/{course}", "/v1/courses/{course}/documents",
    "/v1/courses/{course}/search?q=bisection", "/v1/courses/{course}/sessions",
])
def test_hidden_courses_look_missing(api: Api, who: str, route: str) -> None:
    hidden = api.call(who, "GET", route.format(course=COURSE))
    missing = api.call(who, "GET", route.format(course="no-such-course"))
    assert (hidden.status_code, missing.status_code) == (404, 404)
    assert error_of(hidden) == coded("not_found", f"course {COURSE!r} does not exist",
                                     "course_not_found", course=COURSE)
    assert error_of(missing) == coded("not_found", "course 'no-such-course' does not exist",
                                      "course_not_found", course="no-such-course")


@pytest.mark.parametrize("who", ["teacher_b", "student_b", "outsider"])
@pytest.mark.parametrize("course", [COURSE, COURSE_B])
@pytest.mark.parametrize("action", ["get", "end"])
def test_sessions_of_another_tenant_are_404(api: Api, session_a: str, who: str, course: str,
                                            action: str) -> None:
    path = f"/v1/courses/{course}/sessions/{session_a}"
    response = (api.call(who, "GET", path) if action == "get"
                else api.call(who, "POST", path + "/end"))
    # the course of the other tenant hides first; in B's own course the session does not exist
    error = (coded("not_found", f"session {session_a!r} does not exist", "session_not_found",
                   session=session_a) if course == COURSE_B and who != "outsider"
             else coded("not_found", f"course {course!r} does not exist", "course_not_found",
                        course=course))
    assert (response.status_code, error_of(response)) == (404, error)
    assert api.store.get_session("default", COURSE, session_a).ended is None


def test_continuing_a_session_of_another_tenant_is_404(api: Api, session_a: str) -> None:
    response = api.ask("student_b", course=COURSE_B, session_id=session_a)
    assert response.status_code == 404
    assert error_of(response)["type"] == "not_found"


@pytest.mark.parametrize("who", ["teacher_b", "student_b"])
@pytest.mark.parametrize("ref", [f"{COURSE}:{LECTURE_DOC}", f"{COURSE_B}:{LECTURE_DOC}"])
def test_files_of_another_tenant_are_404(api: Api, who: str, ref: str) -> None:
    response = api.call(who, "GET", f"/v1/documents/{ref}/file")
    assert response.status_code == 404
    assert error_of(response)["type"] == "not_found"
    assert_clean(response.text, api.settings.data_dir)


def test_deleting_a_document_of_another_tenant_is_404(api: Api) -> None:
    response = api.call("teacher_b", "DELETE", f"/v1/courses/{COURSE_B}/documents/{LECTURE_DOC}")
    assert (response.status_code, error_of(response)) == (404, coded(
        "not_found", f"document {LECTURE_DOC!r} does not exist in course {COURSE_B!r}",
        "document_not_found", document=LECTURE_DOC))
    assert api.store.find_document("default", COURSE, LECTURE_DOC) is not None


@pytest.mark.parametrize(("who", "headers", "status"), [
    ("teacher", {}, 200),
    ("teacher_b", {}, 404),
    ("admin", {"X-Tenant": TENANT_B}, 404),
    ("teacher_b", {"X-Tenant": "default"}, 404),  # only admins pick a tenant
])
def test_jobs_are_scoped_to_the_tenant(api: Api, who: str, headers: dict[str, str],
                                       status: int) -> None:
    response = api.call(who, "GET", f"/v1/jobs/{JOB_A}", headers=headers)
    assert response.status_code == status
    if status == 404:
        assert error_of(response) == coded("not_found", f"job {JOB_A!r} does not exist",
                                           "job_not_found", job=JOB_A)


def test_a_teacher_lists_its_own_tenants_courses(api: Api) -> None:
    mine = api.call("teacher_b", "GET", "/v1/courses").json()
    assert mine == {"courses": [{"id": COURSE_B, "title": "B's own course", "language": "en",
                                 "documents": 0, "chunks": 0, "allow_solutions": False}]}


@pytest.mark.parametrize(("tenant", "courses"), [
    (None, [COURSE]), ("default", [COURSE]), (TENANT_B, [COURSE_B])])
def test_an_admin_picks_the_tenant_with_x_tenant(api: Api, tenant: str | None,
                                                 courses: list[str]) -> None:
    headers = {"X-Tenant": tenant} if tenant else {}
    response = api.call("admin", "GET", "/v1/courses", headers=headers)
    assert [c["id"] for c in response.json()["courses"]] == courses
    me = api.call("admin", "GET", "/v1/me", headers=headers).json()
    assert me["tenant"] == (tenant or "default")


def test_an_admin_naming_an_unknown_tenant_is_404(api: Api) -> None:
    response = api.call("admin", "GET", "/v1/courses", headers={"X-Tenant": "nowhere"})
    assert (response.status_code, error_of(response)) == (
        404, coded("not_found", "tenant 'nowhere' does not exist"))


def test_a_teacher_cannot_pick_a_tenant(api: Api) -> None:
    response = api.call("teacher_b", "GET", "/v1/courses", headers={"X-Tenant": "default"})
    assert [c["id"] for c in response.json()["courses"]] == [COURSE_B]


# -- tenants and keys, as admin and teacher --------------------------------------------------


def test_admin_creates_lists_and_deletes_a_tenant(api: Api) -> None:
    created = api.call("admin", "POST", "/v1/tenants", json={"id": "uni-c", "name": "Uni C"})
    assert created.status_code == 201
    assert {k: v for k, v in created.json().items() if k != "created"} == {
        "id": "uni-c", "name": "Uni C"}
    again = api.call("admin", "POST", "/v1/tenants", json={"id": "uni-c"})
    assert (again.status_code, error_of(again)) == (
        409, coded("conflict", "tenant 'uni-c' already exists"))
    listed = api.call("admin", "GET", "/v1/tenants").json()["tenants"]
    assert [t["id"] for t in listed] == ["default", TENANT_B, "uni-c"]
    key = api.call("admin", "POST", "/v1/keys",
                   json={"role": "teacher", "tenant": "uni-c"}).json()["key"]
    assert api.client.get("/v1/me", headers={"Authorization": f"Bearer {key}"}).json()[
        "tenant"] == "uni-c"
    assert api.call("admin", "DELETE", "/v1/tenants/uni-c").status_code == 204
    assert [t["id"] for t in api.call("admin", "GET", "/v1/tenants").json()["tenants"]] == [
        "default", TENANT_B]
    gone = api.client.get("/v1/me", headers={"Authorization": f"Bearer {key}"})
    assert (gone.status_code, error_of(gone)["message"]) == (401, "unknown API key")


@pytest.mark.parametrize(("body", "status", "error"), [
    ({"id": "bad id!"}, 400, coded("input", (
        "tenant id 'bad id!' is not valid: use 1-128 letters, digits and _ . @ -, starting "
        "with a letter or digit"), "invalid_id", kind="tenant", value="bad id!")),
    ({"id": ""}, 422, None),
    ({}, 422, None),
])
def test_invalid_tenants(api: Api, body: dict[str, Any], status: int,
                         error: dict[str, Any] | None) -> None:
    response = api.call("admin", "POST", "/v1/tenants", json=body)
    assert response.status_code == status
    found = error_of(response)
    if error is not None:
        assert found == error
    else:
        assert found["type"] == "validation" and found["fields"][0]["field"] == "id"


def test_an_admin_cannot_delete_its_own_tenant(api: Api) -> None:
    response = api.call("admin", "DELETE", "/v1/tenants/default")
    assert (response.status_code, error_of(response)) == (403, coded(
        "permission_denied", "an admin key cannot delete its own tenant"))


def test_a_teacher_manages_student_keys_of_its_tenant(api: Api) -> None:
    created = api.call("teacher", "POST", "/v1/keys",
                       json={"role": "student", "student": "dora", "name": "Dora"})
    assert created.status_code == 201
    body = created.json()
    secret = body.pop("key")
    assert secret.startswith(f"ct_{body['id']}_") and len(secret) == 3 + 12 + 1 + 43
    assert {k: v for k, v in body.items() if k != "created"} == {
        "id": body["id"], "tenant": "default", "role": "student", "student": "dora",
        "name": "Dora", "revoked": None}
    dora = {"Authorization": f"Bearer {secret}"}
    assert api.client.get("/v1/me", headers=dora).json()["student"] == "dora"

    listed = api.call("teacher", "GET", "/v1/keys").json()["keys"]
    assert {k["role"] for k in listed} == {"student"}
    assert "key" not in listed[0] and "secret_hash" not in listed[0]
    assert body["id"] in [k["id"] for k in listed]
    assert api.key_ids["student_b"] not in [k["id"] for k in listed]

    revoked = api.call("teacher", "DELETE", f"/v1/keys/{body['id']}")
    assert revoked.status_code == 200 and revoked.json()["revoked"] is not None
    after = api.client.get("/v1/me", headers=dora)
    assert (after.status_code, error_of(after)["message"]) == (401, "this API key was revoked")


def test_admin_lists_every_role_of_its_tenant(api: Api) -> None:
    listed = api.call("admin", "GET", "/v1/keys").json()["keys"]
    ids = {k["id"] for k in listed}
    assert {api.key_ids[w] for w in ("admin", "teacher", "student", "outsider")} <= ids
    assert api.key_ids["teacher_b"] not in ids


@pytest.mark.parametrize(("who", "target"), [
    ("teacher", "teacher"),  # a teacher revokes student keys only
    ("teacher", "admin"),
    ("teacher_b", "student"),  # of its own tenant only
    ("teacher", "no-such-key"),
])
def test_keys_a_teacher_may_not_revoke_look_missing(api: Api, who: str, target: str) -> None:
    key_id = api.key_ids.get(target, target)
    response = api.call(who, "DELETE", f"/v1/keys/{key_id}")
    assert (response.status_code, error_of(response)) == (
        404, coded("not_found", f"key {key_id!r} does not exist"))
    found = api.store.find_key(key_id)
    assert found is None or found.revoked is None


@pytest.mark.parametrize(("body", "message"), [
    ({"role": "student"}, "a student key needs the student id it asks as"),
    ({"role": "teacher", "student": "ana"},
     "only student keys name a student; this is a teacher key"),
])
def test_invalid_keys_are_400(api: Api, body: dict[str, Any], message: str) -> None:
    response = api.call("admin", "POST", "/v1/keys", json=body)
    assert (response.status_code, error_of(response)) == (400, coded("input", message))


def test_a_key_of_an_unknown_tenant_is_404(api: Api) -> None:
    response = api.call("admin", "POST", "/v1/keys", json={"role": "teacher", "tenant": "nowhere"})
    assert (response.status_code, error_of(response)) == (
        404, coded("not_found", "tenant 'nowhere' does not exist"))


def test_an_unknown_role_is_422(api: Api) -> None:
    response = api.call("admin", "POST", "/v1/keys", json={"role": "owner"})
    assert response.status_code == 422
    assert [f["field"] for f in error_of(response)["fields"]] == ["role"]


# -- errors and request ids ----------------------------------------------------------------


def test_request_ids_are_echoed(api: Api) -> None:
    response = api.client.get("/healthz", headers={"X-Request-ID": "trace-42"})
    assert response.headers["x-request-id"] == "trace-42"
    failed = api.call("teacher", "GET", "/v1/courses/no-such-course",
                      headers={"X-Request-ID": "trace-43"})
    assert failed.json()["error"]["request_id"] == "trace-43"


@pytest.mark.parametrize("incoming", ["x" * 65, "tab\there", ""])
def test_unusable_request_ids_are_replaced(api: Api, incoming: str) -> None:
    response = api.client.get("/healthz", headers={"X-Request-ID": incoming})
    found = response.headers["x-request-id"]
    assert found != incoming and len(found) == 16 and int(found, 16) >= 0


def test_unknown_routes_are_json_404(api: Api) -> None:
    response = api.call("teacher", "GET", "/v1/nothing-here")
    assert (response.status_code, error_of(response)) == (
        404, coded("not_found", "Not Found"))


def test_wrong_methods_are_json_405(api: Api) -> None:
    response = api.call("teacher", "PUT", "/v1/me")
    assert (response.status_code, error_of(response)) == (
        405, coded("method_not_allowed", "Method Not Allowed"))


@pytest.mark.parametrize("who", [*CALLERS, "revoked", *BAD_KEYS])
def test_no_reply_carries_a_trace_or_a_path(api: Api, who: str) -> None:
    data_dir = api.settings.data_dir
    for method, path, body in KEYED_ROUTES[:-2]:
        response = api.call(who, method, path, json=body)
        assert_clean(response.text, data_dir, data_dir.parent)


def test_one_response_in_n_asks_the_client_to_reconnect(sample: Sample, embedder: EmbeddingModel,
                                                        tmp_path: Path) -> None:
    with open_api(sample, embedder, tmp_path, api_reconnect_every=3) as api:
        closing = [api.client.get("/healthz").headers.get("connection") for _ in range(6)]
    assert closing == [None, None, "close", None, None, "close"]
