"""A course's language follows its documents: Italian and Chinese courses are searched in
their own language, with no translation step, and find the right pages."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from coursetutor.config import Settings
from coursetutor.retrieval import EmbeddingModel, SearchTrace
from coursetutor.retrieval.language import check_language, majority_language, search_language
from coursetutor.store import SQLiteStore
from coursetutor.tutor import Tutor
from coursetutor.types import DoneEvent, FileMeta
from coursetutor.workspace import Workspace

from .api_support import ScriptedLLM, open_api, scripted_router
from .support import Sample
from .test_api_courses import upload, wait_for_job

PACK = Path(__file__).resolve().parents[2] / "shared" / "course-pack" / "pdf"
ITALIAN_PDF = "05_unimib_analisi-matematica_appunti_it.pdf"
CHINESE_PDF = "06_pku_mathematical-analysis-I_notes_zh.pdf"

ITALIAN = """\
# Successioni

## Successione limitata

Una successione si dice limitata quando esiste un numero reale M tale che il valore assoluto
di ogni suo termine è minore o uguale a M. Ogni successione convergente è limitata, ma non vale
il viceversa: la successione dei segni alterni è limitata e non converge.

## Teorema di Bolzano-Weierstrass

Ogni successione limitata ammette una sottosuccessione convergente. La dimostrazione divide
a metà l'intervallo che contiene la successione e sceglie ogni volta la metà con infiniti
termini.

## Numero di Nepero

Il numero di Nepero è il limite della successione (1 + 1/n)^n per n che tende all'infinito;
vale circa 2,718 ed è la base dei logaritmi naturali.
"""

CHINESE = """\
# 函数的连续性

## 介值定理

若函数在闭区间上连续，且两个端点的函数值异号，则在区间内至少存在一个零点。由此可知，
任何奇数次多项式方程都至少有一个实根。

## 一致连续

闭区间上的连续函数一定一致连续，这就是康托尔定理。证明时需要用到有限覆盖定理。

## 泰勒公式

