"""The tutor's pure rules: categorizing, grading, the context budget, citations, the leak
check, the scaffolding ladder and the prompt files."""

from __future__ import annotations

import math
import re
from importlib import resources

import pytest

from coursetutor.retrieval.grading import auroc, evidence_score, grade
from coursetutor.tutor import prompts
from coursetutor.tutor.categorize import (
    Categorization,
    categorize_rules,
    looks_garbled,
    parse_llm_categorization,
)
from coursetutor.tutor.check import recite
from coursetutor.tutor.citations import check_citations, cited_numbers, strip_invalid
from coursetutor.tutor.context import (
    Budget,
    Source,
    build_context,
    format_history,
    render_sources,
    source_header,
    trim_to_question,
)
from coursetutor.tutor.exercise import exercise_key, item_numbers, referenced_number
from coursetutor.tutor.leak import copies_solution, final_answers, reveals, states_number
from coursetutor.tutor.markers import marker_spans
from coursetutor.tutor.pedagogy import max_tokens, scaffold_level, task_prompt
from coursetutor.tutor.tidy import looping, stuttering, tidy, unstutter
from coursetutor.types import Chunk, Citation, DocType, Hit, Locator, Turn

from .support import SAMPLE_DIR


def words(text: str) -> int:
    """A simple token counter: whitespace-separated words."""
    return len(text.split())


ANCHOR = Locator(anchor="bisection")


def make_hit(text: str, doc_type: DocType = "lecture", title: str = "Lecture 1: Root finding",
             path: tuple[str, ...] = ("Lecture 1: Root finding", "Bisection"),
             locator: Locator = ANCHOR, n: int = 0,
             cosine: float | None = 0.9) -> Hit:
    chunk = Chunk(f"chunk-{n}", "default", "course", f"doc-{n}", title, doc_type, "topic", path,
                  2, "en", locator, text, f"hash-{n}", n)
    return Hit(chunk, 1.0, {"vector": 1}, {"vector": cosine}, locator)


def section(filename: str, heading: str) -> str:
    """One '## ' section of a sample course file."""
    text = (SAMPLE_DIR / filename).read_text(encoding="utf-8")
    return next(p for p in re.split(r"(?m)^(?=## )", text) if p.startswith(heading))


# -- categorize ----------------------------------------------------------------------------

PLATFORM = [
    ("I forgot my password", "en"),
    ("come faccio a cambiare la password dell'account", "it"),
    ("怎么登录", "zh"),
    ("비밀번호를 잊어버렸어요", "ko"),
]


@pytest.mark.parametrize("history", [False, True])
@pytest.mark.parametrize(("text", "language"), PLATFORM)
def test_platform_questions(text: str, language: str, history: bool) -> None:
    """A platform keyword is a suspicion the evidence confirms: never sure by itself."""
    assert categorize_rules(text, history) == Categorization(
        "platform", "concept", False, language, sure=False
    )


@pytest.mark.parametrize("text", [
    "hello", "Hi!", "thanks", "ciao", "你好", "안녕하세요", "tell me a joke", "how are you?",
    "come stai?", "what is the weather like today",
])
def test_greetings_and_small_talk_are_off_topic(text: str) -> None:
    found = categorize_rules(text, has_history=True)
    assert found.category == "off_topic"
    # a greeting alone is certain; a small-talk word may belong to a course ("weather")
    assert found.sure == (text in {"hello", "Hi!", "thanks", "ciao", "你好", "안녕하세요"})


def test_a_course_question_about_the_weather_is_only_suspected_off_topic() -> None:
    found = categorize_rules("which method of forecasting uses averages to predict future "
                             "weather", has_history=False)
    assert (found.category, found.sure) == ("off_topic", False)


@pytest.mark.parametrize("text", ["asdfgh qwrtzp xkcdv", "!!!???"])
def test_garbled_messages_are_unrecognizable(text: str) -> None:
    assert looks_garbled(text)
    assert categorize_rules(text, has_history=True).category == "unrecognizable"


@pytest.mark.parametrize("text", ["12345", "4", "12?", "2.3", "11664.", "x = 1.414",
                                  "3 + 3 + 6 = 12", "$50", "-0.5?!", "1,5"])
def test_a_bare_number_answers_the_tutor_in_a_conversation(text: str) -> None:
    """The student's answer to the tutor's last question, not a garbled message."""
    assert categorize_rules(text, has_history=False).category != "followup"
    assert categorize_rules(text, has_history=True).category == "followup"


@pytest.mark.parametrize("text", [
    "How does bisection work?", "二分法是什么", "뉴턴 방법이 무엇인가요?", "Strengths of Newton",
])
def test_real_questions_are_not_garbled(text: str) -> None:
    assert not looks_garbled(text)


@pytest.mark.parametrize("text", [
    "and the other one?", "why?", "what about the secant method?", "I am stuck",
    "give me a hint", "e quello?", "那个呢？", "그럼 다른 것은?",
])
def test_short_anaphoric_messages_are_followups_only_with_history(text: str) -> None:
    assert categorize_rules(text, has_history=True).category == "followup"
    assert categorize_rules(text, has_history=False).category == "lecture"


INTENTS = [
    ("What is the bisection method?", "definition", "en"),
    ("Define the order of convergence", "definition", "en"),
    ("Cos'è il metodo di Newton?", "definition", "it"),
    ("Was ist das Newton-Verfahren?", "definition", "de"),
    ("什么是二分法？", "definition", "zh"),
    ("뉴턴 방법이 무엇인가요?", "definition", "ko"),
    ("What is the difference between bisection and Newton's method?", "comparison", "en"),
    ("Newton vs secant", "comparison", "en"),
    ("Qual è la differenza tra bisezione e secante?", "comparison", "it"),
    ("二分法和牛顿法的区别", "comparison", "zh"),
    ("How do I solve exercise 2?", "exercise", "en"),
    ("练习2怎么做？", "exercise", "zh"),
    ("연습 문제 2를 어떻게 풀어요?", "exercise", "ko"),
    ("How should I prepare for the exam?", "exam", "en"),
    ("Cosa devo studiare per l'esame?", "exam", "it"),
    ("考试复习什么？", "exam", "zh"),
    ("시험 준비는 어떻게 해요?", "exam", "ko"),
    ("Explain how Newton's method converges", "concept", "en"),
    ("Spiegami il metodo della secante", "concept", "it"),
]


