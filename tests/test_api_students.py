"""Topic lists, profiles, export and erasure, and the class view over HTTP: who may call
which route, and what the others get (in the style of test_api_access)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from coursetutor.retrieval import EmbeddingModel

from .api_support import COURSE, OUTSIDER, STUDENT, Api, coded, error_of, open_api
from .support import Sample

ERROR_TYPES = {403: "permission_denied", 404: "not_found"}


@pytest.fixture(scope="module")
def api(sample: Sample, embedder: EmbeddingModel,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """Passages only; the enrolled student asked one question."""
    with open_api(sample, embedder, tmp_path_factory.mktemp("api-students")) as found:
        assert found.ask("student").status_code == 200
        yield found


# who gets which status; the others of the six callers are not listed where all get 200
SEES_COURSE = {"admin": 200, "teacher": 200, "student": 200, "outsider": 404,
               "teacher_b": 404, "student_b": 404}
TEACHES_COURSE = {"admin": 200, "teacher": 200, "student": 403, "outsider": 403,
                  "teacher_b": 404, "student_b": 403}
SEES_ANA = {"admin": 200, "teacher": 200, "student": 200, "outsider": 404,
            "teacher_b": 404, "student_b": 404}
ANA_OR_ADMIN = {"admin": 200, "teacher": 403, "student": 200, "outsider": 404,
                "teacher_b": 403, "student_b": 404}
ANA_OR_ADMIN_IN_TENANT = {"admin": 200, "teacher": 403, "student": 200, "outsider": 404,
                          "teacher_b": 403, "student_b": 404}
READ_ROUTES = [
    ("GET", f"/v1/courses/{COURSE}/topics", SEES_COURSE),
    ("GET", f"/v1/courses/{COURSE}/students/{STUDENT}/profile", SEES_ANA),
    ("GET", f"/v1/courses/{COURSE}/students/{STUDENT}/export", ANA_OR_ADMIN),
    ("GET", f"/v1/students/{STUDENT}/export", ANA_OR_ADMIN_IN_TENANT),
    ("GET", f"/v1/courses/{COURSE}/students", TEACHES_COURSE),
    ("GET", f"/v1/courses/{COURSE}/insights", TEACHES_COURSE),
]


@pytest.mark.parametrize(("who", "method", "path", "status"), [
    pytest.param(who, method, path, statuses[who], id=f"{who}-{method}-{path}")
    for method, path, statuses in READ_ROUTES for who in statuses])
def test_read_routes(api: Api, who: str, method: str, path: str, status: int) -> None:
    response = api.call(who, method, path)
    assert response.status_code == status, response.text
    if status >= 400:
        assert error_of(response)["type"] == ERROR_TYPES[status]


def test_the_student_sees_its_studied_topics_with_their_turns(api: Api) -> None:
    mine = api.call("student", "GET", f"/v1/courses/{COURSE}/students/me/profile").json()
    assert mine == api.call("teacher", "GET",
                            f"/v1/courses/{COURSE}/students/{STUDENT}/profile").json()
    topics = mine["profile"]["topics"]
    assert "root finding" in [t["topic"] for t in topics]
    assert all(t["turns"] == 1 and len(t["turn_ids"]) == 1 for t in topics)


def test_me_needs_a_student_key(api: Api) -> None:
    response = api.call("teacher", "GET", f"/v1/courses/{COURSE}/students/me/profile")
    assert (response.status_code, error_of(response)["type"]) == (404, "not_found")


DENIED_WRITES: list[tuple[str, str, Any, dict[str, int]]] = [
    ("PUT", f"/v1/courses/{COURSE}/topics", {"topics": ["x"]},
     {"student": 403, "outsider": 403, "teacher_b": 404, "student_b": 403}),
    ("PATCH", f"/v1/courses/{COURSE}/students/{STUDENT}/profile", {"level": 5},
     {"teacher": 403, "outsider": 404, "teacher_b": 403, "student_b": 404}),
    ("DELETE", f"/v1/courses/{COURSE}/students/{STUDENT}/data", None,
     {"teacher": 403, "outsider": 404, "teacher_b": 403, "student_b": 404}),
    ("DELETE", f"/v1/students/{STUDENT}/data", None,
     {"teacher": 403, "outsider": 404, "teacher_b": 403, "student_b": 404}),
    ("PATCH", f"/v1/courses/{COURSE}", {"retention_days": 1},
     {"student": 403, "outsider": 403, "teacher_b": 404, "student_b": 403}),
]


@pytest.mark.parametrize(("who", "method", "path", "body", "status"), [
    pytest.param(who, method, path, body, statuses[who], id=f"{who}-{method}-{path}")
    for method, path, body, statuses in DENIED_WRITES for who in statuses])
def test_denied_writes_change_nothing(api: Api, who: str, method: str, path: str,
                                      body: dict[str, Any] | None, status: int) -> None:
    store = api.store

    def state() -> tuple[Any, ...]:
        return (store.profiles.topic_list("default", COURSE),
                store.profiles.get("default", COURSE, STUDENT),
                store.list_sessions("default", COURSE, STUDENT),
                store.profiles.retention_days("default", COURSE))

    before = state()
    response = api.call(who, method, path, json=body)
    assert (response.status_code, error_of(response)["type"]) == (status, ERROR_TYPES[status])
    assert state() == before


def test_a_teacher_corrects_the_topic_list(api: Api) -> None:
    path = f"/v1/courses/{COURSE}/topics"
    original = api.call("student", "GET", path).json()
    assert original["corrected"] is False and "root finding" in original["topics"]
    put = api.call("teacher", "PUT", path, json={"topics": ["Bisection", " bisection", "Newton"]})
    assert put.json() == {"course": COURSE, "topics": ["Bisection", "Newton"], "corrected": True}
    assert api.call("student", "GET", path).json()["topics"] == ["Bisection", "Newton"]
    assert api.call("teacher", "PUT", path, json={"topics": None}).json() == original


def test_the_student_corrects_its_profile(api: Api) -> None:
    path = f"/v1/courses/{COURSE}/students/me/profile"
    got = api.call("student", "PATCH", path, json={
        "level": 4, "style": "examples first", "goals": "exam on 12 March"}).json()
    assert (got["profile"]["level"], got["profile"]["style"], got["profile"]["goals"]) == (
        4, "examples first", "exam on 12 March")
    bad = api.call("student", "PATCH", path, json={"style": "songs"})
    assert bad.status_code == 400 and "unknown learning style" in error_of(bad)["message"]
    assert (error_of(bad)["code"], error_of(bad)["params"]) == (
        "invalid_learning_style", {"value": "songs"})
    assert api.call("student", "PATCH", path, json={"level": 9}).status_code == 422
    missing = api.call("student", "PATCH", path, json={"resolve_weak_areas": ["nope"]})
    assert (missing.status_code, error_of(missing)) == (404, coded(
        "not_found", "weak area 'nope' does not exist", "weak_area_not_found", area="nope"))


def test_the_class_view(api: Api) -> None:
    api.call("admin", "PATCH", f"/v1/courses/{COURSE}", json={"retention_days": 90})
    view = api.call("teacher", "GET", f"/v1/courses/{COURSE}/students?idle_days=1").json()
    assert view["students"] == [STUDENT] and view["retention_days"] == 90
    (row,) = view["profiles"]
    assert row["student"] == STUDENT and row["last_seen"] and row["topics"] >= 1
    assert view["idle"] == []
    insights = api.call("teacher", "GET", f"/v1/courses/{COURSE}/insights").json()
    assert insights == {"students": 0, "weak_areas": [], "mastery": []}
    api.call("admin", "PATCH", f"/v1/courses/{COURSE}", json={"retention_days": 0})


def test_a_student_exports_and_erases_itself(api: Api) -> None:
    assert api.ask("outsider").status_code == 404  # not enrolled: nothing is stored
    exported = api.call("student", "GET", f"/v1/courses/{COURSE}/students/me/export").json()
    assert exported["student"] == STUDENT and exported["tables"]["turns"]
    assert all(r["student"] == STUDENT for rows in exported["tables"].values() for r in rows)
    gone = api.call("student", "DELETE", f"/v1/courses/{COURSE}/students/me/data").json()
    assert gone["rows"]["turns"] >= 1 and gone["rows"]["sessions"] >= 1
    after = api.call("student", "GET", f"/v1/courses/{COURSE}/students/me/export").json()
    assert set(after["tables"]) == {"enrollments"}  # the teacher's record of who may ask
    assert api.call("student", "GET", f"/v1/courses/{COURSE}/topics").status_code == 200
    # the outsider asked nothing it could: only its key is stored
    outsider = api.call("admin", "GET", f"/v1/students/{OUTSIDER}/export").json()["tables"]
    assert set(outsider) == {"api_keys"}
