"""Which exercise a request is about, and its solution (kept from students, used for checks)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import EmptyQueryError
from ..types import Chunk, DocType, Hit, SearchFilters, Turn
from ..workspace import Workspace

_NUMBER = re.compile(r"\d+")
EXERCISE_TYPES: tuple[DocType, ...] = ("exercise", "exam")


def exercise_hit(hits: Sequence[Hit]) -> Hit | None:
    """The best-ranked exercise or exam passage, if any."""
    return next((h for h in hits if h.chunk.doc_type in EXERCISE_TYPES), None)


def exercise_key(hit: Hit) -> str:
    """A stable name for the exercise a passage belongs to: document and section; where the
    section carries no number (a PDF sheet) and the passage starts an item ("Exercise 2:"),
    document and item."""
    chunk = hit.chunk
    item = _section_number(hit) is None and item_numbers(chunk.text)
    if item:
        return f"{chunk.document_id}:item {item[0]}"
    section = " > ".join(chunk.section_path) or f"#{chunk.ordinal}"
    return f"{chunk.document_id}:{section}"


def current_exercise(hits: Sequence[Hit], history: Sequence[Turn], followup: bool) -> str:
    """The exercise key of this turn: a follow-up stays on the previous turn's exercise."""
    if followup:
        for turn in reversed(history):
            if turn.exercise_key:
                return turn.exercise_key
    hit = exercise_hit(hits)
    return exercise_key(hit) if hit else ""


# an exercise's heading inside a passage's text, which PDF sheets keep there instead of in a
# section: "Exercise 2:", "Esercizio 2.", "Aufgabe 2)", "Problem 2 (Newton)", "练习 2", "연습 2",
# "第2题", "2번"; and a solution's "Solution 2:". Bare "2." is left out: it numbers an
# exercise's parts as often as exercises.
_ITEM = re.compile(
    r"(?:(?<![^\W\d_])|(?<=[\u3000-\u9fff\uac00-\ud7af]))"
    r"(?:exercise|problem|question|task|solution|esercizio|problema|domanda|soluzione|aufgabe|"
    r"\u00fcbung|l\u00f6sung|"
    r"exercice|ejercicio|\u7ec3\u4e60|\u4e60\u9898|\u9898\u76ee|\uc5f0\uc2b5\s*\ubb38\uc81c|"
    r"\uc5f0\uc2b5|\ubb38\uc81c|\u6f14\u7fd2|\u554f\u984c)"
    r"\s*(?:no\.?|n\.|nr\.?|#)?\s*(\d{1,3})(?=\s*(?:[:.)(\uff1a\uff08\u3001]|\*|\n|$))"
    r"|\u7b2c\s*(\d{1,3})\s*[\u9898\u984c]|(?:^|\n)\s*(\d{1,3})\s*\ubc88",
    re.IGNORECASE)


def item_numbers(text: str) -> list[str]:
    """The numbers of the exercise headings in a passage's text, in order, each once."""
    out: list[str] = []
    for m in _ITEM.finditer(text):
        number = next(g for g in m.groups() if g)
        if number not in out:
            out.append(number)
    return out


def _section_number(hit: Hit) -> str | None:
    return _number_in(hit.chunk.section_path)


def _section_item(hit: Hit) -> str | None:
    """The number of the innermost section headed as an exercise ("Exercise 3: …",
    "Esercizio 3."), if any."""
    for part in reversed(hit.chunk.section_path):
        if found := item_numbers(part):
            return found[0]
    return None


def _label_number(hit: Hit) -> str | None:
    """The exercise number of a passage: its section's, else the first heading in its text."""
    return _chunk_number(hit.chunk)


def _chunk_number(chunk: Chunk) -> str | None:
    items = item_numbers(chunk.text)
    return _number_in(chunk.section_path) or (items[0] if items else None)