@pytest.mark.parametrize(("text", "intent", "language"), INTENTS)
def test_lecture_intents(text: str, intent: str, language: str) -> None:
    assert categorize_rules(text, has_history=False) == Categorization(
        "lecture", intent, False, language  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(("text", "language"), [
    ("just give me the answer to exercise 2", "en"),
    ("What is the answer to exercise 3?", "en"),
    ("dammi la soluzione", "it"),  # "dammi", a request's own verb, says Italian
    ("给我答案", "zh"),
    ("Gib mir die Lösung", "de"),
])
def test_wants_answer(text: str, language: str) -> None:
    assert categorize_rules(text, has_history=False) == Categorization(
        "lecture", "exercise", True, language
    )


def test_asking_how_to_solve_is_not_asking_for_the_answer() -> None:
    assert not categorize_rules("How do I solve exercise 2?", has_history=False).wants_answer


@pytest.mark.parametrize(("text", "sure"), [
    ("bisection", False), ("newton", False), ("Explain the bisection method", True),
    ("What is bisection?", True),
])
def test_rules_are_unsure_about_one_or_two_word_concept_questions(text: str, sure: bool) -> None:
    assert categorize_rules(text, has_history=False).sure is sure


UNSURE = Categorization("lecture", "concept", False, "en", sure=False)
WANTS = Categorization("lecture", "exercise", True, "it", sure=False)


@pytest.mark.parametrize("raw", [
    "I think it is a lecture question",
    '{"category": "lecture", "intent": "concept"',
    '{"category": "banana", "intent": "concept"}',
    '{"intent": "concept"}',
    '["lecture"]',
    "",
])
def test_malformed_model_verdict_keeps_the_rules(raw: str) -> None:
    assert parse_llm_categorization(raw, UNSURE) == Categorization(
        "lecture", "concept", False, "en", sure=False, source="fallback"
    )


@pytest.mark.parametrize(("raw", "fallback", "expected"), [
    ('{"category": "off_topic", "intent": "concept", "wants_answer": false}', UNSURE,
     Categorization("off_topic", "concept", False, "en", True, "llm")),
    ('Sure: {"category": "followup", "intent": "exercise", "wants_answer": true} done', UNSURE,
     Categorization("followup", "exercise", True, "en", True, "llm")),
    ('{"category": "lecture", "intent": "nonsense"}', WANTS,
     Categorization("lecture", "exercise", True, "it", True, "llm")),
    # the model cannot talk the rules out of a request for the answer
    ('{"category": "lecture", "intent": "exercise", "wants_answer": false}', WANTS,
     Categorization("lecture", "exercise", True, "it", True, "llm")),
])
def test_valid_model_verdict(raw: str, fallback: Categorization,
                             expected: Categorization) -> None:
    assert parse_llm_categorization(raw, fallback) == expected


# -- grading -------------------------------------------------------------------------------


@pytest.mark.parametrize(("cosines", "keyword", "expected"), [
    ([], 1.0, 0.0),
    ([0.85], 0.5, 0.5),
    ([0.85, 0.95], 0.0, 0.8),
    ([0.90], 1.0, 1.0),
    ([0.75], 0.5, 0.1),
    ([None], 0.5, 0.1),
    ([0.80, None], 0.25, 0.05),
    ([0.82], 1.7, 0.36),
    ([0.82], -0.3, 0.16),
])
def test_evidence_score(cosines: list[float | None], keyword: float, expected: float) -> None:
    hits = [make_hit("text", n=i, cosine=c) for i, c in enumerate(cosines)]
    assert evidence_score(hits, keyword) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(("cosines", "keyword", "expected"), [
    ([], 1.0, 0.0),
    ([0.80], 0.0, 0.32),  # the floor drops from 0.80 to 0.76
    ([0.81], 0.5, 0.5),
    ([0.75], 0.5, 0.1),
    ([0.86], 1.0, 1.0),
])
def test_cross_lingual_evidence_score(cosines: list[float], keyword: float,
                                      expected: float) -> None:
    hits = [make_hit("text", n=i, cosine=c) for i, c in enumerate(cosines)]
    assert evidence_score(hits, keyword, cross_lingual=True) == pytest.approx(expected,
                                                                              abs=1e-12)


@pytest.mark.parametrize(("score", "expected"), [
    (1.0, "correct"), (0.5, "correct"), (0.4999, "ambiguous"), (0.36, "ambiguous"),
    (0.3599, "incorrect"), (0.0, "incorrect"),
])
def test_grade_thresholds(score: float, expected: str) -> None:
    assert grade(score, correct_at=0.5, incorrect_below=0.36) == expected


@pytest.mark.parametrize(("positives", "negatives", "expected"), [
    ([1.0], [0.0], 1.0),
    ([0.0], [1.0], 0.0),
    ([0.5], [0.5], 0.5),
    ([0.9, 0.4], [0.5, 0.1], 0.75),
    ([0.3, 0.3], [0.3, 0.1], 0.75),
    ([0.2, 0.6, 0.7], [0.6], 0.5),
])
def test_auroc(positives: list[float], negatives: list[float], expected: float) -> None:
    assert auroc(positives, negatives) == expected


@pytest.mark.parametrize(("positives", "negatives"), [([], [0.1]), ([0.1], [])])
def test_auroc_of_an_empty_side_is_nan(positives: list[float], negatives: list[float]) -> None:
    assert math.isnan(auroc(positives, negatives))


# -- context -------------------------------------------------------------------------------


@pytest.mark.parametrize(("total", "expected"), [
    (1500, Budget(576, 576, 230, 118)),
    (2600, Budget(1000, 1000, 400, 200)),
])
def test_budget_split(total: int, expected: Budget) -> None:
    budget = Budget.split(total)
    assert (budget, budget.total) == (expected, total)


@pytest.mark.parametrize(("hit", "header"), [
    (make_hit("x"), "[1] Lecture 1: Root finding > Bisection"),  # no anchor
    (make_hit("x", title="Lecture 2", path=("Lecture 2",), locator=Locator(page=3)),
     "[1] Lecture 2, p. 3"),
    (make_hit("x", "transcript", "Video", (), Locator(start=62, end=150)),
     "[1] Video, 01:02-02:30"),
    (make_hit("x", title="Notes", path=("Part A", "", "B"), locator=Locator()),
     "[1] Notes > B"),  # the innermost section only
])
def test_source_header(hit: Hit, header: str) -> None:
    assert source_header(1, hit) == header


FILLER = " ".join(f"Sentence {i} is filler text here." for i in range(100))  # 600 words


def lectures(n: int) -> list[Hit]:
    return [make_hit(FILLER, n=i) for i in range(n)]


def transcripts(n: int) -> list[Hit]:
    return [make_hit(FILLER, "transcript", "Video", (), Locator(start=0, end=20), n=100 + i)
            for i in range(n)]


def test_sources_are_numbered_from_one() -> None:
    ctx = build_context(lectures(2) + transcripts(2), "filler", "en", Budget.split(2600), words)
    assert [s.number for s in ctx.sources] == [1, 2, 3, 4]
    assert [s.hit.chunk.id for s in ctx.sources] == ["chunk-0", "chunk-1", "chunk-100",
                                                     "chunk-101"]
    assert not ctx.over_budget


@pytest.mark.parametrize("total", [1500, 2600])
@pytest.mark.parametrize("mix", [(8, 0), (0, 8), (5, 5), (1, 9)])
def test_context_never_exceeds_the_budget(total: int, mix: tuple[int, int]) -> None:
    budget = Budget.split(total)
    history = [Turn("s", i, "t", "c", "bob", f"question {i} " * 10, "answer " * 80, "lecture",
                    "concept", "correct") for i in range(10)]
    ctx = build_context(lectures(mix[0]) + transcripts(mix[1]), "filler", "en", budget, words,
                        history)
    assert ctx.over_budget
    assert ctx.tokens == sum(s.tokens for s in ctx.sources) + words(ctx.history)
    assert ctx.tokens <= budget.material + budget.transcripts + budget.history
    assert words(ctx.history) <= budget.history
    for s in ctx.sources:
        assert s.tokens == words(source_header(s.number, s.hit)) + words(s.text) + 2


def test_mixed_sources_keep_to_their_shares() -> None:
    budget = Budget.split(1500)
    ctx = build_context(lectures(5) + transcripts(5), "filler", "en", budget, words)
    used = {kind: sum(s.tokens for s in ctx.sources if (s.hit.chunk.doc_type == "transcript")
                      == (kind == "transcripts")) for kind in ("material", "transcripts")}
    assert used == {"material": 576, "transcripts": 574}  # of 576 each
    assert [s.hit.chunk.doc_type for s in ctx.sources] == ["lecture", "lecture", "transcript",
                                                          "transcript"]


def test_transcripts_alone_use_the_material_share_too() -> None:
    budget = Budget.split(1500)
    ctx = build_context(transcripts(8), "filler", "en", budget, words)
    assert sum(s.tokens for s in ctx.sources) == 1148  # more than the transcripts' 576
    assert len(ctx.sources) == 4


def test_everything_fits_without_the_over_budget_flag() -> None:
    hits = [make_hit("Bisection halves the bracket.", n=i) for i in range(3)]
    ctx = build_context(hits, "bisection", "en", Budget.split(1500), words)
    assert ([s.text for s in ctx.sources], ctx.tokens, ctx.over_budget) == (
        ["Bisection halves the bracket."] * 3, 3 * (7 + 4 + 2), False,  # header, text, 2
    )


TEXT = ("Bisection halves the bracket each step. The weather was nice that day. "
        "Cats are mammals. Dogs bark loudly at night. The bracket always holds a root.")


@pytest.mark.parametrize(("limit", "expected"), [
    (100, TEXT),
    (6, "Bisection halves the bracket each step."),
    (12, "Bisection halves the bracket each step. The weather was nice that day."),
    (24, "Bisection halves the bracket each step. The weather was nice that day. "
         "Dogs bark loudly at night. The bracket always holds a root."),
])
def test_trimming_keeps_sentences_sharing_words_with_the_question(limit: int,
                                                                  expected: str) -> None:
    question = "How does bisection halve the bracket?"
    assert trim_to_question(TEXT, question, "en", limit, words) == expected


def test_trimming_one_long_sentence_cuts_it() -> None:
    trimmed = trim_to_question("word " * 50, "bisection", "en", 10, words)
    assert trimmed == "word " * 6
    assert words(trimmed) <= 10


def turn(question: str, answer: str, grade: str) -> Turn:
    return Turn("s", 0, "default", "c", "bob", question, answer, "lecture", "concept", grade)


HISTORY = [
    turn("What is bisection?", "Bisection halves the bracket [1].", "correct"),
    turn("tell me a joke", "I can only help with this course.", ""),
    turn("What is the capital of France?", "The course does not cover it.", "incorrect"),
    turn("And Newton?", "Newton uses the tangent [2].", "ambiguous"),
]


@pytest.mark.parametrize(("limit", "expected"), [
    (100, "Student: What is bisection?\nTutor: Bisection halves the bracket [1].\n"
          "Student: And Newton?\nTutor: Newton uses the tangent [2]."),
    (12, "Student: And Newton?\nTutor: Newton uses the tangent [2]."),
    (8, "Student: What is bisection?\nStudent: And Newton?"),
    (2, ""),
])
def test_history_skips_refusals_and_canned_replies(limit: int, expected: str) -> None:
    assert format_history(HISTORY, limit, words) == expected


def test_history_shows_only_the_start_of_a_long_answer() -> None:
    out = format_history([turn("q", "word " * 100, "correct")], 1000, words)
    assert out == "Student: q\nTutor: " + "word " * 48 + "..."


# -- citations -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("Bisection [1].", [1]),
    ("A [2, 3]. B [1]. C [3; 4] and [2].", [2, 3, 1, 4]),
    ("Repeated [1] [1] [1].", [1]),
    ("No markers, [a], [1000], and [].", []),
])
def test_cited_numbers(text: str, expected: list[int]) -> None:
    assert cited_numbers(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Bisection halves the bracket [1] [9].", "Bisection halves the bracket [1]."),
    ("A [2, 9], B [9, 1]!", "A [2], B [1]!"),
    ("Invented [7].", "Invented."),
    ("Fine [1] [2].", "Fine [1] [2]."),
    pytest.param(
        "Bisection [9] halves the bracket [1].", "Bisection halves the bracket [1]."
    ),
    pytest.param(
        "Newton converges fast if f'(r) != 0 [1].", "Newton converges fast if f'(r) != 0 [1]."
    ),
])
def test_strip_invalid_drops_unknown_numbers(text: str, expected: str) -> None:
    assert strip_invalid(text, {1, 2}) == expected


