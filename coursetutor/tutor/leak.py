"""Does a reply give away an exercise's result? Number and wording checks against the solution."""

from __future__ import annotations

import re
from collections.abc import Iterable

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)?(?:[eE]-?\d+)?(?![\w])")
_FINAL = re.compile(
    r"(final answer|answer|result|risposta|risultato|soluzione finale|lösung|ergebnis|réponse|"
    r"respuesta|答案|结果|정답|답)\s*[:=：]?\s*([^\n]{1,160})",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+", re.UNICODE)
NGRAM = 6


def _value(token: str) -> float | None:
    try:
        return float(token.replace(",", "") if token.count(",") and "." in token
                     else token.replace(",", "."))
    except ValueError:
        return None


def _significant(token: str) -> int:
    digits = re.sub(r"[eE].*$", "", token).replace("-", "").replace(".", "").replace(",", "")
    return len(digits.lstrip("0"))


def stated_finals(solution: str) -> list[str]:
    """The results a solution closes on: after "final answer", "result" and the like, and a
    bare number that ends it ("12 / 4 = 3 loads\n 3")."""
    found: list[str] = []
    for m in _FINAL.finditer(solution):
        found.extend(NUMBER.findall(m.group(2)))
    lines = [ln for ln in solution.strip().splitlines() if ln.strip()]
    if lines and re.fullmatch(r"\s*[-\d.,]+\s*", lines[-1]):  # a bare number closing it
        found.append(lines[-1].strip())
    return list(dict.fromkeys(found))


def final_answers(solution: str, exercise: str = "") -> list[str]:
    """Numbers a reply must not state: explicit final answers, and every precise number
    (3+ significant digits) of the solution that the exercise itself does not give."""
    given = {_value(t) for t in NUMBER.findall(exercise)}
    found = stated_finals(solution)
    found.extend(t for t in NUMBER.findall(solution) if _significant(t) >= 3)
    out: list[str] = []
    for token in found:
        if _value(token) not in given and token not in out:
            out.append(token)
    return out


def _decimals(token: str) -> int:
    mantissa = re.sub(r"[eE].*$", "", token).replace(",", ".")
    return len(mantissa.split(".", 1)[1]) if "." in mantissa else 0


def _matches(token: str, value: float, target: float) -> bool:
    """`token` (read as `value`) states `target`, exactly or rounded to its own decimals."""
    if value == target:
        return True
    places = _decimals(token)
    return (_significant(token) >= 3 and "e" not in token.lower()
            and abs(round(target, places) - value) < 10 ** -(places + 3))


def _readings(token: str) -> set[float]:
    """Every value `token` can mean: '2,000' is 2000 in English and 2.0 in Italian."""
    out = {v for v in (_value(token),) if v is not None}
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", token):
        out.add(float(token.replace(",", "")))
    return out


def numbers(text: str) -> set[float]:
    """Every value the numbers of `text` can mean."""
    return {v for token in NUMBER.findall(text) for v in _readings(token)}


def states_number(reply: str, answers: Iterable[str], given: Iterable[str] = ()) -> bool:
    """True when the reply states one of `answers`: the same value, or the value rounded to
    the reply's decimals when the reply's number has 3+ significant digits (0.739 for 0.73908).
    Numbers that state one of the `given` values (data from the exercise) never count."""
    wanted = {v for a in answers for v in _readings(a)}
    data = {v for g in given for v in _readings(g)}
    for token in NUMBER.findall(reply):
        values = _readings(token)
        if any(_matches(token, v, d) for v in values for d in data):
            continue
        if any(_matches(token, v, w) for v in values for w in wanted):
            return True
    return False


def copies_solution(reply: str, solution: str, share: float = 0.3) -> bool:
    """True when at least `share` of the reply's word 6-grams come from the solution."""
    def grams(text: str) -> set[tuple[str, ...]]:
        w = [x.lower() for x in _WORD.findall(text)]
        return {tuple(w[i : i + NGRAM]) for i in range(len(w) - NGRAM + 1)}

    mine = grams(reply)
    return bool(mine) and len(mine & grams(solution)) >= share * len(mine)


def reveals(reply: str, solution: str, exercise: str = "") -> bool:
    """Does `reply` state the exercise's result or reproduce its solution?"""
    given = NUMBER.findall(exercise)
    return states_number(reply, final_answers(solution, exercise), given) or copies_solution(
        reply, solution
    )