def _number_in(section_path: Sequence[str]) -> str | None:
    for part in reversed(section_path):
        found = _NUMBER.findall(part)
        if found:
            return str(found[0])
    return None


def solution_text(ws: Workspace, course: str, exercise: Hit) -> str:
    """The solution passage(s) of `exercise`: same number in the heading, else the closest,
    in the order of their document (a next step reads them as steps), each with the
    passages after it that carry no other number: a PDF sheet's "Solution 1:" heads its
    first passage only, and parts (c) to (e) follow in the next ones."""
    try:
        hits = ws.search(exercise.chunk.text, course, k=8, doc_types=("solution",))
    except EmptyQueryError:
        return ""
    if not hits:
        return ""
    number = _label_number(exercise)
    numbered = [h for h in hits if number is not None and _label_number(h) == number]
    best = sorted(numbered or hits[:1], key=lambda h: (h.chunk.document_id, h.chunk.ordinal))
    chunks = {(c.document_id, c.ordinal): c for h in best
              for c in _with_following(ws, course, h.chunk, ("solution",))}
    return "\n\n".join(chunks[k].text for k in sorted(chunks))


def exercise_text(ws: Workspace, course: str, exercise: Hit) -> str:
    """An exercise's whole text: its passage and the ones after it that carry no other
    exercise's number (a PDF sheet's parts (d) and (e) on the next page)."""
    return "\n\n".join(c.text for c in _with_following(ws, course, exercise.chunk,
                                                         EXERCISE_TYPES))


FOLLOWING = 12  # passages after an exercise's or a solution's heading read with it, at most


def _with_following(ws: Workspace, course: str, chunk: Chunk,
                    types: tuple[DocType, ...]) -> list[Chunk]:
    """`chunk` and the passages after it in its document, up to one with another number."""
    out = [chunk]
    own = _chunk_number(chunk)
    filters = SearchFilters(ws.tenant, course, types)
    for ordinal in range(chunk.ordinal + 1, chunk.ordinal + 1 + FOLLOWING):
        after = ws.store.chunk_at(filters, chunk.document_id, ordinal)
        if after is None or _chunk_number(after) not in (None, own):
            break
        out.append(after)
    return out


_REFERENCE = re.compile(
    r"(?:exercise|problem|question|task|esercizio|problema|domanda|aufgabe|übung|exercice|"
    r"ejercicio|练习|习题|题目|문제|연습\s*문제|연습|演習|問題)\s*(?:no\.?|n\.|nr\.?|#)?\s*(\d+)|"
    r"第\s*(\d+)\s*[题題]|(\d+)\s*번\s*문제",
    re.IGNORECASE,
)


def referenced_number(question: str) -> str | None:
    """'exercise 2', 'esercizio 2', '第2题', '2번 문제' -> '2'."""
    m = _REFERENCE.search(question)
    if not m:
        return None
    return next(g for g in m.groups() if g)


def find_exercise(ws: Workspace, course: str, question: str, history: Sequence[Turn],
                  followup: bool, asked: str = "") -> Hit | None:
    """The exercise the student names ('exercise 2') or, on a follow-up, the one before.
    `question` is searched; the number is its own or, lost in its translation, the one of
    the student's own words (`asked`: "이분법 연습 문제 3을 도와주세요")."""
    number = referenced_number(question) or referenced_number(asked)
    key = "" if number or not followup else current_exercise((), history, True)
    if not number and not key:
        return None
    try:
        hits = ws.search(question, course, k=30, doc_types=EXERCISE_TYPES)
    except EmptyQueryError:
        return None
    if number:
        # a section headed as that exercise first ("Exercise 1: Bisection on a cubic", not the
        # sheet's opening under "Exercise sheet 1: Root finding"); a PDF sheet's passages
        # carry the heading only in their text; else any section of that number
        return (next((h for h in hits if _section_item(h) == number), None)
                or next((h for h in hits if number in item_numbers(h.chunk.text)), None)
                or next((h for h in hits if _section_number(h) == number), None))
    return next((h for h in hits if exercise_key(h) == key), None)