def sources(n: int) -> list[Source]:
    return [Source(i + 1, make_hit(f"Passage {i + 1}.", n=i), f"Passage {i + 1}.", 5)
            for i in range(n)]


def test_check_citations_keeps_cited_real_sources_in_order() -> None:
    text, cited = check_citations("Newton [3]. Bisection [1, 7]. Again [3].", sources(3))
    assert text == "Newton [3]. Bisection [1]. Again [3]."
    assert cited == (
        Citation(3, "chunk-2", "doc-2", "Lecture 1: Root finding", "lecture",
                 Locator(anchor="bisection"), "Passage 3.", "Bisection"),
        Citation(1, "chunk-0", "doc-0", "Lecture 1: Root finding", "lecture",
                 Locator(anchor="bisection"), "Passage 1.", "Bisection"),
    )


@pytest.mark.parametrize("text", [
    "The starting interval is `[0, 4]` [1].",  # inline code
    "The root lies in $[1, 2]$ [1].",  # a formula
    "On [0, 4] the error halves [1].",  # no source is number 0
])
def test_intervals_are_not_markers(text: str) -> None:
    assert strip_invalid(text, {1, 2}) == text
    assert cited_numbers(text) == [1]


def test_a_bracket_a_source_writes_is_its_words_not_a_citation() -> None:
    src = [Source(i + 1, make_hit(text, n=i), text, 5) for i, text in enumerate([
        "Bisection on [1, 9] needs 20 steps.", "Newton converges fast.", "Secant."])]
    quoted = "> Bisection on [1, 9] needs 20 steps. [2]"
    text, cited = check_citations(quoted, src)
    assert text == quoted  # not "Bisection on [1] needs ..."
    assert [c.number for c in cited] == [2]
    # a bracket the sources do not write is still a marker, its invented numbers dropped
    assert check_citations("Newton [2, 9].", src)[0] == "Newton [2]."


