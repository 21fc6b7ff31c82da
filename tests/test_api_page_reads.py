"""What the pages read besides answers: a cited passage whole, the course's checks as a list
(no 404 before the first), and the tier labels as codes a page translates."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from coursetutor.retrieval import EmbeddingModel
from coursetutor.tutor.tiers import tier_code

from .api_support import COURSE, Api, open_api
from .support import Sample


@pytest.fixture(scope="module")
def api(sample: Sample, embedder: EmbeddingModel,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    with open_api(sample, embedder, tmp_path_factory.mktemp("api-page-reads")) as found:
        yield found


def test_a_cited_passage_reads_whole(api: Api) -> None:
    answer = api.ask("student").json()
    source = answer["sources"][0]
    reply = api.call("student", "GET", f"/v1/courses/{COURSE}/passages/{source['chunk']}")
    assert reply.status_code == 200
    passage = reply.json()
    assert set(passage) == {"chunk", "document", "title", "type", "section", "page", "start",
                            "end", "anchor", "text"}
    assert (passage["chunk"], passage["document"], passage["title"]) == (
        source["chunk"], source["document"], source["title"])
    # the snippet is cut from the passage's text
    assert source["snippet"].rstrip("…").split()[:5] == passage["text"].split()[:5]
    assert len(passage["text"]) >= len(source["snippet"].rstrip("…"))


def test_an_unknown_passage_or_another_tenants_is_not_found(api: Api) -> None:
    assert api.call("student", "GET", f"/v1/courses/{COURSE}/passages/nope").status_code == 404
    chunk = api.ask("student").json()["sources"][0]["chunk"]
    assert api.call("teacher_b", "GET",
                    f"/v1/courses/{COURSE}/passages/{chunk}").status_code == 404


def test_checks_list_is_empty_before_the_first_check(api: Api) -> None:
    reply = api.call("teacher", "GET", f"/v1/courses/{COURSE}/checks")
    assert (reply.status_code, reply.json()) == (200, {"checks": []})
    assert api.call("teacher", "GET", f"/v1/courses/{COURSE}/check").status_code == 404
    assert api.call("student", "GET", f"/v1/courses/{COURSE}/checks").status_code == 403


@pytest.mark.parametrize(("label", "code"), [
    ("from today's class, 10:23", ("class_time", {"time": "10:23"})),
    ("from today's slides, p. 5", ("slides_page", {"page": "5"})),
    ("from today's slides", ("slides", {})),
    ("from Lecture 3: Newton", ("document", {"title": "Lecture 3: Newton"})),
    ("", ("", {})),
])
def test_tier_labels_have_codes(label: str, code: tuple[str, dict[str, str]]) -> None:
    assert tier_code(label) == code