泰勒公式用多项式逼近一个足够光滑的函数，余项给出了误差的大小。
"""

# (course language, question, section the best passage must come from)
OWN_TEXT = [
    ("it", "Che cos'è una successione limitata?", "Successione limitata"),
    ("it", "Che cos'è il numero di Nepero?", "Numero di Nepero"),
    ("zh", "介值定理是什么？", "介值定理"),
    ("zh", "泰勒公式是什么？", "泰勒公式"),
]


@pytest.fixture
def workspace(tmp_path: Path, embedder: EmbeddingModel) -> Workspace:
    settings = Settings(data_dir=tmp_path / "data", ocr="off", llm_backend="none")
    return Workspace(settings, store=SQLiteStore(tmp_path / "data" / "t.db"), embedder=embedder)


def ingest_text(ws: Workspace, folder: Path, course: str, name: str, text: str) -> None:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    ws.create_course(course)  # no language given: it comes from the documents
    report = ws.ingest(course, [(path, FileMeta())])
    assert [f.status for f in report.files] == ["added"]


@pytest.fixture
def own_courses(workspace: Workspace, tmp_path: Path) -> Workspace:
    ingest_text(workspace, tmp_path, "analisi", "successioni.md", ITALIAN)
    ingest_text(workspace, tmp_path, "shuxue", "lianxu.md", CHINESE)
    return workspace


COURSE_OF = {"it": "analisi", "zh": "shuxue"}


def test_courses_take_the_language_of_their_documents(own_courses: Workspace) -> None:
    languages = {c.id: c.language for c in own_courses.courses()}
    assert languages == {"analisi": "it", "shuxue": "zh"}
    assert own_courses.store.course_languages(own_courses.tenant, "shuxue") == {"zh": 3}


@pytest.mark.parametrize(("language", "question", "section"), OWN_TEXT)
def test_questions_are_searched_in_the_course_language(
    own_courses: Workspace, language: str, question: str, section: str
) -> None:
    trace = SearchTrace()
    hits = own_courses.search(question, COURSE_OF[language], k=3, trace=trace)
    assert (trace.language, trace.translated) == (language, False)
    assert hits[0].chunk.section_path[-1] == section


@pytest.mark.parametrize(("language", "question", "section"), OWN_TEXT[::2])
def test_the_tutor_answers_with_no_translation_step(
    own_courses: Workspace, language: str, question: str, section: str
) -> None:
    fake = ScriptedLLM([f"{section} [1]."])
    ws = Workspace(dataclasses.replace(own_courses.settings, llm_backend="ollama"),
                   store=own_courses.store, embedder=own_courses.embedder)
    tutor = Tutor(ws, scripted_router(ws.settings, fake))
    events = list(tutor.stream(question, COURSE_OF[language], "ana"))
    answer = next(e.answer for e in events if isinstance(e, DoneEvent))
    assert "translate" not in fake.kinds
    assert "translate" not in answer.timings
    assert answer.language == language
    gold = own_courses.search(question, COURSE_OF[language], k=1)[0].chunk
    assert gold.section_path[-1] == section and gold.id in answer.context
    assert answer.sources[0].section in {"Successione limitata", "Teorema di Bolzano-Weierstrass",
                                         "Numero di Nepero", "介值定理", "一致连续", "泰勒公式"}


def test_a_mixed_course_is_searched_in_the_question_language(
    workspace: Workspace, tmp_path: Path
) -> None:
    ingest_text(workspace, tmp_path, "mixed", "lianxu.md", CHINESE)
    english = "\n\n".join(f"## Part {n}\n\nThe bisection method halves the bracket, step {n}."
                          for n in range(1, 6))
    (tmp_path / "bisection.md").write_text(f"# Bisection\n\n{english}\n")
    workspace.ingest("mixed", [(tmp_path / "bisection.md", FileMeta())])
    langs = workspace.store.course_languages(workspace.tenant, "mixed")
    assert langs == {"en": 5, "zh": 3}
    course = workspace.store.course_language(workspace.tenant, "mixed")
    assert course == "en"
    assert search_language("zh", course, langs) == "zh"  # documents in Chinese: no translation
    assert search_language("it", course, langs) == "en"  # none in Italian: the course's
    # the keywords too stay Chinese (no dictionary translation into the course's English)
    trace = SearchTrace()
    hits = workspace.search("介值定理是什么？", "mixed", k=3, trace=trace)
    assert (trace.language, trace.translated) == ("zh", False)
    assert hits[0].chunk.section_path[-1] == "介值定理"
    workspace.remove_document("mixed", "bisection-md")
    assert workspace.store.course_language(workspace.tenant, "mixed") == "zh"


@pytest.mark.parametrize(
    ("texts", "language"),
    [
        (["Il metodo di Newton è veloce.", "La successione è limitata.", "x = 1"], "it"),
        (["设区间套，其中每个区间包含下一个。", "The proof is short.", "连续函数。"], "zh"),
        (["12 + 3 = 15", "x"], "en"),
    ],
)
def test_majority_language(texts: list[str], language: str) -> None:
    assert majority_language(texts, default="en") == language


@pytest.mark.parametrize(("value", "code"), [("it", "it"), ("zh-CN", "zh"), ("EN", "en"),
                                            ("pt_BR", "pt")])
def test_check_language(value: str, code: str) -> None:
    assert check_language(value) == code


# -- the course pack's Italian and Chinese notes ---------------------------------------------

# (file, pages kept, course language, question, page the answer is on)
PACK_QUESTIONS = [
    (ITALIAN_PDF, "it", "Cosa dice il teorema di permanenza del segno?", 32),
    (ITALIAN_PDF, "it", "Che cos'è il numero di Nepero?", 41),
    (CHINESE_PDF, "zh", "介值定理是什么？", 11),
    (CHINESE_PDF, "zh", "泰勒公式是什么？", 21),
]
# the pages around the questions' answers: the whole notes take minutes to embed on 2 cores
PACK_PAGES = {ITALIAN_PDF: range(29, 43), CHINESE_PDF: range(9, 23)}


def excerpt(source: Path, pages: range, target: Path) -> Path:
    """`pages` (1-based) of `source` as a PDF of their own, blank pages in between, so page
    numbers stay those of the original."""
    reader, writer = PdfReader(source), PdfWriter()
    for number, page in enumerate(reader.pages, start=1):
        if number in pages:
            writer.add_page(page)
        elif number < pages.stop:
            writer.add_blank_page(float(page.mediabox.width), float(page.mediabox.height))
    with target.open("wb") as out:
        writer.write(out)
    return target


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory, embedder: EmbeddingModel) -> Workspace:
    if not PACK.is_dir():
        pytest.skip("the course pack (../shared/course-pack) is not here")
    folder = tmp_path_factory.mktemp("pack")
    settings = Settings(data_dir=folder / "data", ocr="off", llm_backend="none")
    ws = Workspace(settings, store=SQLiteStore(folder / "data" / "t.db"), embedder=embedder)
    for name, pages in PACK_PAGES.items():
        course = "analisi" if name == ITALIAN_PDF else "shuxue"
        ws.create_course(course)
        path = excerpt(PACK / name, pages, folder / name)
        report = ws.ingest(course, [(path, FileMeta(source_name=name))])
        assert [f.status for f in report.files] == ["added"], report.files[0].message
    return ws


@pytest.mark.slow
def test_the_pack_notes_give_their_courses_italian_and_chinese(pack: Workspace) -> None:
    assert {c.id: c.language for c in pack.courses()} == {"analisi": "it", "shuxue": "zh"}
    titles = {d.id: (d.title, d.language) for c in ("analisi", "shuxue")
              for d in pack.documents(c)}
    assert titles == {
        "05-unimib-analisi-matematica-appunti-it-pdf": ("Unimib analisi-matematica appunti",
                                                        "it"),
        "06-pku-mathematical-analysis-i-notes-zh-pdf": ("Pku mathematical-analysis-I notes",
                                                        "zh"),
    }


@pytest.mark.slow
@pytest.mark.parametrize(("name", "language", "question", "page"), PACK_QUESTIONS)
def test_pack_questions_find_their_page_with_no_translation(
    pack: Workspace, name: str, language: str, question: str, page: int
) -> None:
    course = "analisi" if name == ITALIAN_PDF else "shuxue"
    trace = SearchTrace()
    hits = pack.search(question, course, k=3, trace=trace)
    assert (trace.language, trace.translated) == (language, False)
    assert page in [h.chunk.locator.page for h in hits]


@pytest.mark.slow
def test_pack_chinese_chunks_keep_their_chapter_and_mark_blanks(pack: Workspace) -> None:
    hits = pack.search("泰勒公式是什么？", "shuxue", k=1)
    chunk = hits[0].chunk
    assert chunk.section_path[0] == "第五章 导数的应用"  # not chapter 1, as the title once was
    assert "[formula missing]" in chunk.text



# -- the API: a course created, patched or uploaded to with a language keeps it -------------


def test_api_course_language_follows_uploads_unless_set(
    sample: Sample, embedder: EmbeddingModel, tmp_path: Path
) -> None:
    with open_api(sample, embedder, tmp_path / "data", api_max_upload_bytes=1 << 20) as api:
        def course(cid: str) -> str:
            return str(api.call("teacher", "GET", f"/v1/courses/{cid}").json()["language"])

        for cid, language in (("analisi", None), ("kept", "ZH")):
            body = {"id": cid, **({"language": language} if language else {})}
            assert api.call("teacher", "POST", "/v1/courses", json=body).status_code == 201
            job = upload(api, "teacher", [("successioni.md", ITALIAN.encode())], course=cid)
            assert wait_for_job(api, job.json()["id"])["status"] == "done"
        assert (course("analisi"), course("kept")) == ("it", "zh")
        patched = api.call("teacher", "PATCH", "/v1/courses/kept", json={"language": "auto"})
        assert (patched.status_code, patched.json()["language"]) == (200, "it")
        job = upload(api, "teacher", [("lianxu.md", CHINESE.encode())], course="analisi",
                     language="zh-CN")
        assert wait_for_job(api, job.json()["id"])["status"] == "done"
        assert course("analisi") == "zh"  # the upload's language is the course's from now on
        bad = upload(api, "teacher", [("a.md", b"# A\n\nText.\n")], course="analisi",
                     language="klingon!")
        assert bad.status_code in (400, 422)
        assert "language" in bad.text