def test_recite_leaves_the_sources_brackets_alone() -> None:
    claim = "Bisection on [1, 9] needs 20 steps [3]."
    assert recite(claim, 1, frozenset({"[1, 9]"})) == "Bisection on [1, 9] needs 20 steps [1]."
    assert recite("Newton [3] converges [2].", 1) == "Newton [1] converges."


def test_check_citations_without_markers_cites_nothing() -> None:
    assert check_citations("Bisection halves the bracket.", sources(2)) == (
        "Bisection halves the bracket.", (),
    )


# -- the answer-leak check -----------------------------------------------------------------

EXERCISE_1 = section("exercises-01.md", "## Exercise 1")
SOLUTION_1 = section("solutions-01.md", "## Solution 1")
EXERCISE_2 = section("exercises-01.md", "## Exercise 2")
SOLUTION_2 = section("solutions-01.md", "## Solution 2")
EXERCISE_3 = section("exercises-01.md", "## Exercise 3")
SOLUTION_3 = section("solutions-01.md", "## Solution 3")


def test_final_answers_of_exercise_2() -> None:
    assert final_answers(SOLUTION_2, EXERCISE_2) == [
        "-4.60e-1", "0.7503638678", "-1.89e-2", "0.7391128909", "-4.65e-5", "0.7390851334",
        "-2.85e-10", "0.7390851332", "0.739085133", "-1.5708", "4.7124",
    ]


def test_final_answers_take_the_marked_answer() -> None:
    assert final_answers(SOLUTION_3, EXERCISE_3) == ["29", "28.58"]
    assert final_answers("Final answer: 42\n") == ["42"]
    assert final_answers("x = 3\n\n42") == ["42"]  # a bare number closing the solution


def test_numbers_given_in_the_exercise_are_not_answers() -> None:
    # Exercise 1 gives the true root r = 1.5213797...; Solution 1 quotes it
    assert "1.5213797" in final_answers(SOLUTION_1)
    assert "1.5213797" not in final_answers(SOLUTION_1, EXERCISE_1)
    assert final_answers("The answer is 12, from 12 apples", "You have 12 apples") == []


@pytest.mark.parametrize(("reply", "expected"), [
    ("The root is 0.7390851332.", True),
    ("The root is about 0.739.", True),
    ("It is 0.7391 [1].", True),
    ("It is 0,739.", True),
    ("x_1 = 0.7503638678", True),
    ("Try x_0 = -1.5708.", True),
    ("7.390851332e-1", True),
    ("Try 0.5 as a start.", False),  # too few digits to be a rounded 0.739...
    ("roughly 0.74", False),
    ("about 0.7390", False),  # 0.73908... rounds to 0.7391
    ("Start from x_0 = 1 and use 10 significant digits.", False),
])
def test_states_number(reply: str, expected: bool) -> None:
    assert states_number(reply, final_answers(SOLUTION_2, EXERCISE_2)) is expected