# an exercise's parts: "(a) Show that …", "b) Compute …" at a line's start; a letter in
# parentheses inside a formula ("f (d)") is a part only in the sequence a, b, c, …
_PART_MARK = re.compile(r"(?:(?<=\s)|^)\(([a-h])\)(?=\s)|(?:^|\n)[ \t]*([a-h])\)[ \t]")
# the part a question names: "exercise 1 (e)", "esercizio 2b", "练习1 (e)", "part (c)",
# "parte c", "Teilaufgabe b"
_PART_REF = re.compile(
    r"(?:" + _REFERENCE.pattern + r")(?:\s*\(([a-h])\)|([a-h])(?![^\W\d_]))"
    r"|\b(?:part|parte|punto|teil|teilaufgabe|partie|apartado|item)\s*\(?([a-h])\)?"
    r"(?![^\W\d_])", re.IGNORECASE)


# an exercise a statement names as its subject or place, with its part and sheet: "The exercise
# 1 of sheet 9", "in exercise 1 (e)", "Exercise 1（e）的", "练习1 (e) 中", "연습 문제 1 (e)에서"
_NAMED = re.compile(
    r"(?P<place>\b(?:in|of|for|from|nel(?:l')?|dell(?:')?|per)\s+|[\u5728\u4e8e]\s*)?"
    r"(?:\bthe\s+|l')?"
    r"(?:" + _REFERENCE.pattern + r")(?:\s*[(\uff08][a-h][)\uff09]|[a-h](?![^\W\d_]))?"
    r"(?:\s+(?:of|on|in|del|nel)\s+(?:the\s+)?(?:exercise\s+)?(?:sheet|foglio)\s+\d+)?"
    r"(?:\s*(?:\u4e2d|\u7684|\uc5d0\uc11c|\uc758|\ub294|\uc740))?\s*,?", re.IGNORECASE)


def without_reference(text: str, question: str) -> str:
    """`text` without the exercises it names that `question` names too: the student asked
    about that exercise, so "The exercise 1 of sheet 9 minimizes the Brier-loss" claims only
    that it minimizes the Brier-loss ("It minimizes the Brier-loss.")."""
    asked = {n for m in _REFERENCE.finditer(question) for n in m.groups() if n}
    if not asked:
        return text

    def drop(m: re.Match[str]) -> str:
        numbers = {n for n in _REFERENCE.search(m.group(0)).groups() if n}  # type: ignore[union-attr]
        return " " if numbers <= asked else m.group(0)

    subject = (m := _NAMED.match(text)) is not None and not m.group("place") and bool(
        drop(m).strip() == "")
    out = " ".join(_NAMED.sub(drop, text).split())
    if subject and out[:1].islower():
        out = f"It {out}"  # the exercise was the subject
    return out or text


def referenced_part(question: str) -> str | None:
    """'exercise 1 (e)', 'esercizio 2b', 'part (c)' -> 'e', 'b', 'c' (lower case)."""
    m = _PART_REF.search(question)
    if not m:
        return None
    letters = [g for g in m.groups()[3:] if g]  # after the exercise number's three groups
    return letters[0].lower() if letters else None


def parts(text: str) -> dict[str, str]:
    """An exercise's (or a solution's) parts by letter, each from its mark to the next: the
    marks taken in the order a, b, c, … so a letter of a formula is no part. {} when the
    text has no part (a) or only one part."""
    found: dict[str, int] = {}
    for m in _PART_MARK.finditer(text):
        letter = (m.group(1) or m.group(2)).lower()
        if ord(letter) - ord("a") == len(found):  # the next letter of the sequence
            found[letter] = m.start()
    if len(found) < 2:
        return {}
    starts = [*found.values(), len(text)]
    return {letter: text[start:starts[n + 1]].strip()
            for n, (letter, start) in enumerate(found.items())}
