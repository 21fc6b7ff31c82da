"""The course's own spellings of its names, given to the question's translator (terms.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from coursetutor.tutor.terms import course_terms
from coursetutor.types import Chunk, Hit, Locator

SLIDES = [
    "LIMITATIONS Problem 1: In general, d[t] is not a descent direction But: If Hessian is "
    "positive definite, d[t] is descent direction. For initial steps, Hessian is often not "
    "positive definite and Newton-Raphson may give non-descending update directions",
    "NEWTON-RAPHSON Note: Relaxed/Damped Newton-Raphson: use step size α > 0 to satisfy "
    "Wolfe conditions (or just Armijo rule). The descent direction of GD is the gradient.",
    "Teorema 42 (di Rolle). Sia $f:[a,b]\\rightarrow \\mathbb{R}$ continua, allora vale la "
    "tesi del teorema di Rolle.",
]


def _hit(n: int, text: str) -> Hit:
    chunk = Chunk(id=f"c{n}", tenant="t", course="c", document_id="slides",
                  document_title="Newton-Raphson", doc_type="lecture", topic="",
                  section_path=("NEWTON-RAPHSON",), difficulty=2, language="en",
                  locator=Locator(page=n), text=text, content_hash=f"h{n}", ordinal=n)
    return Hit(chunk, 1.0, {}, {}, Locator(page=n))


def test_names_come_first_then_the_phrases_the_passages_repeat() -> None:
    terms = course_terms([_hit(n, text) for n, text in enumerate(SLIDES)])
    assert terms[0] == "Hessian"  # the most frequent first
    assert {"Newton-Raphson", "Wolfe", "Armijo", "GD", "Rolle"} <= set(terms)
    assert {"descent direction", "positive definite"} <= set(terms)  # said twice or more
    # a sentence's or a slide's first word, a shouted title, LaTeX: no names
    assert not {"LIMITATIONS", "NEWTON-RAPHSON", "Problem", "But", "Note", "Teorema", "Sia",
                "For", "rightarrow", "mathbb"} & set(terms)


def test_terms_are_capped_and_spelled_once() -> None:
    text = " ".join(f"the Name{n} and the Name{n}" for n in range(40))
    terms = course_terms([_hit(0, text), _hit(1, "the newton raphson and the Newton-Raphson")],
                         most=10)
    assert len(terms) == 10 and len({t.lower() for t in terms}) == 10
    assert course_terms([]) == []


def test_the_names_of_the_courses_results_are_read_once_per_version() -> None:
    from coursetutor.tutor import terms

    class Counting:
        """A store that counts the chunks it is asked for."""

        def __init__(self, texts: list[str], version: str = "v1") -> None:
            self.texts, self.version, self.reads = texts, version, 0

        def list_documents(self, tenant: str, course: str) -> list[SimpleNamespace]:
            return [SimpleNamespace(id="notes", content_hash=self.version)]

        def export_chunks(self, tenant: str, course: str, document_id: str) -> list[Any]:
            self.reads += 1
            return [SimpleNamespace(text=t) for t in self.texts]

    store = Counting([
        "Teorema 42 (di Rolle). Sia $f$ continua. Teorema 43 (di Lagrange). Vale anche il "
        "criterio.", "Teorema 12 (Criterio del Rapporto). Il criterio del rapporto dice.",
        "**定理 5.1.2 (Rolle 中值)** 设 $f\\in C[a,b]$"])
    assert terms.result_names(store, "t", "c") == ["Rolle", "Lagrange"]  # type: ignore[arg-type]
    terms.result_names(store, "t", "c")  # type: ignore[arg-type]
    assert store.reads == 1  # read once while the documents stay as they are
    store.version = "v2"
    terms.result_names(store, "t", "c")  # type: ignore[arg-type]
    assert store.reads == 2
    # the same reading gives the names of the numbered results, for a statement citing one
    labels = terms.result_labels(store, "t", "c")  # type: ignore[arg-type]
    assert labels["定理5.1.2"] == "Rolle 中值" and labels["teorema43"] == "di Lagrange"
    assert store.reads == 2


def test_a_result_cited_by_its_number_alone_gets_the_courses_name() -> None:
    from coursetutor.tutor.terms import cites_result, named_results

    labels = {"引理5.1.1": "Fermat 中值", "teorema41": "di Fermat"}
    assert named_results("根据引理 5.1.1, 此处导数为 0.", labels) == (
        "根据引理 5.1.1 (Fermat 中值), 此处导数为 0.")
    assert named_results("见引理 5.1.1.", labels) == "见引理 5.1.1 (Fermat 中值)."
    assert named_results("per il Teorema 41 si ha", labels) == (
        "per il Teorema 41 (di Fermat) si ha")
    # named already, another number, a number the course names nothing, a word ending so
    for text in ("由 引理 5.1.1 (Fermat 中值), 存在", "引理 5.1.12 说", "引理 5.1 说",
                 "Teorema 7 dice", "xTeorema 41"):
        assert named_results(text, labels) == text
    assert cites_result("由 引理 5.1.1, 存在") and not cites_result("由 Fermat 引理")