def test_copies_solution() -> None:
    copied = "Take f(x) = cos(x) - x, so f'(x) = -sin(x) - 1. Newton's iteration is"
    own = "Use Newton's method on f, with the derivative from the lecture [1]."
    assert (copies_solution(copied, SOLUTION_2), copies_solution(own, SOLUTION_2)) == (True,
                                                                                      False)
    assert not copies_solution("", SOLUTION_2)


@pytest.mark.parametrize(("reply", "expected"), [
    ("The root is 0.7390851332 [1].", True),
    ("Take f(x) = cos(x) - x, so f'(x) = -sin(x) - 1. Then iterate.", True),
    ("Write cos(x) = x as f(x) = 0 and apply Newton's iteration from x_0 = 1 [1].", False),
])
def test_reveals_exercise_2(reply: str, expected: bool) -> None:
    assert reveals(reply, SOLUTION_2, EXERCISE_2) is expected


def test_restating_a_value_the_exercise_gives_reveals_nothing() -> None:
    reply = "The exercise gives the true root r = 1.5213797: compare your c_5 with it [1]."
    assert not reveals(reply, SOLUTION_1, EXERCISE_1)


# -- pedagogy ------------------------------------------------------------------------------


@pytest.mark.parametrize(("earlier", "allow", "wants", "level"), [
    (0, False, False, "hint"),
    (1, False, False, "guiding"),
    (2, False, False, "steps"),
    (3, False, False, "example"),
    (4, False, False, "example"),
    (9, False, False, "example"),
    (4, True, False, "solution"),
    (9, True, False, "solution"),
    (3, True, False, "example"),
    (0, True, True, "solution"),
    (0, False, True, "hint"),
    (2, False, True, "steps"),
    (-1, False, False, "hint"),
])
def test_scaffold_level_ladder(earlier: int, allow: bool, wants: bool, level: str) -> None:
    assert scaffold_level(earlier, allow, wants) == level


@pytest.mark.parametrize(("intent", "level", "name"), [
    ("exercise", "hint", "task_hint"),
    ("exercise", "guiding", "task_guiding"),
    ("exercise", "steps", "task_steps"),
    ("exercise", "example", "task_example"),
    ("exercise", "solution", "task_solution"),
    ("exercise", None, "task_explain"),
    ("definition", None, "task_definition"),
    ("definition", "hint", "task_definition"),
    ("comparison", None, "task_compare"),
    ("exam", None, "task_exam"),
    ("concept", None, "task_explain"),
])
def test_task_prompt(intent: str, level: str | None, name: str) -> None:
    assert task_prompt(intent, level) == name  # type: ignore[arg-type]
    assert prompts.load(name)


@pytest.mark.parametrize(("level", "default", "expected"), [
    ("hint", 320, 120), ("guiding", 320, 160), ("steps", 320, 220), ("example", 320, 320),
    ("example", 500, 360), ("solution", 320, 320), (None, 320, 320), ("hint", 50, 50),
])
def test_max_tokens(level: str | None, default: int, expected: int) -> None:
    assert max_tokens(level, default) == expected  # type: ignore[arg-type]


# -- prompt files --------------------------------------------------------------------------

PLACEHOLDERS = {
    "answer": {"history", "language", "level", "level_hint", "memory", "mistakes", "native",
               "question", "reference", "reminder", "sources", "task"},
    "categorize": {"course", "history", "message"},
    "check_claim": {"claim", "evidence"},
    "check_question": {"language", "passage", "section"},
    "diagnose": {"material", "message", "previous", "reference", "topics"},
    "grade": {"question", "sources"},
    "judge_misconception": {"gold", "predicted", "problem"},
    "leak_judge": {"reply", "solution"},
    "leak_rewrite": {"exercise", "problems", "reply", "task"},
    "hint_step": {"exercise", "history", "language", "memory", "mistakes", "n", "question",
                  "steps", "task"},
    "reuse_reference": {"answer"},
    "rewrite": {"history", "message"},
    "statements": {"evidence", "history", "language", "level", "level_hint", "native",
                   "question", "shape"},
    "statements_retry": {"evidence", "language", "most", "question"},
    "summarize": {"conversation", "facts", "previous", "words"},
    "translate": {"language", "question", "terms"},
    "translate_reply": {"language"},
    "wrong_sum": {"sums"},
}
prompt_names = sorted(
    f.name.removesuffix(".txt")
    for f in (resources.files("coursetutor.tutor") / "prompts").iterdir()
    if f.name.endswith(".txt")
)


def test_every_prompt_file_is_known() -> None:
    tasks = ["task_compare", "task_definition", "task_exam", "task_example", "task_explain",
             "task_guiding", "task_hint", "task_solution", "task_steps", "task_why_exercise"]
    steps = ["step_guiding", "step_hint", "step_steps"]  # a hint's task from a step
    # what a hint is asked for when the student demands the result
    asked = ["hint_request"]
    assert prompt_names == sorted([*PLACEHOLDERS, "system", "statements_system",
                                   "hint_system", *tasks, *steps, *asked])


@pytest.mark.parametrize("name", prompt_names)
def test_every_prompt_renders_with_its_placeholders(name: str) -> None:
    needed = PLACEHOLDERS.get(name, set())
    values = {key: f"<{key.upper()}>" for key in needed}
    out = prompts.render(name, **values)
    for key in needed:
        assert f"<{key.upper()}>" in out
    assert re.findall(r"\{(\w+)\}", out) == []


@pytest.mark.parametrize("name", sorted(PLACEHOLDERS))
def test_a_missing_value_raises(name: str) -> None:
    values = dict.fromkeys(sorted(PLACEHOLDERS[name])[1:], "x")
    with pytest.raises(KeyError, match=sorted(PLACEHOLDERS[name])[0]):
        prompts.render(name, **values)


