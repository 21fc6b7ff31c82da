"""The API's memory of a student's sessions: ending a session stores its summary, which the
student (and their teachers) read back; nobody reads another's, nothing crosses tenants."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from coursetutor.retrieval import EmbeddingModel

from .api_support import CONCEPT, COURSE, STUDENT, Api, error_of, open_api
from .support import Sample

PATH = f"/v1/courses/{COURSE}"
EXERCISE = "Just give me the answer to exercise 2"


@pytest.fixture(scope="module")
def api(sample: Sample, embedder: EmbeddingModel,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """Passages only (llm_backend = none): summaries are extracted from the turns."""
    with open_api(sample, embedder, tmp_path_factory.mktemp("api-memory")) as found:
        yield found


def test_ending_a_session_stores_its_summary_for_the_student(api: Api) -> None:
    first = api.ask("student", EXERCISE).json()
    sid = first["session_id"]
    api.ask("student", CONCEPT, session_id=sid)
    ended = api.call("student", "POST", f"{PATH}/sessions/{sid}/end").json()
    assert ended["ended"] is not None and ended["turns"] == 2
    summary = ended["summary"]
    assert {k: summary[k] for k in ("session_id", "kind", "student", "turn_ids")} == {
        "session_id": sid, "kind": "session", "student": STUDENT,
        "turn_ids": [f"{sid}:1", f"{sid}:2"]}
    assert summary["text"].startswith("Topics: ") and CONCEPT in summary["text"]

    mine = api.call("student", "GET", f"{PATH}/students/me/memory").json()
    assert mine == {"student": STUDENT, "sessions": [summary], "running": []}
    assert api.call("student", "GET", f"{PATH}/students/{STUDENT}/memory").json() == mine
    for who in ("teacher", "admin"):
        assert api.call(who, "GET", f"{PATH}/students/{STUDENT}/memory").json() == mine
    # ending it again keeps the summary of the same turns
    again = api.call("teacher", "POST", f"{PATH}/sessions/{sid}/end").json()
    assert again["ended"] == ended["ended"] and again["summary"]["text"] == summary["text"]


def test_a_session_without_turns_ends_without_a_summary(api: Api) -> None:
    sid = api.store.start_session("default", COURSE, STUDENT).id
    ended = api.call("student", "POST", f"{PATH}/sessions/{sid}/end").json()
    assert ended["ended"] is not None and ended["summary"] is None


@pytest.mark.parametrize(("who", "student"), [
    ("outsider", STUDENT),  # another student of the tenant
    ("outsider", "me"),  # not enrolled in the course
    ("teacher", "me"),  # 'me' is a student key's own
    ("teacher_b", STUDENT),  # another tenant
    ("student_b", "me"),
])
def test_memory_of_another_is_404(api: Api, who: str, student: str) -> None:
    response = api.call(who, "GET", f"{PATH}/students/{student}/memory")
    assert response.status_code == 404 and error_of(response)["type"] == "not_found"


def test_memory_limit_is_checked(api: Api) -> None:
    response = api.call("student", "GET", f"{PATH}/students/me/memory", params={"limit": 0})
    assert response.status_code == 422
