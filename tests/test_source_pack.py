"""The course pack's real notes read with their sources: the share of chunks that found their
PDF page, and chunks whose page was checked by hand against the PDF. Skipped without the
pack (../shared/course-pack)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coursetutor.ingest.chunking import ChunkSizes, chunk_prose
from coursetutor.ingest.loaders import load
from coursetutor.retrieval import EmbeddingModel
from coursetutor.types import ChunkDraft

PACK = Path(__file__).resolve().parents[2] / "shared" / "course-pack"
pytestmark = pytest.mark.skipif(not PACK.is_dir(),
                                reason="the course pack (../shared/course-pack) is absent")

# (pdf, source, share of the source's chunks that must find a page, chunks checked by hand:
# the start of a chunk's text and the PDF page it is printed on)
CASES = {
    "unimib-analisi": (
        "pdf/05_unimib_analisi-matematica_appunti_it.pdf", "sources/unimib-analisi/analisi.tex",
        0.97, [
            ("Teorema 1. Non esiste alcun numero $r\\in\\mathbb{Q}$", 10),
            ("Nota 1. $\\mathbb{N}_0$ è l'insieme", 11),
            ("$$\\beta=\\inf A$$", 13),
            ("- $(\\alpha,+\\infty) \\longleftrightarrow", 16),
            ("- $\\cosh x= \\frac{e^x+e^{-x}}{2}$", 27),
            ("Dimostrazione. Sia $a_n=b_n-c_n$ con:", 48),
            ("- se $p=x_0\\in \\mathbb{R}\\longrightarrow |x-x_0|$", 69),
            ("Dimostrazione. Alcune dimostrazioni:", 75),
            ("Teorema 42 (di Rolle).", 78),
            ("Teorema 43 (di Lagrange).", 79),
            ("Teorema 44 (di Cauchy).", 80),
        ]),
    "pku-ma1": (
        "pdf/06_pku_mathematical-analysis-I_notes_zh.pdf", "sources/pku-ma1/final.md", 0.97, [
            ("2) $|\\mathbb I\\cap[0,1]|>|\\N|$.", 2),
            ("**练习 1.3.3** (P22 例 1.3.7)", 3),
            ("**性质 2.2.1**", 4),
            ("**例子 2.2.2**", 4),
            ("**定理 2.4.2 (区间套)**", 6),
            ("**定理 2.4.4 (聚点)**", 7),
            ("**定义 3.1.1 ($\\varepsilon-\\delta$ 语言)**", 9),
            ("**定理 3.3.1 (有界性)**", 12),
            ("**定义 4.3.1**", 15),
            ("**定理 5.1.3 (Lagrange 中值)**", 16),
            ("**定义 5.4.2**", 22),
            ("**引理 (Kraft)**", 26),
        ]),
    "lmu-optml": (
        "pdf/01_lmu-optml_slides_newton-raphson_en.pdf",
        "sources/lmu-optml/slides-multivar-second-order-1-newton-raphson.tex", 1.0, [
            ("- So far: First order methods", 2),
            ("- Assumption: $f \\in \\CC{2}$", 3),
            ("- Note: In practice, we get $\\mathbf{d}^{[t]}$", 4),
            ("- Consider $f(x_1, x_2) = x_1^2 + \\frac{x_2^2}{2}$", 5),
            ("Advantage:", 7),
            ("- Problem 1: In general", 8),
            ("- Problem 2: Hessian can be computationally expensive", 9),
        ]),
}


def source_chunks(name: str, embedder: EmbeddingModel) -> tuple[list[ChunkDraft], list[int]]:
    pdf, source, _, _ = CASES[name]
    parsed = load(PACK / pdf, source=PACK / source)
    drafts = chunk_prose(parsed.sections, ChunkSizes(), embedder.token_count)
    own = [d for d in drafts if d.locator.page is None or d.locator.page not in
           parsed.pdf_only_pages]
    return own, parsed.pdf_only_pages


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_chunks_of_a_source_find_their_pdf_page(name: str,
                                                    embedder: EmbeddingModel) -> None:
    chunks, _ = source_chunks(name, embedder)
    _, _, share, checked = CASES[name]
    placed = [c for c in chunks if c.locator.page is not None]
    assert len(placed) >= share * len(chunks)
    found = {}
    for start, _page in checked:
        holding = [c for c in chunks if start in c.text]
        assert holding, f"no chunk holds {start!r}"
        found[start] = holding[0].locator.page
    assert found == dict(checked)


def test_pages_the_italian_notes_include_as_a_pdf_keep_their_text(
    embedder: EmbeddingModel,
) -> None:
    # page 1 is the title page \maketitle prints, 25-26 two plots, 39-40 the landau.pdf the
    # source includes with \includepdf
    _, own = source_chunks("unimib-analisi", embedder)
    assert own == [1, 25, 26, 39, 40]