def test_inserted_text_is_not_substituted_again() -> None:
    out = prompts.render("grade", sources="Passage: {question} and {sources}",
                         question="What is bisection?")
    assert out == (
        "Do these course passages contain the information needed to answer the question? "
        'Reply with a JSON object only: {"supported": true} or {"supported": false}.\n\n'
        "Passages:\nPassage: {question} and {sources}\n\nQuestion: What is bisection?"
    )


# -- tidying a small model's reply -------------------------------------------------------

HEADERS = ["[1] Lecture 1: Root finding > 5 Convergence and stopping criteria > 5.2 When to "
           "stop, #52-when-to-stop", "[2] Lecture 1 (video): Newton's method, 09:50-10:19"]


@pytest.mark.parametrize(("text", "question", "tidied"), [
    ("Bisection halves the bracket [1]. It keeps the half (e.g. [a, c]) with the sign change "
     "[2].\n\n1. Compute c = (a + b) / 2.\n2. Check f(c).", "How does bisection work?",
     "Bisection halves the bracket [1]. It keeps the half (e.g. [a, c]) with the sign change "
     "[2].\n\n1. Compute c = (a + b) / 2.\n2. Check f(c)."),
    ("When should it stop?\nStop when |f(x)| < tol [1].", "When should it stop?",
     "Stop when |f(x)| < tol [1]."),
    ("迭代方法应该在什么时候停止？\n\n[1] 5 Convergence and stopping criteria > 5.2 When to stop, "
     "#52-when-to-stop\n\n[2] Lecture 1 (video): Newton's method, 09:50-10:19",
     "迭代方法应该在什么时候停止？", ""),
    ("[1] 割线法的收敛阶是1。[2] 割线法的收敛阶是1。[3] 割线法的收敛阶是1。",
     "割线法的收敛阶是多少？", "[1] 割线法的收敛阶是1。"),
    ("[1] 뉴턴 방법은 이차 수렴하나요? " * 5, "뉴턴 방법은 왜 이차 수렴하나요?", ""),
    ("Yes. Yes. It converges [1].", "Does it converge?", "Yes. Yes. It converges [1]."),
    # a chat model's courtesy and the hint announced, before the hint itself
    ("Certainly! Here's a hint from the sources that points to the idea or method from the "
     "exercise they need:\n\n\nCount the steps n that guarantee |c_n - r| <= tol [1].",
     "Can you help me with exercise 3?", "Count the steps n that guarantee |c_n - r| <= tol [1]."),
    ("Here are the hints provided by the course sources:\n\n- f is continuous on [a, b] [1].",
     "Puoi aiutarmi con l'esercizio 1?", "- f is continuous on [a, b] [1]."),
    ("Here is a hint: compute the midpoint first [1].", "How?",
     "Here is a hint: compute the midpoint first [1]."),
    ("Sure, bisection halves the bracket [1].", "How?", "Sure, bisection halves the bracket [1]."),
])
def test_tidy(text: str, question: str, tidied: str) -> None:
    assert tidy(text, question, HEADERS) == tidied


def test_tidy_drops_a_sentence_that_says_again_what_the_reply_said() -> None:
    first = ("Il metodo di bisezione si basa sul teorema dei valori intermedi: se la funzione è "
             "continua su un intervallo e i valori agli estremi hanno segno opposto, allora "
             "esiste una radice [1].")
    again = ("Questo metodo è basato sul teorema dei valori intermedi, che dice che se una "
             "funzione è continua su un intervallo e i valori agli estremi hanno segno opposto, "
             "esiste una radice [1].")
    question = "Come funziona il metodo di bisezione?"
    assert tidy(f"{first}\n\n{again}", question, [], language="it") == first
    # a sentence that adds something is kept, however many words it shares
    more = ("Il metodo di bisezione dimezza l'intervallo a ogni passo e guadagna circa una cifra "
            "binaria per passo, quindi è lento ma sicuro [1].")
    assert tidy(f"{first} {more}", question, [], language="it") == f"{first} {more}"
    # the same words with another sign are another statement
    bounds = "If f is continuous and |x - y| < delta then |f(x) - f(y)| < epsilon for x, y [1]."
    negated = "If f is continuous and |x - y| < delta then |f(x) - f(y)| >= epsilon for x, y [1]."
    assert tidy(f"{bounds} {negated}", "What is uniform continuity?", []) == f"{bounds} {negated}"
    # a hint's second sentence said again under "Specifically": the sentence after it is
    # the one that names the step
    shown = ("To show that the empirical risk is not convex in general, we need to demonstrate "
             "that there exists a set of observations for which the Hessian matrix of the "
             "empirical risk is not positive definite.")
    specifically = ("Specifically, we will show that there exists a set of observations for "
                    "which the Hessian matrix is not positive definite.")
    step = "Assume there is only one observation with y = 0."
    assert tidy(f"{shown} {specifically} {step}", "Why is the risk not convex?",
                []) == f"{shown} {step}"


def test_tidy_drops_a_rhetorical_question_left_without_its_answer() -> None:
    said = ("奇数次多项式方程至少有一个实根，这是根据 [1] 中的说明得出的。"
            "具体来说，任何奇数次多项式方程都有至少一个实根，"
            "因为根据 [1] 中的结论，任何奇数次多项式方程都有至少一个实根。")
    again = "为什么？因为根据 [1] 中的说明，任何奇数次多项式方程都有至少一个实根。"
    assert tidy(f"{said}\n\n{again}\n\n[1]", "为什么奇数次多项式方程至少有一个实根？", [],
                language="zh") == said


def test_stuttering() -> None:
    stuck = "이 방법의 수렴 속도는 약 1.618으로, " + "금융의 " * 40
    assert stuttering(stuck) and stuttering("很好" * 6)
    assert unstutter(stuck) == "이 방법의 수렴 속도는 약 1.618으로, 금융의 "
    assert not stuttering("the same " * 5)  # five times may still be prose
    assert not stuttering("the " * 6 + "end.")  # only at the end of what came so far
    assert unstutter("x = 0 0 0 0 0 0 0") == "x = 0 0 0 0 0 0 0"  # numbers, not a phrase
    assert tidy("It halves the bracket [1] and keeps the " + "same " * 9, "How?", []) == (
        "It halves the bracket [1] and keeps the same")


