"""Evidence sentences (tutor/sentences.py) and the statements contract (tutor/statements.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from coursetutor.retrieval.language import ANY_STOPWORD
from coursetutor.retrieval.tokenize import tokenize
from coursetutor.tutor.sentences import (
    NAMED_WEIGHT,
    WHOLE,
    asks_yes_no,
    defines,
    garbled,
    named,
    states_result,
    steps_wanted,
    unasked,
    units,
)
from coursetutor.tutor.statements import Statement, StatementStream, parse, schema
from coursetutor.types import Chunk, Locator

ROLLE = ("7.1.7 Teorema di Rolle Teorema 42 (di Rolle). Sia f : [a, b] → R. Se: • f è continua "
         "in [a, b] • f è derivabile su (a, b) • f (a) = f (b) allora: ∃c ∈ (a, b): f ′ (c) = 0 "
         "Dimostrazione. Si hanno due casi: • se f è costante si ha che f ′ (c) = 0")


def test_a_theorem_stays_whole_with_its_label_and_hypotheses() -> None:
    got = units(ROLLE, "it")
    statement = next(u for u in got if u.startswith("Teorema 42"))
    assert "f (a) = f (b)" in statement and "∃c ∈ (a, b): f ′ (c) = 0" in statement
    assert not any(u.startswith("Teorema 42") and "Dimostrazione" in u for u in got)


def test_a_slide_line_cut_mid_sentence_is_joined() -> None:
    text = ("Damped Newton-Raphson:\nUse step size α > 0 with\nx[t+1] = x[t] + αd[t]\n"
            "to satisfy Wolfe")
    (unit,) = units(text)
    assert unit.endswith("to satisfy Wolfe") and "with x[t+1]" in unit


def test_a_slides_labels_in_a_long_run_start_new_sentences() -> None:
    slide = ("NEWTON-RAPHSON Assumption: f ∈ C2 Aim: Find stationary point x ∗, i.e., ∇f (x ∗) "
             "= 0 Idea: Find root of first order Taylor approx of ∇f (x): ∇f (x) ≈ ∇f (x [t]) "
             "+ ∇2f (x [t])(x − x [t]) = 0 ∇2f (x [t])(x − x [t]) = −∇f (x [t]) x [t+1] = x "
             "[t] − ( ∇2f (x [t]) )−1 ∇f (x [t]) Update scheme: x [t+1] = x [t] + d[t] with "
             "d[t] = − ( ∇2f (x [t]) )−1 ∇f (x [t])")
    found = units(slide, "en")
    assert found[-1] == ("Update scheme: x [t+1] = x [t] + d[t] with d[t] = − ( ∇2f (x [t]) "
                         ")−1 ∇f (x [t])")
    assert not any(garbled(u) for u in found)


def test_a_short_slides_labelled_items_are_units_of_their_own() -> None:
    # read as one unit, the note's words ("method") made the damped step answer "the update
    # rule", and the advantage hid the disadvantage ("may diverge")
    slide = ("NEWTON-RAPHSON Note: In practice, we get d[t] by solving the linear system ∇2f "
             "(x [t])d[t] = −∇f (x [t]) with direct (matrix decompositions) or iterative "
             "methods Relaxed/Damped Newton-Raphson: Use step size α > 0 with x [t+1] = x [t] "
             "+ αd[t] to satisfy Wolfe conditions (or just Armijo rule)")
    assert len(slide) <= WHOLE
    note, damped = units(slide, "en")
    assert note.startswith("NEWTON-RAPHSON Note: In practice") and note.endswith("methods")
    assert damped.startswith("Relaxed/Damped Newton-Raphson: Use step size α > 0")
    discussion = ("DISCUSSION Advantage: For f sufficiently smooth: Newton-Raphson converges "
                  "locally quadratically Disadvantage: For “bad” starting points: "
                  "Newton-Raphson may diverge")
    assert units(discussion, "en")[1] == ("Disadvantage: For “bad” starting points: "
                                          "Newton-Raphson may diverge")


@pytest.mark.parametrize("text", [
    # a theorem's set-up is no item of its own
    "Teorema 42 (di Rolle). Sia f : [a, b] → R una funzione. Se: • f è continua in [a, b] "
    "• f è derivabile su (a, b) • f (a) = f (b) allora: ∃c ∈ (a, b): f ′ (c) = 0",
    # a short label's item (under SHORT letters) does not stand alone
    "Note: see the lecture. Aim: Find quasi-second order methods not relying on exact Hessians",
    # maths markup: a teacher's source keeps its block
    "Definition 2 (descent). Note: $d^T \\nabla f(x) < 0$ holds for every direction we use "
    "Remark: the step $\\alpha$ is positive",
])
def test_blocks_that_are_no_run_of_items_stay_whole(text: str) -> None:
    assert units(text, "en") == [text]


def test_bullets_in_a_long_run_start_new_sentences() -> None:
    text = ("定义3.2.2 " + "若左右极限相等但不等于函数值,则称为可去间断点,这是一个长句子。" * 3
            + " ·若c处的左右极限存在但不连续,则称为第一类间断点"
            + " ·否则即至少一侧极限不存在,则称为第二类间断点.")
    assert any(u.startswith("·否则") for u in units(text, "zh"))


@pytest.mark.parametrize("text", [
    "这等价于 第六章 不定积分 分部积分法 由于有 所以 例如",
    "ex − 1 − x − αx2 x2 = (usando De L'Hopital)z }| { ex − 1 − 2αx 2x",
    "Se la funzione [formula missing] è limitata allora converge alla fine",
    "f (x) = \ue001\ue002 dove la funzione è continua nel suo dominio",
    "0.00 0.25 0.50 0.75 1.00 0.00 0.25 0.50 0.75 1.00 x1 x2 type 0 1",  # a plot's axes
    "= Pn i=1 2 y(i) (exp(f (i) )+1)−1 exp(f (i) )+1",  # a sum the PDF flattened
])
def test_garbled_text_is_never_evidence(text: str) -> None:
    assert garbled(text)


@pytest.mark.parametrize("text", [
    "Teorema 42 (di Rolle). Sia f : [a, b] → R. Se: • f è continua in [a, b] allora f ′ (c) = 0",
    "·否则即至少一侧极限不存在,则称为第二类间断点.",
    "Near minimum, Hessian is positive definite",
    "Update scheme: x [t+1] = x [t] + d[t] with d[t] = − ( ∇2f (x [t]) )−1 ∇f (x [t])",
])
def test_maths_and_clean_text_are_evidence(text: str) -> None:
    assert not garbled(text)


def test_how_why_and_proof_questions_want_steps() -> None:
    assert steps_wanted("Why is Newton-Raphson expensive?", "")
    assert steps_wanted("Rolle 中值定理是怎么证明的？", "")
    assert not steps_wanted("Cosa afferma il teorema di Rolle?", "")


def test_the_schema_names_only_the_turns_ids() -> None:
    s = schema(["S1", "S2"], most=3)
    items = s["properties"]["statements"]
    assert items["maxItems"] == 3
    assert items["items"]["properties"]["evidence"]["items"]["enum"] == ["S1", "S2"]


def test_parse_drops_unknown_ids_and_statements_left_with_none() -> None:
    raw = 'Sure! {"statements": [{"text": "A  b.", "evidence": ["s1", "S7"]},' \
          ' {"text": "C.", "evidence": ["S9"]}, {"text": 3, "evidence": ["S1"]}]} done'
    assert parse(raw, ["S1", "S2"]) == [Statement("A b.", ("S1",))]
    assert parse("no json here", ["S1"]) is None
    assert parse('{"statements": "x"}', ["S1"]) is None


def test_statements_stream_as_each_is_closed() -> None:
    raw = json.dumps({"statements": [{"text": 'a "quoted" {brace} [x]', "evidence": ["S1"]},
                                     {"text": "b", "evidence": ["S2"]}]})
    stream = StatementStream(["S1", "S2"])
    seen = []
    for i, ch in enumerate(raw):
        for statement in stream.feed(ch):
            seen.append((statement.text, i))
    assert [t for t, _ in seen] == ['a "quoted" {brace} [x]', "b"]
    assert seen[0][1] < raw.index('"b"')  # the first before the second is written


def _chunk(ordinal: int, text: str, language: str, first_page: int) -> Chunk:
    """One passage of a document of notes, on its own page."""
    return Chunk(id=f"c{ordinal}", tenant="t", course="c", document_id="notes",
                 document_title="Notes", doc_type="lecture", topic="", section_path=(),
                 difficulty=0, language=language, locator=Locator(page=first_page + ordinal),
                 text=text, content_hash=f"h{ordinal}", ordinal=ordinal)


def test_a_passage_ending_on_a_label_is_continued_from_the_next() -> None:
    from types import SimpleNamespace

    from coursetutor.tutor.sentences import ends_in_label
    from coursetutor.tutor.stages.select import continued
    from coursetutor.types import Hit, Locator

    def chunk(ordinal: int, text: str) -> Chunk:
        return _chunk(ordinal, text, "it", 94)

    label = "La media integrale si definisce così. Teorema 56 (della media integrale)."
    statement = "Sia f : [a, b] → R continua. Allora ∃c ∈ [a, b] tale che f (c) = 1/(b−a) ∫ f."
    following = {1: chunk(1, f"{statement} Dimostrazione. Per il teorema di Weierstrass …")}
    store = SimpleNamespace(chunk_at=lambda filters, doc, n: following.get(n))
    tools = SimpleNamespace(ws=SimpleNamespace(tenant="t", store=store))
    assert ends_in_label(label, "it") and not ends_in_label(statement, "it")
    (hit,) = continued(tools, "c", [Hit(chunk(0, label), 1.0, {}, {}, Locator(page=94))])  # type: ignore[arg-type]
    assert hit.chunk.text == f"{label} {statement}"
    assert "Dimostrazione" not in hit.chunk.text  # the statement, not the page after it


def test_a_what_is_question_reads_deeper_for_the_passage_that_defines_it() -> None:
    from types import SimpleNamespace

    from coursetutor.tutor.stages.select import DEEPER, with_definition
    from coursetutor.types import Hit, Locator

    def hit(n: int, text: str) -> Hit:
        return Hit(_chunk(n, text, "it", 60), 1.0, {}, {}, Locator(page=60 + n))

    examples = hit(0, "I polinomi sono funzioni continue, le funzioni razionali sono continue.")
    definition = hit(9, "Sia f:D→R. Si dice che F è continua in x₀ se: lim f(x)=f(x₀). Le "
                        "funzioni elementari sono continue.")
    asked: list[tuple[str, int]] = []

    def search(query: str, course: str, k: int, **_: object) -> list[Hit]:
        asked.append((query, k))
        return [examples, hit(5, "Teorema 33 (degli zeri)."), definition]

    tools = SimpleNamespace(ws=SimpleNamespace(search=search))

    def found(question: str, intent: str) -> SimpleNamespace:
        opened = SimpleNamespace(question=question, course="c", allowed_types=(),
                                 state=SimpleNamespace(search=None))
        return SimpleNamespace(
            understood=SimpleNamespace(translated="", recalled=SimpleNamespace(opened=opened)),
            cat=SimpleNamespace(language="it", intent=intent), query=question)

    question = "Che cos'è una funzione continua?"
    hits = with_definition(tools, found(question, "definition"), [examples])  # type: ignore[arg-type]
    assert hits == [definition, examples] and asked == [(question, DEEPER)]
    # a passage found first that defines it, or another kind of question: no second search
    assert with_definition(tools, found(question, "definition"), [definition]) == [definition]  # type: ignore[arg-type]
    assert with_definition(tools, found("Come funziona?", "explain"), [examples]) == [examples]  # type: ignore[arg-type]
    assert len(asked) == 1


BRIER = ("R2 → [0, 1], (x1, x2) 7→ 1 1+exp((1,x1 ,x2 )⊤ θ) such that it minimizes the "
         "Brier-loss")


@pytest.mark.parametrize(("after", "joined"), [
    # what the lead-in introduces, read with it
    ("Sia f continua in [a,b] e derivabile in (a,b). Allora esiste c. Dimostrazione. …",
     "Sia f continua in [a,b] e derivabile in (a,b). Allora esiste c."),
    # a sum the PDF ran flat: joined up to the clause it garbles, and of that the map's
    # domain and codomain and the words after the map whose arrow ↦ was lost ("7→"): the
    # model and the loss the exercise names
    (f"{BRIER}, i.e., Remp = Pn i=1 ∥y(i) − π(x(i))∥2 2.",
     "R2 → [0, 1] … such that it minimizes the Brier-loss."),
    # garbled from its start, it would take the lead-in out of the evidence with it: left
    ("Remp = Pn i=1 ∥y(i) − π(x(i))∥2 2.", ""),
])
def test_a_passage_ending_on_a_lead_in_is_continued_from_the_next(after: str,
                                                                  joined: str) -> None:
    from types import SimpleNamespace

    from coursetutor.tutor.sentences import ends_in_lead_in
    from coursetutor.tutor.stages.select import continued
    from coursetutor.types import Hit, Locator

    lead_in = "Il teorema si enuncia come segue. Si ha il seguente risultato:"
    following = {1: _chunk(1, after, "it", 12)}
    store = SimpleNamespace(chunk_at=lambda filters, doc, n: following.get(n))
    tools = SimpleNamespace(ws=SimpleNamespace(tenant="t", store=store))
    assert ends_in_lead_in(units(lead_in, "it"))
    (hit,) = continued(tools, "c", [Hit(_chunk(0, lead_in, "it", 12), 1.0, {}, {},  # type: ignore[arg-type]
                                        Locator(page=12))])
    assert hit.chunk.text == (f"{lead_in} {joined}" if joined else lead_in)
    assert "Dimostrazione" not in hit.chunk.text


def test_a_garbled_sentence_reads_up_to_the_clause_its_formula_garbles() -> None:
    from coursetutor.tutor.sentences import garbled, readable_head

    assert garbled(f"{BRIER}, i.e., Remp = Pn i=1 ∥y(i) − π(x(i))∥2 2.")
    assert readable_head(f"{BRIER}, i.e., Remp = Pn i=1 ∥y(i) − π(x(i))∥2 2.") == \
        "R2 → [0, 1] … such that it minimizes the Brier-loss."
    # what reads before the map's argument: kept when it is not garbled itself, up to a
    # clause whose brackets close ("[0, 1]", not "[0, 1], (x1")
    assert readable_head("the map goes from the plane to the unit interval, (x1, x2) 7→ 1 "
                         "1+exp(x1) such that it minimizes the loss, i.e., R = Pn i=1 y2.") == \
        "the map goes from the plane to the unit interval … such that it minimizes the loss."
    assert readable_head("the model π : R2 → [0, 1], (x1, x2) 7→ 1 1+exp(x1) such that it "
                         "minimizes the loss, i.e., R = Pn i=1 y2.") == \
        "the model π : R2 → [0, 1] … such that it minimizes the loss."
    assert readable_head("over Pn i=1 ∥y(i)∥2 2, (x1, x2) 7→ 1 1+exp(x1) such that it "
                         "minimizes the loss, i.e., R = Pn i=1 y2.") == \
        "… such that it minimizes the loss."  # a flat sum before it: garbled, left out
    assert readable_head("The risk is the mean of the losses, i.e., Remp = Pn i=1 ∥y(i)∥2 2.") \
        == "The risk is the mean of the losses."
    assert readable_head("Remp = Pn i=1 ∥y(i) − π(x(i))∥2 2.") == ""
    assert readable_head("x 1, Pn i=1 ∥y(i)∥2 2.") == ""  # a head without words


IVT = ("**定义 3.2.3 (连续函数)**\n\n若 $f$ 在 $(a,b)$ 内任意一点都连续, 则称 $f$ 为连续函数.\n\n"
       "**定理 3.2.4 (介值定理)**\n\n若 $f\\in C[a,b]$ 满足 $f(a)<f(b)$, 则 "
       "$\\exist\\xi\\in(a,b),~f(\\xi)=\\eta$.")
IVT_PROOF = ("*→ Proof.* 区间套, 可以套出 $f(c)\\le\\eta\\land f(c)\\ge\\eta$.\n\n"
             "**例子 3.2.5**\n\n*→Proof.* 用 定理 3.3.1 的反证手法即可证明.")


def test_labels_and_marks_open_the_statement_they_stand_before() -> None:
    from coursetutor.tutor.sentences import ends_in_label, opens_on_proof

    assert units(IVT, "zh")[-1].startswith("**定理 3.2.4 (介值定理)** 若 $f")
    assert units(IVT_PROOF, "zh") == [
        "*→ Proof.* 区间套, 可以套出 $f(c)\\le\\eta\\land f(c)\\ge\\eta$.",
        "**例子 3.2.5** *→Proof.* 用 定理 3.3.1 的反证手法即可证明.",  # a reference splits nothing
    ]
    assert opens_on_proof(IVT_PROOF, "zh") and not opens_on_proof(IVT, "zh")
    assert ends_in_label("Si veda sotto.\n\n**Teorema 56 (della media integrale).**", "it")


def test_a_passage_opening_on_a_proof_gets_the_statement_it_proves() -> None:
    from types import SimpleNamespace

    from coursetutor.tutor.stages.select import continued
    from coursetutor.types import Hit, Locator

    def chunk(ordinal: int, text: str) -> Chunk:
        return _chunk(ordinal, text, "zh", 30)

    before = {3: chunk(3, IVT)}
    store = SimpleNamespace(chunk_at=lambda filters, doc, n: before.get(n))
    tools = SimpleNamespace(ws=SimpleNamespace(tenant="t", store=store))
    (hit,) = continued(tools, "c", [Hit(chunk(4, IVT_PROOF), 1.0, {}, {}, Locator(page=34))])  # type: ignore[arg-type]
    first, proof = units(hit.chunk.text, "zh")[:2]
    assert first.startswith("**定理 3.2.4 (介值定理)**") and proof.startswith("*→ Proof.* 区间套")
    assert "连续函数" not in hit.chunk.text  # the statement proved, not the page before it


LAGRANGE = """Teorema 43 (di Lagrange). Sia $f:[a,b]\\rightarrow \\mathbb{R}$. Se:

