"""Ranks named in any language (ordinals.py), and the statement check that holds a
statement to its sentence's rank."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pytest

from coursetutor.tutor.ordinals import ordinals, unbacked_ordinals
from coursetutor.tutor.sentences import Line
from coursetutor.tutor.statement_check import check_statements, without_own_sentences
from coursetutor.tutor.statements import Statement
from coursetutor.types import Chunk, Hit, Locator

from .support import evidence_line

FIRST_KIND = "若c处的左右极限存在但不连续,则称为第一类间断点"
SECOND_KIND = "否则即至少一侧极限不存在,则称为第二类间断点."


@pytest.mark.parametrize(("text", "ranks"), [
    ("a discontinuity of the second kind", {2}),
    ("Newton's method is a second-order method", {2}),
    ("the first-order condition holds", {1}),
    ("First, compute the derivative.", set()),  # a discourse word, not a rank
    ("un punto di discontinuità di seconda specie", {2}),
    ("eine Ableitung zweiter Ordnung", {2}),
    ("une discontinuité de deuxième espèce", {2}),
    ("una discontinuidad de primera especie", {1}),
    (SECOND_KIND, {2}),
    (FIRST_KIND, {1}),
    ("第十二类", {12}),
    ("제2종 불연속점", {2}),
    ("두 번째 종류의 불연속", {2}),
    ("30 seconds into the lecture", set()),
])
def test_ranks_in_every_language(text: str, ranks: set[int]) -> None:
    assert ordinals(text) == ranks


def test_a_rank_its_sentence_does_not_name_is_unbacked() -> None:
    wrong = "第二类间断点是指在某一点左右极限存在但不连续的点。"
    assert unbacked_ordinals(wrong, [FIRST_KIND], "第二类间断点是怎么定义的？") == {2}
    assert unbacked_ordinals(wrong, [SECOND_KIND], "第二类间断点是怎么定义的？") == set()
    # across languages: a Korean statement of the Chinese sentence
    assert unbacked_ordinals("제2종 불연속점은 한쪽 극한이 존재하지 않는 점입니다.",
                             [SECOND_KIND]) == set()
    # a sentence naming no rank: the question's rank may be restated
    cut = "至少一侧极限不存在"
    assert unbacked_ordinals(wrong, [cut], "第二类间断点是怎么定义的？") == set()
    assert unbacked_ordinals(wrong, [cut], "间断点是怎么定义的？") == {2}
    # ... unless another evidence sentence is the one of that rank: the statement gave the
    # question's kind to a sentence about something else
    grafted = "第二类间断点是指在 (a,b) 内任意一点都连续, 在 a 右连续, 在 b 左连续。"
    after = "若定义在 [a,b] 的 f 在 (a,b) 内任意一点都连续, 在 a 右连续, 在 b 左连续."
    asked = "第二类间断点是怎么定义的？"
    assert unbacked_ordinals(grafted, [after], asked, [SECOND_KIND, FIRST_KIND]) == {2}
    assert unbacked_ordinals(grafted, [after], asked, [FIRST_KIND]) == set()


class _SameVector:
    """Every text at the same point: the embedding cannot tell the statements apart."""

    def embed_passages(self, texts: Iterable[str]) -> np.ndarray:
        return np.ones((len(list(texts)), 4)) / 2.0

    embed_sentences = embed_passages


def test_the_statement_check_removes_a_statement_of_another_kind() -> None:
    chunk = Chunk(id="c1", tenant="t", course="c", document_id="d1", document_title="T",
                  doc_type="lecture", topic="", section_path=(), difficulty=0, language="zh",
                  locator=Locator(page=11), text=FIRST_KIND, content_hash="h1", ordinal=1)
    lines = {"S1": Line("S1", Hit(chunk, 1.0, {}, {}, Locator(page=11)), FIRST_KIND, 1.0)}
    wrong = Statement("第二类间断点是指左右极限存在但不连续的点。", ("S1",))
    right = Statement("第一类间断点是指左右极限存在但不连续的点。", ("S1",))
    verdicts = check_statements([wrong, right], lines, "第二类间断点是怎么定义的？", "zh",
                                _SameVector())  # type: ignore[arg-type]
    assert [v.kept for v in verdicts] == [False, True]
    assert "another kind" in verdicts[0].reason


def test_the_question_s_kind_given_to_the_wrong_sentence_is_removed() -> None:
    after = "若定义在 [a,b] 的 f 在 (a,b) 内任意一点都连续, 在 a 右连续, 在 b 左连续."

    lines = {"S1": evidence_line("S1", SECOND_KIND), "S2": evidence_line("S2", after)}
    grafted = Statement("第二类间断点是指在 (a,b) 内任意一点都连续, 在 a 右连续, 在 b 左连续。",
                        ("S2",))
    right = Statement("第二类间断点是指至少一侧极限不存在的点。", ("S1",))
    verdicts = check_statements([grafted, right], lines, "第二类间断点是怎么定义的？", "zh",
                                _SameVector())  # type: ignore[arg-type]
    assert [v.kept for v in verdicts] == [False, True]
    assert "another kind" in verdicts[0].reason


def test_a_statement_that_drops_its_sentences_negation_is_removed() -> None:
    from coursetutor.tutor.wording import dropped_negation

    assert dropped_negation("第二类间断点是指左右极限存在的点。", SECOND_KIND) == {"不存在"}
    assert dropped_negation("第二类间断点是至少一侧极限不存在的点。", SECOND_KIND) == set()
    chunk = Chunk(id="c1", tenant="t", course="c", document_id="d1", document_title="T",
                  doc_type="lecture", topic="", section_path=(), difficulty=0, language="zh",
                  locator=Locator(page=11), text=SECOND_KIND, content_hash="h1", ordinal=1)
    lines = {"S1": Line("S1", Hit(chunk, 1.0, {}, {}, Locator(page=11)), SECOND_KIND, 1.0)}
    wrong = Statement("第二类间断点是指左右极限存在但不连续的间断点。", ("S1",))
    (verdict,) = check_statements([wrong], lines, "第二类间断点是怎么定义的？", "zh",
                                  _SameVector())  # type: ignore[arg-type]
    assert not verdict.kept and "negation" in verdict.reason


def _line(text: str, language: str) -> dict[str, Line]:
    chunk = Chunk(id="c1", tenant="t", course="c", document_id="d1", document_title="T",
                  doc_type="lecture", topic="", section_path=(), difficulty=0,
                  language=language, locator=Locator(page=3), text=text, content_hash="h1",
                  ordinal=1)
    return {"S1": Line("S1", Hit(chunk, 1.0, {}, {}, Locator(page=3)), text, 1.0)}


def test_a_statement_that_negates_across_languages_goes_to_the_model() -> None:
    lines = _line("Newton-Raphson can diverge if the starting point is far from the optimum.",
                  "en")
    flipped = Statement("뉴턴-랩슨 방법은 시작점이 멀어도 발산하지 않습니다.", ("S1",))
    right = Statement("뉴턴-랩슨 방법은 시작점이 최적점에서 멀면 발산할 수 있습니다.", ("S1",))
    asked: list[str] = []

    def judge(claim: str, evidence: str) -> bool | None:
        asked.append(claim)
        return "않" not in claim

    # every text at one point: the cosine (1.0) alone would keep both
    verdicts = check_statements([flipped, right], lines, "뉴턴-랩슨 방법은 언제 발산하나요?", "ko",
                                _SameVector(), judge)  # type: ignore[arg-type]
    assert [v.kept for v in verdicts] == [False, True]
    assert asked == [flipped.text] and "opposite" in verdicts[0].reason
    # without a model the cosine decides, as for any other statement
    kept = check_statements([flipped], lines, "?", "ko", _SameVector())  # type: ignore[arg-type]
    assert kept[0].kept


@pytest.mark.parametrize(("text", "question", "language", "echo"), [
    ("介值定理是用介值定理证明的。", "介值定理是用什么方法证明的？", "zh", True),
    ("闭区间上的连续函数一致连续。", "为什么闭区间上的连续函数一致连续？", "zh", True),
    ("介值定理是用区间套的方法证明的。", "介值定理是用什么方法证明的？", "zh", False),
    # a result's number names it and says nothing of it
    ("介值定理是用定理 3.2.4 的证明方法证明的。", "介值定理是用什么方法证明的？", "zh", True),
    ("Il teorema è il Teorema 33.", "Cosa dice il teorema?", "it", True),
    ("No, Newton-Raphson does not converge from any starting point.",
     "Does Newton-Raphson converge from any starting point?", "en", False),
    ("La serie armonica diverge.", "La serie armonica converge?", "it", False),
    ("La somma della serie di Mengoli è 1.", "Quanto vale la somma della serie di Mengoli?",
     "it", False),
])
def test_a_statement_that_only_echoes_the_question_says_nothing(
        text: str, question: str, language: str, echo: bool) -> None:
    from coursetutor.tutor.statement_check import echoes

    assert echoes(text, question, language) is echo
    lines = _line("定理 3.2.4 (介值定理) … Proof. 区间套, 可以套出 f(c)=η.", "zh")
    (verdict,) = check_statements([Statement(text, ("S1",))], lines, question, language,
                                  _SameVector())  # type: ignore[arg-type]
    assert (verdict.reason == "says nothing the question does not") is echo



def test_a_statement_that_names_the_wrong_sentence_is_kept_with_the_one_it_restates() -> None:
    theorem = ("定理 5.1.2 (Rolle 中值) 设 f 在 [a,b] 上连续, 在 (a,b) 上可导, 且 f(a)=f(b), "
               "则存在 ξ 使 f'(ξ)=0.")
    proof = "证明. 研究函数最大最小值, 对非常数函数, 最大最小值必有至少一者在 (a,b) 中."
    lines = {**_line(theorem, "zh"), "S3": _line(proof, "zh")["S1"]}
    said = Statement("研究函数最大最小值，对非常数函数，最大最小值必有至少一者在 (a,b) 中。",
                     ("S1",))
    (verdict,) = check_statements([said], lines, "Rolle 中值定理是怎么证明的？", "zh",
                                  _SameVector())  # type: ignore[arg-type]
    assert verdict.kept and verdict.statement.evidence == ("S3",)
    # a statement no sentence holds stays removed
    invented = Statement("Rolle 中值定理由 Cauchy 于 1821 年证明。", ("S1",))
    (verdict,) = check_statements([invented], lines, "Rolle 中值定理是怎么证明的？", "zh",
                                  _SameVector())  # type: ignore[arg-type]
    assert not verdict.kept


def test_a_statement_is_not_re_cited_to_a_sentence_that_names_no_rank() -> None:
    removable = "若 $x_0$ 处的左右极限相等但不等于 $f(x_0)$, 则称 $x_0$ 为可去间断点."
    closed = "若定义在 $[a,b]$ 的 $f$ 在 $(a,b)$ 内任意一点都连续, 则 $f\\in C[a,b]$."
    lines = {**_line(closed, "zh"), "S4": _line(removable, "zh")["S1"]}
    wrong = Statement("第二类间断点是指左右极限相等但不等于函数值的点。", ("S1",))
    (verdict,) = check_statements([wrong], lines, "第二类间断点是怎么定义的？", "zh",
                                  _SameVector())  # type: ignore[arg-type]
    assert not verdict.kept


def test_a_statement_that_leaves_out_the_variant_its_slide_item_is_about() -> None:
    # "Relaxed/Damped Newton-Raphson: …" on a slide titled NEWTON-RAPHSON is about a variant;
    # stated as "the Newton-Raphson update rule", its αd[t] answered the wrong question
    damped = ("Relaxed/Damped Newton-Raphson: Use step size α > 0 with x [t+1] = x [t] + αd[t] "
              "to satisfy Wolfe conditions (or just Armijo rule)")
    chunk = Chunk(id="c1", tenant="t", course="c", document_id="d1", document_title="T",
                  doc_type="lecture", topic="", section_path=("NEWTON-RAPHSON",), difficulty=0,
                  language="en", locator=Locator(page=4), text=damped, content_hash="h1",
                  ordinal=1)
    lines = {"S1": Line("S1", Hit(chunk, 1.0, {}, {}, Locator(page=4)), damped, 1.0)}
    unqualified = Statement("The Newton-Raphson update rule is x [t+1] = x [t] + αd[t]", ("S1",))
    qualified = Statement("Damped Newton-Raphson uses a step size α > 0 with "
                          "x [t+1] = x [t] + αd[t].", ("S1",))
    verdicts = check_statements([unqualified, qualified], lines, "What is the update rule?",
                                "en", _SameVector())  # type: ignore[arg-type]
    assert [v.kept for v in verdicts] == [False, True]
    assert "variant" in verdicts[0].reason and "damp" in verdicts[0].reason
    # a question about the variant is the statement's context: it need not name it again
    (asked,) = check_statements(
        [Statement("The step size α > 0 must satisfy Wolfe conditions (or just Armijo rule).",
                   ("S1",))], lines,
        "In damped Newton-Raphson, which condition must the step size satisfy?", "en",
        _SameVector())  # type: ignore[arg-type]
    assert asked.kept
    # a generic label ("Update scheme:", "Disadvantage:") names no variant
    from coursetutor.tutor.sentences import variant_words

    for text in ("Update scheme: x [t+1] = x [t] + d[t]",
                 "Disadvantage: For bad starting points: Newton-Raphson may diverge"):
        assert variant_words(Line("S1", Hit(chunk, 1.0, {}, {}, Locator(page=4)), text,
                                  1.0)) == set()


ZEROS = ("Teorema 33 (degli zeri). sia $f:[a,b]\\rightarrow \\mathbb{R}$, $f$ continua, "
         "$f(a)\\cdot f(b)\\neq 0$ (hanno segno diverso). Allora $\\exists x_0\\in (a,b) "
         "\\mbox{ tale che } f(x_0)=0$")

MONOTONE = "**定理 2.3.1 (单调收敛原理)** 单调上升有上界的数列必收敛, 且极限为其上确界."


@pytest.mark.parametrize(("language", "question", "sentence", "empty", "full"), [
    # the model's second try at a theorem: what kind of theorem, nothing of what it says
    ("it", "Cosa dice il teorema degli zeri?", ZEROS,
     "Il teorema degli zeri è un teorema fondamentale della teoria delle funzioni continua.",
     "Il teorema degli zeri dice che se una funzione continua ha segno diverso in a e b, "
     "allora esiste almeno un punto in cui la funzione si annulla."),
    ("zh", "单调收敛原理是什么？", MONOTONE, "单调收敛原理是一个重要的定理。",
     "单调上升有上界的数列必收敛。"),
    ("en", "What is transfer learning?", "The idea of transfer learning is to leverage the "
     "knowledge acquired by a model trained with lots of data on another task.",
     "Transfer learning is a technique in machine learning.",
     "Transfer learning leverages the knowledge a model acquired on another task."),
])
def test_a_statement_that_carries_nothing_of_its_sentence_is_removed(
        language: str, question: str, sentence: str, empty: str, full: str) -> None:
    lines = _line(sentence, language)
    verdicts = check_statements([Statement(empty, ("S1",)), Statement(full, ("S1",))], lines,
                                question, language, _SameVector())  # type: ignore[arg-type]
    assert [v.kept for v in verdicts] == [False, True]
    assert "next to nothing" in verdicts[0].reason


DAMPED = ("Relaxed/Damped Newton-Raphson: Use step size α > 0 with x [t+1] = x [t] + αd[t] to "
          "satisfy Wolfe conditions (or just Armijo rule)")


@pytest.mark.parametrize(("text", "kept"), [
    # half its words are the slide's; the clause it joins to them is its own
    ("The damping factor α is used to control the step size and ensure that the method "
     "converges.", False),
    ("Damped Newton-Raphson uses a step size α > 0 and chooses it to satisfy the Wolfe "
     "conditions or the Armijo rule.", True),
])
def test_a_clause_of_its_own_joined_to_what_the_sentence_says_is_removed(
        text: str, kept: bool) -> None:
    (verdict,) = check_statements([Statement(text, ("S1",))], _line(DAMPED, "en"),
                                  "What is damped Newton-Raphson?", "en",
                                  _SameVector())  # type: ignore[arg-type]
    assert verdict.kept is kept
    if not kept:
        assert verdict.reason == ("adds a clause of its own: ensure that the method "
                                  "converges")


def test_a_sentence_that_says_little_beyond_the_question_asks_little_of_its_statement() -> None:
    sentence = "Newton-Raphson only needs one iteration for quadratic forms"
    (verdict,) = check_statements([Statement(sentence, ("S1",))], _line(sentence, "en"),
                                  "How many iterations does Newton-Raphson need for a "
                                  "quadratic form?", "en", _SameVector())  # type: ignore[arg-type]
    assert verdict.kept


def test_a_question_is_no_statement() -> None:
    lines = _line(MONOTONE, "zh")
    (verdict,) = check_statements([Statement("定理 2.3.1 中提到的定理是什么？", ("S1",))], lines,
                                  "单调收敛原理是什么？", "zh", _SameVector())  # type: ignore[arg-type]
    assert not verdict.kept and verdict.reason == "a question, not a statement"


ROLLE = ("Teorema 42 (di Rolle). Sia $f:[a,b]\\rightarrow \\mathbb{R}$. Se: - $f$ è continua in "
         "$[a,b]$ - $f$ è derivabile su $(a,b)$ - $f(a)=f(b)$ allora: $$\\exists c\\in (a,b) "
         "\\mbox{: } f^{'}(c)=0$$")


@pytest.mark.parametrize(("language", "text", "kept"), [
    # the small model's Rolle: every formula but the condition it said in words
    ("it", "Il teorema di Rolle afferma che se una funzione f:[a,b]→ ℝ è continua in [a,b] e "
     "derivabile su (a,b) e ha un valore fisso in entrambi gli estremi, allora esiste almeno "
     "un punto c∈ (a,b) tale che f'(c)=0.", False),
    ("ko", "f는 [a, b]에서 연속이고 미분가능하다고 가정했을 때, a와 b 사이에 f'(c) = 0이라는 점이 "
     "존재합니다.", False),  # across languages too: the formula is the same in all
    ("it", "Se f è continua in [a,b], derivabile su (a,b) e f(a) = f(b), allora esiste "
     "c∈(a,b) tale che f'(c)=0.", True),
])
def test_a_theorem_restated_without_a_condition_it_gives_as_a_formula(
        language: str, text: str, kept: bool) -> None:
    from coursetutor.tutor.statement_check import dropped_condition

    lines = _line(ROLLE, "it")
    assert (dropped_condition(text, list(lines.values())) == "") is kept
    if not kept:
        (verdict,) = check_statements([Statement(text, ("S1",))], lines,
                                      "Cosa afferma il teorema di Rolle?", language,
                                      _SameVector())  # type: ignore[arg-type]
        assert not verdict.kept and "f(a)=f(b)" in verdict.reason


def test_a_condition_in_words_or_a_bound_is_no_bare_condition() -> None:
    from coursetutor.tutor.statement_check import bare_conditions

    assert bare_conditions(ROLLE) == ["f(a)=f(b)"]
    assert bare_conditions("7.1.7 Teorema 42 (di Rolle). Se: • f è continua in [a, b] • f è "
                           "derivabile su (a, b) • f (a) = f (b) allora: ∃c ∈ (a, b): f ′ (c) "
                           "= 0") == ["f (a) = f (b)"]
    # "α,β > 0" reads as "positivi", "α,β ∈ ℝ" as "reali": no formula needed
    assert bare_conditions("Teorema 5. Siano - $\\alpha,\\beta>0$ - $\\alpha,\\beta \\in "
                           "\\mathbb{R}$ allora $\\exists n: n\\alpha>\\beta$") == []


ARCHIMEDES = (r"Teorema 5 (Proprietà archimedea). Siano - $\alpha,\beta>0$ - $\alpha<\beta$ - "
              r"$\alpha,\beta \in \mathbb{R}$ allora $\exists n \in \mathbb{N}$ tale che "
              r"$n\alpha>\beta$. Ovvero dopo un numero finito di \"saltelli\" $n\alpha$ avrà "
              r"superato $\beta$.")


@pytest.mark.parametrize(("language", "question", "sentence", "paraphrase", "own"), [
    # its α and β are the sentence's \alpha and \beta
    ("it", "Cosa afferma la proprietà archimedea?", ARCHIMEDES,
     "La proprietà archimedea afferma che per ogni due numeri positivi α e β, esiste un numero "
     "naturale n tale che α * n supera β.",
     "La proprietà archimedea afferma che ogni successione limitata ha una sottosuccessione "
     "convergente."),
    # the connectives a Chinese restatement wraps around its sentence are not its words
    ("zh", "为什么闭区间上的连续函数一致连续？", "*→ Proof.* 考虑有限开覆盖的 Lebesgue 数即可.",
     "因此，我们可以通过考虑有限开覆盖的 Lebesgue 数来证明这一点。",
     "因此，我们可以通过有界数列的收敛子列来证明函数的有界性。"),
    # a definition whose logic symbols the restatement spells out ("对于任意 ε>0，存在 N")
    ("zh", "什么是数列的极限？",
     "**定义 2.1.1 (极限)** 对序列 {aₙ}, ∀ε>0, ∃ N, ∀ n≥ N, |a−aₙ|<ε, 则称 a 为 {aₙ} 的极限.",
     "如果序列 {aₙ} 满足对于任意 ε>0，存在 N，对于所有 n≥ N，|a−aₙ|<ε，那么称 a 为 {aₙ} 的极限。",
     "如果序列 {aₙ} 单调有界，那么它的极限等于它的上确界。"),
    # a result in LaTeX said in words: its zero is the sentence's "f(x_0)=0", its "esiste"
    # the sentence's "\exists"
    ("it", "Cosa dice il teorema degli zeri?",
     r"Teorema 33 (degli zeri). sia $f:[a,b]\to\mathbb{R}$, $f$ continua, $f(a)\cdot f(b)"
     r"\neq 0$ (hanno segno diverso). Allora $\exists x_0\in (a,b)$ tale che $f(x_0)=0$",
     "Il teorema degli zeri dice che se una funzione continua e ha segno diverso in due punti, "
     "allora esiste almeno un punto intermedio tra questi due punti dove la funzione è zero.",
     "Il teorema degli zeri dice che una funzione derivabile ha sempre un massimo e un minimo "
     "in ogni intervallo aperto, come una funzione monotona."),
    # "a function" is no word of a sentence that writes f:[a,b]→ℝ: the wrong gloss goes
    ("it", "Quale è il teorema di Rolle?",
     r"Teorema 42 (di Rolle). Sia $f:[a,b]\to\mathbb{R}$. Se: - $f$ è continua in $[a,b]$ - "
     r"$f$ è derivabile su $(a,b)$ - $f(a)=f(b)$ allora: $\exists c\in (a,b) : f^'(c)=0$ "
     r"(Non immporta la non derivabilità degli estremi)",
     "Se f è continua in [a,b], derivabile su (a,b) e f(a)=f(b), allora esiste c in (a,b) "
     "tale che f'(c)=0.",
     "Il teorema di Rolle è un teorema di calcolo differenziale che fornisce una condizione "
     "sufficiente per la derivabilità di una funzione continua su un intervallo."),
    ("it", "Come si definisce il limite di una successione?",
     "Si dice che aₙ → ℓ se ∀ ϵ > 0 ∃ n₀ ∈ ℕ : ∀ n ≥ n₀ si ha |aₙ − ℓ| < ϵ.",
     "La successione aₙ tende a ℓ se per ogni ϵ > 0 esiste n₀ ∈ ℕ tale che per ogni n ≥ n₀ "
     "si ha |aₙ − ℓ| < ϵ.",
     "La successione aₙ tende a ℓ se è monotona e limitata, come ogni successione reale."),
])
def test_the_overlap_counts_what_a_paraphrase_restates(
        language: str, question: str, sentence: str, paraphrase: str, own: str) -> None:
    lines = _line(sentence, language)
    verdicts = check_statements([Statement(paraphrase, ("S1",)), Statement(own, ("S1",))],
                                lines, question, language,
                                _SameVector())  # type: ignore[arg-type]
    assert verdicts[0].reason != "most of its words are not in its sentences"
    assert not verdicts[1].kept and verdicts[1].reason == ("most of its words are not in its "
                                                           "sentences")


def test_a_chinese_paraphrase_that_adds_its_own_words_is_removed() -> None:
    # "极限是数列中的最大值": the limit is the supremum, not a maximum the sequence attains;
    # counted in characters (without filler) its words passed, counted in words they do not
    monotone = (r"**定理 2.3.1** 若单调上升的 $\{a_n\}$ 有上界, 则其收敛且 "
                r"$\lim_{n\to\infty}a_n=\sup_{n\ge 1}a_n=:a$.")
    wrong = Statement("定理 2.3.1 说明了单调上升的数列 {aₙ} 有上界时，"
                      "它收敛且极限是数列中的最大值 a。", ("S1",))
    (verdict,) = check_statements([wrong], _line(monotone, "zh"), "单调收敛原理是什么？", "zh",
                                  _SameVector())  # type: ignore[arg-type]
    assert not verdict.kept and verdict.reason == "most of its words are not in its sentences"


BISEZIONE = ("Come funziona: si calcola il punto medio `c = (a + b) / 2`; se `f(a)` e `f(c)` "
             "hanno segno opposto la radice sta in `[a, c]`, altrimenti sta in `[c, b]`.")


@pytest.mark.parametrize(("text", "shown"), [
    # a sentence of the model's own after the one that restates: cut, the first stays
    ("Se `f(a)` e `f(c)` hanno segno opposto, la radice sta in `[a, c]`, altrimenti sta in "
     "`[c, b]`. Questo è il criterio di parità per determinare il nuovo intervallo.",
     "Se `f(a)` e `f(c)` hanno segno opposto, la radice sta in `[a, c]`, altrimenti sta in "
     "`[c, b]`."),
    # a second sentence that restates the same sentence stays
    ("Si calcola il punto medio `c = (a + b) / 2`. Se `f(a)` e `f(c)` hanno segno opposto, "
     "la radice sta in `[a, c]`.",
     "Si calcola il punto medio `c = (a + b) / 2`. Se `f(a)` e `f(c)` hanno segno opposto, "
     "la radice sta in `[a, c]`."),
    # the question's words as a label: gone
    ("Come funziona: si calcola il punto medio `c = (a + b) / 2`.",
     "Si calcola il punto medio `c = (a + b) / 2`."),
])
def test_a_sentence_of_its_own_and_the_question_as_a_label_are_cut(text: str,
                                                                  shown: str) -> None:
    trimmed = without_own_sentences(Statement(text, ("S1",)), _line(BISEZIONE, "it"),
                                    "Come funziona il metodo di bisezione?", "it")
    assert trimmed.text == shown


def test_a_label_that_is_not_the_question_stays() -> None:
    text = "Teorema 43 (di Lagrange): esiste c in (a, b) con f'(c) = (f(b) - f(a)) / (b - a)."
    trimmed = without_own_sentences(Statement(text, ("S1",)), _line(text, "it"),
                                    "Che cosa dice il teorema di Lagrange?", "it")
    assert trimmed.text == text