def test_a_translation_that_runs_away_is_no_translation() -> None:
    from coursetutor.tutor.reply_language import runaway

    rolle = "Il teorema di Rolle afferma che se f(a)=f(b), allora esiste c tale che f'(c)=0."
    # the bundled model, translating that into Korean: one phrase, each time a new marker
    loop = "롤레의 정리는 " + " ".join(f"[{n}]에서 설명됩니다." for n in range(1, 30))
    assert runaway(rolle, loop)
    assert runaway(rolle, "롤의 정리는 f(a)=f(b)이면 f'(c)=0인 c가 존재한다고 말합니다. [1]")
    assert not runaway(f"{rolle} [1]", "롤의 정리는 f(a)=f(b)이면 f'(c)=0인 c가 존재한다고 "
                       "말합니다. [1]")
    assert not runaway("v = (1, 2, 3, 4, 5, 6, 7) [1]", "v = (1, 2, 3, 4, 5, 6, 7) [1]")


def test_a_translation_into_a_script_of_neither_side_is_foreign() -> None:
    from coursetutor.tutor.reply_language import foreign_script

    hint = "Define the interval `[a_k, b_k]` after each bisection step [1]."
    assert foreign_script(hint, "Si tratta di определire l'intervallo `[a_k, b_k]` [1].", "it")
    assert foreign_script(hint, "Definisci l'intervallo 区间 `[a_k, b_k]` [1].", "it")
    assert not foreign_script(hint, "Definisci l'intervallo `[a_k, b_k]` dopo ogni passo [1].",
                              "it")
    assert not foreign_script(hint, "각 이분법 단계 후의 구간 `[a_k, b_k]`를 정의하세요 [1].", "ko")
    assert foreign_script(hint, "각 이분법 단계 후의 구간을 определить [1].", "ko")
    # the text's own letters may stay: a name written in Cyrillic in the course
    assert not foreign_script("Чебышёв nodes [1].", "I nodi di Чебышёв [1].", "it")
    assert not foreign_script(hint, "Определите интервал [1].", "ru")


def test_looping() -> None:
    assert looping("It halves the bracket. " * 3)
    assert not looping("It halves the bracket. " * 2)
    assert not looping("Yes. Yes. Yes.")  # too short to call a loop
    assert not looping("It halves the bracket. It halves the bracket. It halves the")


def test_tidy_drops_sentences_parroted_from_the_student_or_the_task() -> None:
    student = ("To work out how many pencils fit in a box we divide the total (70) by the "
               "number of boxes (3). So each box holds 24 pencils.")
    task = prompts.load("task_guiding")
    reply = (f"{student} [1]\nThe student is still stuck on the exercise. How many pencils "
             "does Jam have in her three boxes? [1]")
    assert tidy(reply, student, [], (task,)) == (
        "How many pencils does Jam have in her three boxes? [1]")


def test_tidy_drops_the_task_parroted_with_a_phrase_left_out() -> None:
    task = prompts.load("task_steps")
    # the task: "The exercise and the method the course teaches for it are in the sources above."
    assert tidy("[1] The exercise and the method are in the sources above.",
                "Dammi la soluzione dell'esercizio 1 (c).", [], (task,)) == ""
    own = "Use the Newton-Raphson method from the sources above to find the optimal model [1]."
    assert tidy(own, "Solve exercise 1.", [], (task,)) == own


def test_tidy_drops_a_sentence_reciting_the_rungs_task_around_words_of_its_own() -> None:
    task = prompts.load("step_steps")
    said = ("Here are the steps the student should follow, one per line, speaking to them "
            "directly, in their own terms and formulas, without working out any of them.\n\n"
            "1. Write the equation in the form `f(x) = 0` [1].\n2. Start from `x_0 = 1`.")
    assert tidy(said, "I'm still stuck on exercise 2.", [], (task,)) == (
        "1. Write the equation in the form `f(x) = 0` [1].\n2. Start from `x_0 = 1`.")
    # the student's own working, quoted at length, is no instruction
    working = "there are a total of 26 - 2 = 24 pencils in the three boxes, so each box holds 8"
    reply = f"You wrote that {working}: check the second step [1]."
    assert tidy(reply, f"I think {working}.", [], (task,)) == reply


def test_tidy_drops_a_last_sentence_cut_after_its_first_word() -> None:
    assert tidy("The loss is the Brier loss [2]. The [1]", "Which loss?", []) == (
        "The loss is the Brier loss [2].")
    assert tidy("The loss is x [2]. It is 5", "Which loss?", []) == "The loss is x [2]. It is 5"


def test_tidy_drops_copied_headers_whatever_their_punctuation() -> None:
    headers = ["[1] Lecture 1: Root finding > 5 Convergence and stopping criteria > 5.2 When "
               "to stop, #52-when-to-stop", "[2] Lecture 2: Convergence of iterative methods > "
               "2 The contraction mapping condition > 2.3 Local version and examples, p. 2"]
    raw = ("迭代方法应该在什么时候停止？\n\n1. [1] Lecture 1: Root finding > 5 Convergence and "
           "stopping criteria > 5.2 When to stop, #52-when-to-stop\n\n2. Lecture 2: Convergence "
           "of iterative methods > 2 The contraction mapping condition > 2.3 Local version and "
           "examples, p. 2\n\n当误差小于容差时停止 [1]。")
    assert tidy(raw, "迭代方法应该在什么时候停止？", headers) == "当误差小于容差时停止 [1]。"


# -- exercises named in questions and found in PDF passages ---------------------------------