- $f$ è continua in $[a,b]$

- $f$ è derivabile su $(a,b)$

Allora: $$\\exists c\\in (a,b)\\mbox{: } f^{'}(c)=\\frac{f(b)-f(a)}{b-a}$$

Dimostrazione. Definiamo $g(x)=f(x)-\\frac{f(b)-f(a)}{b-a}\\cdot(x-a)$."""


def test_a_theorem_set_out_over_blank_lines_is_one_statement() -> None:
    assert units(LAGRANGE, "it") == [
        "Teorema 43 (di Lagrange). Sia $f:[a,b]\\rightarrow \\mathbb{R}$. Se: - $f$ è continua "
        "in $[a,b]$ - $f$ è derivabile su $(a,b)$ Allora: $$\\exists c\\in (a,b)\\mbox{: } "
        "f^{'}(c)=\\frac{f(b)-f(a)}{b-a}$$",
        "Dimostrazione. Definiamo $g(x)=f(x)-\\frac{f(b)-f(a)}{b-a}\\cdot(x-a)$.",
    ]


def test_a_lead_in_cut_before_its_list_keeps_the_list_and_its_conclusion() -> None:
    text = ("Teorema 5 (Proprietà archimedea). Siano\n\n- $\\alpha,\\beta>0$\n\n"
            "- $\\alpha<\\beta$\n\nallora $\\exists n \\in \\mathbb{N}$ tale che "
            "$n\\alpha>\\beta$.")
    (unit,) = units(text, "it")
    assert unit.startswith("Teorema 5") and unit.endswith("tale che $n\\alpha>\\beta$.")
    # a list after a finished sentence is a list of its own
    assert len(units("The method has two steps.\n\n- predict\n\n- correct", "en")) > 1


def test_a_displayed_formula_stays_with_the_sentence_that_introduced_it() -> None:
    text = ("Setting `y = 0` and calling the solution\n`x_{n+1}` gives\n\n"
            "    x_{n+1} = x_n - f(x_n) / f'(x_n)\n\nThis is **Newton's iteration**.")
    assert units(text) == [
        "Setting `y = 0` and calling the solution `x_{n+1}` gives "
        "x_{n+1} = x_n - f(x_n) / f'(x_n)",
        "This is **Newton's iteration**.",
    ]


@pytest.mark.parametrize(("sentence", "bonus"), [
    ("Teorema 43 (di Lagrange). Sia $f:[a,b]$ continua.", NAMED_WEIGHT),
    ("**定理 3.2.4 (介值定理)** 若 $f\\in C[a,b]$", NAMED_WEIGHT),
    # the name holds the question's words among many others: a corollary, not the theorem
    ("Corollario 3 (conseguenza fondamentali al teorema di Lagrange). Sia $f$ derivabile.",
     0.0),
    ("Sia $f$ derivabile in $(a,b)$: allora vale il teorema di Lagrange.", 0.0),
])
def test_the_result_the_question_names(sentence: str, bonus: float) -> None:
    language = "zh" if "定理" in sentence else "it"
    question = "介值定理是什么？" if language == "zh" else "Cosa dice il teorema di Lagrange?"
    wanted = {w for w in tokenize(question, language) if w not in ANY_STOPWORD}
    assert named(sentence, wanted, language) == pytest.approx(bonus)


@pytest.mark.parametrize("question", [
    "第二类间断点是怎么定义的？", "How is a removable discontinuity defined?",
    "Come è definita la serie armonica?", "상합은 어떻게 정의되나요?"])
def test_how_a_thing_is_defined_asks_for_its_definition_not_steps(question: str) -> None:
    assert not steps_wanted(question, "concept")


@pytest.mark.parametrize(("section", "names"), [
    (("5 Serie", "5.2.3 Serie Armonica"), True),
    (("5 Serie", "5.5.4 Teorema della convergenza assoluta"), False),
    ((), False),
])
def test_a_passage_whose_section_the_question_names(section: tuple[str, ...],
                                                    names: bool) -> None:
    from coursetutor.tutor.sentences import _names_section
    from coursetutor.types import Chunk, Hit, Locator

    chunk = Chunk(id="c", tenant="t", course="c", document_id="notes", document_title="Analisi",
                  doc_type="lecture", topic="", section_path=section, difficulty=0,
                  language="it", locator=Locator(page=45), text="…", content_hash="h",
                  ordinal=0)
    wanted = {w for w in tokenize("La serie armonica converge?", "it") if w not in ANY_STOPWORD}
    assert _names_section(Hit(chunk, 1.0, {}, {}, Locator(page=45)), [wanted], "it") is names


def test_latex_in_a_statement_survives_its_json() -> None:
    # the model writes \frac, \nabla, \rightarrow inside a JSON string: read as the escapes
    # \f, \n and \r they would be a form feed, a new line and a carriage return
    raw = ('{"statements": [{"text": "$h(x)=f(x)-\\frac{f(b)-f(a)}{b-a}$, \\nabla f '
           '\\rightarrow 0, \\Delta x, \\\\alpha, \\"q\\" \\u00e8", "evidence": ["S1"]}]}')
    assert parse(raw, ["S1"]) == [Statement(
        "$h(x)=f(x)-\\frac{f(b)-f(a)}{b-a}$, \\nabla f \\rightarrow 0, \\Delta x, \\alpha, "
        "\"q\" è", ("S1",))]
    stream = StatementStream(["S1"])
    assert list(stream.feed(raw)) == parse(raw, ["S1"])


@pytest.mark.parametrize(("style", "text", "intent", "statements"), [
    ("auto", "Teorema 42 (di Rolle). Sia $f:[a,b]\\rightarrow \\mathbb{R}$ continua.", "concept",
     True),
    ("auto", "Newton-Raphson: x [t+1] = x [t] − (∇2f (x [t]))−1 ∇f (x [t])", "concept", False),
    ("auto", "Sia $f:[a,b]\\rightarrow \\mathbb{R}$ continua.", "exercise", False),
    ("prose", "Sia $f:[a,b]\\rightarrow \\mathbb{R}$ continua.", "concept", False),
    ("statements", "Bisection halves the interval.", "concept", True),
])
def test_auto_answers_latex_maths_in_statements(style: str, text: str, intent: str,
                                                 statements: bool) -> None:
    from types import SimpleNamespace

    from coursetutor.tutor.stages.select import applies
    from coursetutor.types import Hit

    hit = Hit(_chunk(0, text, "it", 1), 1.0, {}, {}, Locator(page=1))
    found = SimpleNamespace(cat=SimpleNamespace(intent=intent),
                            evidence=SimpleNamespace(deferred=False, hits=[hit]))
    tools = SimpleNamespace(settings=SimpleNamespace(answer_style=style))
    assert applies(tools, found) is statements  # type: ignore[arg-type]


def test_a_statement_loses_the_numbers_and_ids_the_reply_adds_itself() -> None:
    raw = ('{"statements": [{"text": "1. 1. 区间套, 可以套出 $f(c)=\\\\eta$. [S2]", '
           '"evidence": ["S2"]}, {"text": "2) Then [S1, S2] it stops.", "evidence": ["S1"]}]}')
    assert parse(raw, ["S1", "S2"]) == [Statement("区间套, 可以套出 $f(c)=\\eta$.", ("S2",)),
                                        Statement("Then it stops.", ("S1",))]
    # an id its last word points at sends to the sentence; one after what it said cites it
    pointed = ('{"statements": [{"text": "La definizione è descritta in [S1].", "evidence": '
               '["S1"]}, {"text": "f è continua in x₀ [S1].", "evidence": ["S1"]}]}')
    assert [s.points for s in parse(pointed, ["S1"]) or []] == [True, False]


def test_a_proof_question_asks_for_the_proof_not_the_theorem() -> None:
    from coursetutor.tutor.sentences import asks_proof

    assert asks_proof("介值定理是用什么方法证明的？", "concept")
    assert asks_proof("How is Rolle's theorem proved?", "concept")
    assert not asks_proof("Cosa dice il teorema di Rolle?", "concept")


def test_overlapping_passages_give_a_labelled_statement_once() -> None:
    from types import SimpleNamespace

    from coursetutor.tutor.sentences import select
    from coursetutor.tutor.stages.select import continued
    from coursetutor.types import Hit, Locator

    # the passage ends on the label, and the next one (overlapping it) opens with it again
    before = "到此可以声明区间套定理与 Dedekind 定理等价.\n\n**定理 2.4.2 (区间套)**"
    statement = ("** 定理 2.4.2 (区间套)** 若有一列 $[a_1,b_1]\\supset [a_2,b_2]\\supset\\cdots$ "
                 "且 $b_n-a_n\\to 0$, 则存在唯一的 $c$ 属于每一个区间.")
    following = {1: _chunk(1, statement, "zh", 7)}
    store = SimpleNamespace(chunk_at=lambda filters, doc, n: following.get(n))
    tools = SimpleNamespace(ws=SimpleNamespace(tenant="t", store=store))
    (hit,) = continued(tools, "c", [Hit(_chunk(0, before, "zh", 7), 1.0, {}, {}, Locator(page=7))])  # type: ignore[arg-type]
    assert hit.chunk.text.count("定理 2.4.2") == 1
    assert hit.chunk.text.endswith("若有一列 $[a_1,b_1]\\supset [a_2,b_2]\\supset\\cdots$ 且 "
                                   "$b_n-a_n\\to 0$, 则存在唯一的 $c$ 属于每一个区间.")

    class Embedder:
        def embed_passages(self, texts):  # type: ignore[no-untyped-def]
            return np.ones((len(list(texts)), 2)) / np.sqrt(2)

        def embed_sentences(self, texts, stored=None):  # type: ignore[no-untyped-def]
            return self.embed_passages(texts)

        def embed_query(self, text):  # type: ignore[no-untyped-def]
            return np.ones(2) / np.sqrt(2)

    other = Hit(following[1], 1.0, {}, {}, Locator(page=7))
    picked = select("哪些定理与区间套定理等价？", "", [hit, other], "zh", "concept", Embedder())  # type: ignore[arg-type]
    # the statement as each passage prints it ("**定理" and "** 定理") is one evidence line
    assert sum("若有一列" in line.text for line in picked.lines) == 1


class _FlatEmbedder:
    """Every text the same vector: the selection then rests on terms, cues and structure."""

    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        return np.ones((len(list(texts)), 2)) / np.sqrt(2)

    def embed_sentences(self, texts, stored=None):  # type: ignore[no-untyped-def]
        return self.embed_passages(texts)

    def embed_query(self, text):  # type: ignore[no-untyped-def]
        return np.ones(2) / np.sqrt(2)


def _evidence(question: str, *passages: str, page: int = 1) -> list[str]:
    """The evidence lines `select` picks for `question` from consecutive passages of one
    document of Chinese notes (every text embedded alike)."""
    from coursetutor.tutor.sentences import select
    from coursetutor.types import Hit

    hits = [Hit(_chunk(n, t, "zh", page), 1.0, {}, {}, Locator(page=page))
            for n, t in enumerate(passages)]
    picked = select(question, "", hits, "zh", "concept", _FlatEmbedder())  # type: ignore[arg-type]
    return [line.text for line in picked.lines]


def test_a_formula_that_opens_a_section_is_evidence_under_its_title() -> None:
    import dataclasses

    from coursetutor.tutor.sentences import select
    from coursetutor.types import Hit

    text = ("$$\\sum_{n=1}^{+\\infty} \\frac{1}{n(n+1)} = 1$$\n\nDimostrazione. Si ha che "
            "$\\frac{1}{n(n+1)}=\\frac{1}{n}-\\frac{1}{n+1}$, e quindi la somma telescopica.")
    # the proof is not taken into the formula's unit: the formula states the result alone
    assert units(text, "it")[0] == "$$\\sum_{n=1}^{+\\infty} \\frac{1}{n(n+1)} = 1$$"
    chunk = dataclasses.replace(_chunk(0, text, "it", 45),
                                section_path=("5 Serie", "5.2.2 Serie di Mengoli (o Telescopica)"))
    picked = select("Quanto vale la somma della serie di Mengoli?", "",
                    [Hit(chunk, 1.0, {}, {}, Locator(page=45))], "it", "concept",
                    _FlatEmbedder())  # type: ignore[arg-type]
    assert any(line.text == "Serie di Mengoli (o Telescopica): $$\\sum_{n=1}^{+\\infty} "
               "\\frac{1}{n(n+1)} = 1$$" for line in picked.lines)


def test_a_why_question_gets_the_theorems_proof_from_the_next_passage() -> None:
    theorem = ("**定义 3.3.3 (一致连续)**\n\n称 $f$ 在 $I$ 上一致连续, 当且仅当对任意 "
               "$\\varepsilon>0$ 存在 $\\delta>0$ 使得 $|f(x_1)-f(x_2)|<\\varepsilon$.\n\n"
               "**定理 3.3.4 (一致连续性)**\n\n若 $f\\in C[a,b]$, 则 $f$ 在 $[a,b]$ 上一致连续.")
    proof = ("*→ Proof.* 考虑有限开覆盖的 Lebesgue 数即可.\n\n**定理 3.3.6 (介值)**\n\n"
             "*→ Proof.* 区间套, 可以套出 $f(c)=\\eta$ 的一个点.")
    texts = _evidence("为什么闭区间上的连续函数一致连续？", theorem, proof, page=12)
    assert any("Lebesgue" in t for t in texts)  # the proof that follows the theorem
    assert not any("区间套" in t for t in texts)  # not the next theorem's


def test_a_captions_sound_cues_are_not_evidence() -> None:
    from coursetutor.tutor.sentences import uncued

    assert uncued("(air whooshing) - What is transfer learning? The idea is") == (
        "What is transfer learning? The idea is")
    assert uncued("[Music] Hello") == "Hello"
    assert uncued("converges (i.e., for starting points close enough)") == (
        "converges (i.e., for starting points close enough)")


@pytest.mark.parametrize(("question", "which"), [
    ("哪些定理与区间套定理等价？", True),
    ("감쇠 뉴턴-랩슨 방법에서 스텝 크기는 어떤 조건을 만족해야 하나요?", True),
    ("Quali sono le ipotesi del teorema di Rolle?", True),
    ("What is transfer learning?", False),
    ("Cosa dice il teorema di Rolle?", False),
])
def test_a_question_that_asks_for_every_member_of_a_list(question: str, which: bool) -> None:
    from coursetutor.tutor.sentences import asks_which

    assert asks_which(question) is which


def test_a_why_question_gets_the_result_its_best_sentence_follows() -> None:
    text = ("**定理 3.2.4 (介值定理)** 若 $f\\in C[a,b]$ 满足 $f(a)<f(b)$, 则存在 $\\xi$ 使 "
            "$f(\\xi)=\\eta$.\n\n*→ Proof.* 区间套, 可以套出 $f(c)=\\eta$.\n\n例如, 这也说明, "
            "任何奇数次多项式方程都有至少一个实根.")
    texts = _evidence("为什么奇数次多项式方程至少有一个实根？", text, page=11)
    odd = next(n for n, t in enumerate(texts) if "奇数次" in t)
    ivt = next(n for n, t in enumerate(texts) if "介值定理" in t)
    assert ivt < odd  # the theorem that gives the reason, before what it shows


def test_a_label_alone_is_never_evidence() -> None:
    text = ("若 $f$ 在 $[a,b]$ 上满足压缩条件, 则存在唯一不动点 $x_*$ 使 $f(x_*)=x_*$.\n\n"
            "**定理 5.1.3 (Lagrange 中值)**")
    texts = _evidence("What does the Lagrange theorem say?", text, page=16)
    assert texts and not any("定理 5.1.3" in t for t in texts)


def test_a_labelled_best_sentence_does_not_bring_the_result_before_it() -> None:
    text = ("**定理 3.3.2 (最值定理)** 若 $f\\in C[a,b]$, 则 $f$ 在 $[a,b]$ 上取到最大值.\n\n"
            "**定义 3.3.3 (一致连续)** 称 $f$ 在 $I$ 上一致连续, 当且仅当对任意 $\\varepsilon>0$ "
            "存在 $\\delta>0$.")
    texts = _evidence("为什么一致连续的定义是这样？", text, page=12)
    assert not any("最值定理" in t for t in texts)


def test_a_title_slide_is_no_evidence() -> None:
    from coursetutor.tutor.sentences import select
    from coursetutor.types import Hit

    title = ("Optimization in Machine Learning Second order methods Newton-Raphson Learning "
             "goals Newton-Raphson Limitations")
    slide = ("DISCUSSION Advantage: For f sufficiently smooth: Newton-Raphson converges "
             "locally quadratically Disadvantage: For “bad” starting points: "
             "Newton-Raphson may diverge")
    hits = [Hit(_chunk(n, t, "en", n + 1), 1.0, {}, {}, Locator(page=n + 1))
            for n, t in enumerate((title, slide))]
    picked = select("When can the Newton-Raphson method diverge?", "", hits, "en", "concept",
                    _FlatEmbedder())  # type: ignore[arg-type]
    texts = [line.text for line in picked.lines]
    assert texts and not any(t.startswith("Optimization") for t in texts)
    assert any("may diverge" in t for t in texts)  # a slide's item keeps its lower-case words


BISECTION = (
    "The bisection method repeatedly halves a bracket, keeping the half in which the sign "
    "change survives:\n\n1. Start with `a` and `b` such that `f(a) * f(b) < 0`. 2. Compute the "
    "midpoint `c = (a + b) / 2` and evaluate `f(c)`. 3. If `f(c) = 0`, then `c` is a root and "
    "we stop. 4. If `f(a) * f(c) < 0`, the root lies in `[a, c]`: set `b = c`. Otherwise the "
    "root lies in `[c, b]`: set `a = c`. 5. Repeat from step 2 until the interval is small "
    "enough.\n\nAfter every step the new interval is still a bracket, so by the intermediate "
    "value theorem it still contains a root.")


def test_a_how_question_gets_the_whole_numbered_list_of_steps() -> None:
    from coursetutor.tutor.sentences import select
    from coursetutor.types import Hit

    hit = Hit(_chunk(0, BISECTION, "en", 3), 1.0, {}, {}, Locator(page=3))
    picked = select("How does the bisection method work?", "", [hit], "en", "concept",
                    _FlatEmbedder())  # type: ignore[arg-type]
    text = " ".join(line.text for line in picked.lines)
    # every step, in the page's order (the tutor gave the first two of five)
    at = [text.index(step) for step in ("1. Start", "2. Compute", "3. If", "4. If",
                                        "Otherwise", "5. Repeat")]
    assert at == sorted(at)


def test_a_list_number_inside_a_statement_goes_as_the_reply_numbers_its_own() -> None:
    raw = json.dumps({"statements": [{"text": "3. If f(c) = 0, we stop. 4. If f(a) * f(c) < 0, "
                                              "set b = c.", "evidence": ["S1"]}]})
    assert parse(raw, ["S1"]) == [Statement("If f(c) = 0, we stop. If f(a) * f(c) < 0, set b = c.",
                                            ("S1",))]


@pytest.mark.parametrize(("sentence", "result"), [
    ("Teorema 43 (di Lagrange). Sia f:[a,b]→ ℝ. Se: - f è continua in [a,b] - f è derivabile "
     "su (a,b) Allora: ∃ c∈ (a,b): f'(c)=(f(b)−f(a))/(b−a)", True),
    ("**定理 3.2.4 (介值定理)** 若 f∈ C[a,b] 满足 f(a)<f(b), 则 …", True),
    ("Il teorema di Lagrange dice che esiste un punto c.", False),  # about a result, no label
    ("Newton-Raphson may diverge for bad starting points.", False),
])
def test_a_labelled_result_is_told_from_a_sentence_about_one(sentence: str,
                                                             result: bool) -> None:
    # the second attempt asks for its hypotheses, then its conclusion (compose.RESULT_SHAPE)
    assert states_result(sentence) is result


@pytest.mark.parametrize(("question", "yes_no"), [
    ("La serie armonica converge?", True),
    ("Does Newton's method always converge?", True),
    ("调和级数收敛吗？", True),
    ("조화급수는 수렴하나요?", True),
    ("What is damped Newton-Raphson?", False),
    ("Come funziona il metodo di bisezione?", False),
    ("전이 학습이란 무엇인가요?", False),
    ("介值定理是用什么方法证明的？", False),
])
def test_a_yes_no_question_is_told_from_one_that_asks_for_something(question: str,
                                                                    yes_no: bool) -> None:
    # its second attempt asks for the sentence's verdict (compose.YES_NO_SHAPE)
    assert asks_yes_no(question) is yes_no


@pytest.mark.parametrize(("sentence", "read"), [
    ("What is transfer learning? The idea of transfer learning is to leverage the knowledge "
     "acquired by a model trained with lots of data on another task.",
     "The idea of transfer learning is to leverage the knowledge acquired by a model trained "
     "with lots of data on another task."),
    ("c) What is the order of convergence of the secant method?",  # a question alone stays
     "c) What is the order of convergence of the secant method?"),
    ("The order is p = 1.618. Why? Because each step reuses f.",  # not asked first
     "The order is p = 1.618. Why? Because each step reuses f."),
])
def test_the_model_reads_a_line_without_the_question_it_opens_with(sentence: str,
                                                                  read: str) -> None:
    assert unasked(sentence) == read


def test_a_run_on_page_is_cut_where_prose_begins_after_code() -> None:
    # an exercise sheet's R code and plot axes, then the sentence that says what it minimises
    code = ("df$type = as.character(y) ggplot(df) + geom_point(aes(x = V1, y = V2, color=type)) "
            "+ xlab(expression(x[1])) + ylab(expression(x[2])) " + "0.00 0.25 0.50 " * 20
            + "x1 x2 type 0 1")
    prose = "In the following we want to estimate a model π : such that it minimizes the loss."
    found = units(f"{code} {prose}")
    assert found[-1] == prose and all(len(u) <= 480 for u in found)
    # a capitalised word after words is no new sentence: cut only at the length
    words = ("The Newton Raphson method needs a good Start Value " * 12).strip()
    cut = words.rindex(" ", 0, 481)
    assert units(words) == [words[:cut], words[cut + 1:]]


def _wanted(question: str, language: str) -> set[str]:
    return {w for w in tokenize(question, language) if w not in ANY_STOPWORD}


@pytest.mark.parametrize(("sentence", "question", "language", "defining"), [
    ("Definizione 5. Sia $A$ superiormente limitato. Si chiama estremo superiore di $A$ il "
     "numero minimo dei maggioranti di $A$.", "Che cos'è l'estremo superiore di un insieme?",
     "it", True),
    # a remark that names it defines nothing
    ("Se un insieme ha un massimo, tale valore è anche l'estremo superiore.",
     "Che cos'è l'estremo superiore di un insieme?", "it", False),
    ("A method of this form is called an iterative method.", "What is an iterative method?",
     "en", True),
    ("The bisection method is called robust.", "What is an iterative method?", "en", False),
    ("若 $S$ 有上界, 其最小上界称为达布上和.", "什么是达布上和？", "zh", True),
])
def test_the_sentence_that_defines_what_is_asked(sentence: str, question: str, language: str,
                                                 defining: bool) -> None:
    assert defines(sentence, _wanted(question, language), language) is defining


@pytest.mark.parametrize(("sentence", "defining"), [
    # one of the question's terms right after the phrase: what the sentence defines
    ("Sia $f:D\\rightarrow \\mathbb{R}$. Si dice che $F$ è continua in $x_0$ se: "
     "$$\\lim_{x\\rightarrow x_0} f(x)=f(x_0)$$", True),
    # before it, another term is defined ("Discontinua")
    ("Se $f$ non è continua in $x_0$ si dice Discontinua in $x_0$.", False),
])
def test_one_term_right_after_the_phrase_defines_it(sentence: str, defining: bool) -> None:
    wanted = _wanted("Che cos'è una funzione continua?", "it")
    assert defines(sentence, wanted, "it") is False  # two of its terms: neither defines
    assert defines(sentence, wanted, "it", need=1) is defining


def _picked(question: str, language: str, intent: str, *passages: str) -> list[str]:
    from coursetutor.tutor.sentences import select
    from coursetutor.types import Hit

    hits = [Hit(_chunk(n, t, language, 1), 1.0, {}, {}, Locator(page=1))
            for n, t in enumerate(passages)]
    picked = select(question, "", hits, language, intent, _FlatEmbedder())  # type: ignore[arg-type]
    return [line.text for line in picked.lines]


def test_a_what_is_question_gets_the_defining_sentence_first() -> None:
    remarks = ("Nota 5. L'estremo superiore può talvolta anche coincidere con il massimo. Se un "
               "insieme ha un massimo, tale valore è anche l'estremo superiore.")
    definition = ("Definizione 5. Sia $A$ superiormente limitato. Si chiama estremo superiore "
                  "di $A$ il numero minimo dei maggioranti di $A$.")
    texts = _picked("Che cos'è l'estremo superiore di un insieme?", "it", "definition",
                    remarks, definition)
    assert texts[0].startswith("Definizione 5.")


def test_a_what_is_question_without_a_full_definition_gets_the_closest_one() -> None:
    from coursetutor.tutor.sentences import defining_passage
    from coursetutor.types import Hit

    examples = ("Esempio 10. I polinomi sono funzioni continue, le funzioni razionali sono "
                "continue. Se $f$ non è continua in $x_0$ si dice Discontinua in $x_0$.")
    definition = ("Sia $f:D\\rightarrow \\mathbb{R}$, $x_0$ di accumulazione per $D$. Si dice che "
                  "$F$ è continua in $x_0$ se: $$\\lim_{x\\rightarrow x_0} f(x)=f(x_0)$$ Le "
                  "funzioni elementari sono continue.")
    question = "Che cos'è una funzione continua?"
    texts = _picked(question, "it", "definition", examples, definition)
    assert texts[0].startswith("Sia $f:D") and "Si dice che $F$" in texts[0]
    hits = [Hit(_chunk(n, t, "it", 1), 1.0, {}, {}, Locator(page=1))
            for n, t in enumerate((examples, definition))]
    assert not defining_passage(question, "", hits[:1], "it", "definition")
    assert defining_passage(question, "", hits, "it", "definition")
    assert defining_passage("Come funziona?", "", hits[:1], "it", "explain")  # no what-is



    slide = ("LIMITATIONS Problem 2: Hessian can be computationally expensive to calculate, "
             "since descent direction d[t] is the solution of a linear system.\n\n"
             "Aim: Find quasi-second order methods not relying on exact Hessians, the "
             "quasi-Newton methods.")
    texts = _picked("Why would we want quasi-Newton methods instead of exact Newton-Raphson?",
                    "en", "explain", slide)
    problem = next(n for n, t in enumerate(texts) if "computationally expensive" in t)
    aim = next(n for n, t in enumerate(texts) if t.startswith("Aim"))
    assert problem < aim


def test_a_name_written_in_another_script_names_the_result() -> None:
    sentence = "**定理 2.4.1 (Cauchy 收敛原理)** 实数序列 $\\{a_n\\}$ 收敛."
    wanted = _wanted("柯西收敛准则是什么？ Cauchy", "zh")
    assert named(sentence, wanted, "zh", {"cauchy"}) > 0
    assert named(sentence, wanted, "zh") == 0.0


@pytest.mark.parametrize(("question", "search"), [
    ("뉴턴-랩슨 방법의 단점은 무엇인가요?",
     "What are the limitations of the Newton-Raphson method?"),
    ("What are the disadvantages of the Newton-Raphson method?", ""),
    ("Quali sono i limiti del metodo di Newton-Raphson?",
     "What are the limitations of the Newton-Raphson method?"),
])
def test_a_question_about_drawbacks_gets_the_sentences_labelled_so(question: str,
                                                                   search: str) -> None:
    from coursetutor.tutor.sentences import select
    from coursetutor.types import Hit

    slides = ["DISCUSSION Advantage: For f sufficiently smooth: Newton-Raphson converges "
              "locally quadratically. Disadvantage: For “bad” starting points: Newton-Raphson "
              "may diverge.",
              "LIMITATIONS Problem 2: Hessian can be computationally expensive to calculate. "
              "Aim: Find quasi-second order methods not relying on exact Hessians: the "
              "Quasi-Newton method and the Gauss-Newton method."]
    hits = [Hit(_chunk(n, text, "en", 7), 1.0, {}, {}, Locator(page=7 + n))
            for n, text in enumerate(slides)]
    picked = select(question, search, hits, "ko" if search else "en", "concept",
                    _FlatEmbedder())  # type: ignore[arg-type]
    texts = [line.text for line in picked.lines]
    assert any("may diverge" in t for t in texts)
    # searched as "limitations", the slide titled so gives its problem too
    assert any("expensive" in t for t in texts) or "limitations" not in search
    # what the slides say beside them, the advantage and the remedy, is no drawback
    assert not any("Aim:" in t or "Advantage:" in t for t in texts)