@pytest.mark.parametrize("text", [
    "Why is Gauss-Newton used in exercise 2?",
    "How does the method in exercise 1 work?",
    "Perché nell'esercizio 2 si usa Gauss-Newton?",
    "Warum wird in Aufgabe 1 Gauss-Newton verwendet?",
    "为什么练习2用高斯-牛顿法？",
    "연습 문제 2에서 왜 가우스-뉴턴 방법을 쓰나요?",
])
def test_why_or_how_a_method_works_in_an_exercise_is_a_concept_question(text: str) -> None:
    cat = categorize_rules(text, has_history=False)
    assert (cat.category, cat.intent, cat.wants_answer, cat.about_exercise, cat.sure) == (
        "lecture", "concept", False, True, True)
    assert task_prompt(cat.intent, None, cat.about_exercise) == "task_why_exercise"


@pytest.mark.parametrize("text", [
    "Why won't you just give me the answer to exercise 2?",
    "How do I solve exercise 2?",
])
def test_asking_for_the_result_or_how_to_solve_stays_exercise_help(text: str) -> None:
    cat = categorize_rules(text, has_history=False)
    assert (cat.intent, cat.about_exercise) == ("exercise", False)


@pytest.mark.parametrize(("text", "intent"), [
    ("뉴턴 방법의 수렴 문제는 무엇인가요?", "definition"),  # "problem" of convergence
    ("뉴턴 방법에서 헤세 행렬이 양의 정부호가 아니면 어떤 문제가 생기나요?", "concept"),
    ("牛顿法的收敛问题是怎么回事？", "concept"),
    ("ニュートン法の収束の問題を説明してください", "concept"),
    ("2번 문제를 도와주세요", "exercise"),
    ("문제 3을 어떻게 풀어요?", "exercise"),
    ("这道题怎么做？", "exercise"),
    ("第2题怎么做？", "exercise"),
])
def test_problem_alone_is_a_concept_word(text: str, intent: str) -> None:
    assert categorize_rules(text, has_history=False).intent == intent


@pytest.mark.parametrize(("text", "numbers"), [
    ("Optimization in Machine Learning Exercise sheet #9\nExercise 1: Newton-Raphson and "
     "Gauss-Newton\n1. Show that the gradient ...\n2. Show that the Hessian ...", ["1"]),
    ("... end of the first one.\nExercise 2 (Secant method) Use x0 = 1.", ["2"]),
    ("Esercizio 3. Calcolare il limite. Esercizio 4: la derivata.", ["3", "4"]),
    ("Aufgabe 2) Zeigen Sie ...", ["2"]),
    ("练习 5：求极限。第6题：求导数。", ["5", "6"]),
    ("연습 문제 1: 극한을 구하시오.\n2번 도함수를 구하시오.", ["1", "2"]),
    ("Multivariate Optimization 4 Solution 1:\n\nNewton-Raphson", ["1"]),
    ("As shown in exercise 1, the method converges.", []),  # a reference, not a heading
    ("1. Show that the gradient ...\n2. Show that ...", []),  # parts of one exercise
])
def test_item_numbers_in_a_passage(text: str, numbers: list[str]) -> None:
    assert item_numbers(text) == numbers


@pytest.mark.parametrize(("question", "number"), [
    ("exercise 1", "1"), ("esercizio 1", "1"), ("Aufgabe 1", "1"), ("练习 1", "1"),
    ("연습 1", "1"), ("연습 문제 2", "2"), ("2번 문제", "2"), ("第3题", "3"),
    ("How does Newton's method work?", None),
])
def test_the_exercise_a_question_names(question: str, number: str | None) -> None:
    assert referenced_number(question) == number


def test_an_exercise_key_without_a_numbered_section_uses_the_item() -> None:
    sheet = make_hit("Exercise 2: Newton's method ...", "exercise", "Sheet 9", ("Sheet",))
    assert exercise_key(sheet) == "doc-0:item 2"
    plain = make_hit("Exercise 2: Newton's method ...", "exercise", "Sheet 9",
                     ("Exercise sheet 1", "Exercise 2: Newton"))
    assert exercise_key(plain) == "doc-0:Exercise sheet 1 > Exercise 2: Newton"
    continued = make_hit("... and stop after three steps.", "exercise", "Sheet 9", (), n=4)
    assert exercise_key(continued) == "doc-4:#4"


def test_a_line_of_maths_is_no_section_path() -> None:
    from coursetutor.tutor.stages.write import _path_like

    assert _path_like("Notes > 5 Series > 5.2 Known series")
    assert _path_like("Lecture 2 > Secant method")
    assert not _path_like("Use step size α > 0 with x [t+1] = x [t] + αd[t]")
    # a quoted source line with a "greater than" survives tidying when it is not a header
    line = "Use step size α > 0 with x [t+1] = x [t] + αd[t] [1]"
    assert tidy(line, "What step size?", []) == line


def test_marker_spans_are_the_citations_only() -> None:
    text = "Bisection on [1, 9] needs 20 steps [2]; on $[1, 2]$ [1, 3] too."
    spans = marker_spans(text, frozenset({"[1, 9]"}))
    assert [text[a:b] for a, b in spans] == ["[2]", "[1, 3]"]


@pytest.mark.parametrize(("reply", "tidied"), [
    # a line of nothing but a marker the reply already cited says nothing of its own
    ("Si calcola il punto medio `c` [1].\n\n[1]", "Si calcola il punto medio `c` [1]."),
    # after a sentence on the same line it cites that sentence, and a new source stays
    ("Bisection halves the bracket [1]. It always converges. [1]",
     "Bisection halves the bracket [1]. It always converges. [1]"),
    ("Bisection halves the bracket [1].\n\n[2]", "Bisection halves the bracket [1].\n\n[2]"),
])
def test_a_stray_line_of_markers_already_cited_goes(reply: str, tidied: str) -> None:
    assert tidy(reply, "How does bisection work?", []) == tidied


def test_the_model_may_read_the_sources_latex_as_unicode_maths() -> None:
    text = r"La serie geometrica converge a $\frac{1}{1-q}$ per $|q|<1$."
    [source] = [Source(1, make_hit(text), text, 12)]
    assert r"\frac{1}{1-q}" in render_sources([source])
    shown = render_sources([source], "unicode")
    assert "1/(1−q)" in shown and "\\frac" not in shown
