"""What each rung of the hint ladder may say, checked before the student reads it.

Contracts (all rungs below `solution`):

- no rung states the exercise's final answer or copies its worked solution, nor carries out the
  computation that gives it ("12 / 4 = 3 loads" when the exercise also has 3 towels);
- no rung states as a result a value only the student wrote, which the worked solution does
  not have ("The total number of towels is 15": the student's sum; the solution has 12);
- no rung states a computation that does not hold ("70 divided by 3 is equal to 24", the
  student's) unless it asks about it, negates it or asks to check it;
- `hint`, `guiding`, `steps`: no computed result the student was not given (a number that is in
  neither the exercise, the student's messages nor the course passages shown, unless it is a
  small whole number in no result position, "two steps", "x^2", or 0 or 1 anywhere, "f(x) = 0"),
  and no question paired with its answer ("Question: ... Answer: ...");
- `guiding`: asks at least one question and ends with one;
- `example`: an analogous example, so it uses neither the numbers of the student's problem
  (the exercise's and the student's own, other than 0, 1 and 2: two of them, or the only one)
  nor the exercise's function (`f(x) = ...`), and tells another story: the exercise's own
  people and things (its capitalised names that no other passage of the course has: "Jam",
  "Meg", not "Newton") appear at most in its last sentence, the invitation to try them.

`check` names every violation; `cut_back` keeps the sentences that hold. Pure functions over
plain text.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Literal

from .arithmetic import asserted_wrong, equations
from .citations import MARKER
from .claims import mask_formulas
from .leak import NUMBER, copies_solution, numbers, states_number
from .pedagogy import Level

Rule = Literal["states_answer", "copies_solution", "answer_given", "computed_result",
               "wrong_sum", "student_value", "no_question", "ends_in_statement", "same_numbers",
               "same_function", "same_story"]
QUESTION_ENDS = ("?", "\uff1f")
SMALL = 10  # whole numbers up to this are counts and ordinals ("two steps"), not results
TRIVIAL = {0.0, 1.0, 2.0}  # numbers every example uses: not the exercise's own
IDENTITIES = {0.0, 1.0}  # "set f(x) = 0", "a = 1": how equations are written, not results
MIN_HELP = 20  # letters a cut-back reply needs to still help

# where a sentence ends: . ! ? before a space or the end (not "0.5"), CJK stops, line breaks
_END = re.compile(r"[.!?]+(?=\s|$)|[\u3002\uff01\uff1f]+|\n+")
_ITEM_LABEL = re.compile(r"\s*\d{1,2}")
# what still belongs to the sentence: the citation markers and spaces after its end
_TAIL = re.compile(r"(?:[ \t]*\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\])*[.!?\u3002]?\s*")
# "1.", "2)", "Step 3:", "Question 2:", "- " at the start of a line: labels, not numbers
_LABEL = re.compile(
    r"^\s*(?:[-*\u2022]\s*|\d{1,2}[.)]\s+|(?:step|question|q|schritt|passo|domanda|frage|"
    r"\u6b65\u9aa4|\u95ee\u9898|\ub2e8\uacc4|\uc9c8\ubb38)\s*\d{0,2}\s*[:.)\uff1a]\s*)",
    re.IGNORECASE)
# an answer label: "Answer: ...", "A: ...", "Risposta: ...", "答案：", "정답:"
_ANSWER_LABEL = re.compile(
    r"(?:^|(?<=[\s?\uff1f.*_(]))(?:answer|a|solution|result|risposta|soluzione|antwort|l\u00f6sung|"
    r"r\u00e9ponse|respuesta|\u7b54\u6848|\u7b54|\u89e3\u7b54|\uc815\ub2f5|\ub2f5|\ub2f5\ubcc0)"
    r"\s*[:\uff1a]", re.IGNORECASE)
# a number in a result position: "= 12", "is 12", "gives 12", "you get 12", "total of 12"
_RESULT_BEFORE = re.compile(
    r"(?:[=\u2248\u2243\u2192]|\b(?:equals?|is|was|gives?|gave|get|gets|got|makes?|yields?|"
    r"totals?|total of|results? in|comes? to|answer|result|took|takes|\u00e8|sono|ist|sind|"
    r"est|es|son)\b|\u7b49\u4e8e|\u662f|\uc740|\ub294|\uc774)"
    r"\s*(?:about|approximately|roughly|around|exactly|circa|etwa|environ|\u7ea6)?\s*"
    r"[$\u20ac\u00a3]?\s*$", re.IGNORECASE)
# a function as the exercise writes it: "f(x) = x^3 - 2x - 5", "cos(x) = x"
_FUNCTION = re.compile(
    r"[A-Za-z]\w*\s*\([^()]{1,20}\)\s*=(?:\s*(?:\d+(?:\.\d+)?|sin|cos|tan|exp|log|ln|sqrt|"
    r"[a-z](?![a-z])|[-+*/^()\u00b2\u00b3]))+", re.IGNORECASE)
_BLANKS = re.compile(r"\s+")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}\b")
# capitalised words an exercise opens sentences with that name no one in it
_STARTS = frozenset(
    "the this that these those there then what which who whom whose when where why how if "
    "find compute calculate show prove use given suppose assume determine explain write let "
    "solve evaluate estimate sketch draw consider each every all after before during for from "
    "with she her hers he him his they them their its one two three four five six seven eight "
    "nine ten and but also can could would should will does did has have had are was were "
    "not yes".split())
_EMPTY_MATH = re.compile(r"\\\[\s*\\\]|\$\$\s*\$\$")  # display maths whose lines were cut


@dataclasses.dataclass(frozen=True)
class RungFacts:
    """What a reply on one exercise is checked against."""

    exercise: str  # the exercise's text: its data are not computed results
    student: str = ""  # the student's messages: what they wrote is theirs already
    shown: str = ""  # other course text the student was shown (the sources)
    answers: tuple[str, ...] = ()  # the exercise's final answers (from its solution)
    solution: str = ""  # its worked solution, hidden from the student
    # the results its solution closes on, even where the exercise has the same number
    results: tuple[str, ...] = ()
    # the course's other passages shown: the names they have are the course's ("Newton")
    course: str = ""
    # the words of the solution a hint shows by design: its next step's reason (reason.py),
    # not copied from the solution when the reply has them
    reason: str = ""

    def given(self) -> set[float]:
        """Every number the student was given or wrote."""
        return {v for text in (self.exercise, self.student, self.shown)
                for v in numbers(text)}

    def own_names(self) -> set[str]:
        """The exercise's own people and things: its capitalised words that it never writes
        in lower case, that open no sentence as a common word, and that no other passage of
        the course has ("Jam", "Meg", "Elliott"; not "Newton" where a lecture names him)."""
        common = _STARTS | {w.casefold() for w in re.findall(r"\b[a-z]\w*", self.exercise)}
        common |= {w.casefold() for w in re.findall(r"\w+", self.course)}
        return {w for w in _CAPITALISED.findall(self.exercise) if w.casefold() not in common}

    def own_numbers(self) -> set[float]:
        """The numbers of the student's problem: the exercise's data and the student's
        working, other than 0, 1 and 2."""
        return (numbers(self.exercise) | numbers(self.student)) - TRIVIAL


@dataclasses.dataclass(frozen=True)
class Violation:
    """One broken rule, with the sentence that broke it (empty for the reply as a whole)."""

    rule: Rule
    sentence: str = ""
    detail: str = ""

    def describe(self) -> str:
        """One line for the model that rewrites the reply."""
        quoted = f' ("{_short(self.sentence)}")' if self.sentence else ""
        return {
            "states_answer": f"It states the exercise's final answer ({self.detail}){quoted}: "
                             "remove it.",
            "copies_solution": "It copies the worked solution: give only the help the task "
                               "asks for.",
            "answer_given": f"It answers its own question{quoted}: ask the question and leave "
                            "the answer to the student.",
            "wrong_sum": f"It states a computation that does not hold ({self.detail}): ask "
                         "the student to check it instead, without giving its value.",
            "student_value": f"It states the student's own value ({self.detail}) as a fact, "
                             "and the worked solution has no such value: ask the student to "
                             "check how they got it instead.",
            "computed_result": f"It states a computed result ({self.detail}){quoted}: describe "
                               "the operation or ask for it instead of carrying it out.",
            "no_question": "It asks the student no question: write guiding questions.",
            "ends_in_statement": "It must end with a question for the student.",
            "same_numbers": f"The example uses the exercise's own numbers ({self.detail}): "
                            "use different numbers.",
            "same_function": f"The example uses the exercise's own function ({self.detail}): "
                             "use a different one.",
            "same_story": f"The example is the exercise's own situation ({self.detail}): make "
                          "up a different one, with other names and other numbers, and name "
                          "the exercise only when inviting the student to try it.",
        }[self.rule]


def _short(text: str, limit: int = 120) -> str:
    text = _BLANKS.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def sentences(text: str) -> list[str]:
    """`text` split into sentences, each with its trailing citation markers and spaces;
    joined back they give `text`."""
    out: list[str] = []
    pos = 0
    for m in _END.finditer(text):
        if m.start() < pos or _ITEM_LABEL.fullmatch(text, text.rfind("\n", 0, m.start()) + 1,
                                                     m.start()):
            continue  # overlapped, or the "2." that numbers a line
        tail = _TAIL.match(text, m.end())
        end = tail.end() if tail else m.end()
        out.append(text[pos:end])
        pos = end
    if pos < len(text):
        out.append(text[pos:])
    return out


def _bare(sentence: str) -> str:
    """The sentence without its citation markers and list label."""
    return _LABEL.sub("", MARKER.sub("", sentence)).strip()


_ENDS_ON_COLON = re.compile(r"[:\uff1a]\**\s*$")  # "Here are the steps you should follow:"
_LETTER = re.compile(r"[^\W\d_]")


def says_something(text: str) -> bool:
    """Does `text` hold MIN_HELP letters outside its citation markers, and something with a
    letter beyond its list labels and lead-ins? "Here are the steps the student should
    follow: [1]\n\n5 [1]." does not; "Use the formula:\n x_{n+1} = x_n − f(x_n)/f'(x_n)"
    does."""
    said = [bare for s in sentences(text) if (bare := _bare(s))]
    content = [b for b in said if not _ENDS_ON_COLON.search(b) and _LETTER.search(b)]
    return bool(content) and sum(c.isalpha() for c in MARKER.sub("", text)) >= MIN_HELP


def asks(sentence: str) -> bool:
    """True when the sentence is a question, in bold or not ("**What theorem applies?**")."""
    return _bare(sentence).rstrip().rstrip("*_").rstrip().endswith(QUESTION_ENDS)


def new_results(sentence: str, given: set[float]) -> list[str]:
    """Numbers the sentence states as results that the student was not given: any new number
    but 0 and 1 in a result position ("= 12", "you get 12"), and outside one any new number
    but a small whole number (counts and ordinals: "two steps", "step 3")."""
    bare = _bare(sentence)
    out: list[str] = []
    for m in NUMBER.finditer(bare):
        token = m.group(0)
        values = numbers(token)
        if not values or values & (given | IDENTITIES):
            continue
        value = min(values)
        small = value == int(value) and abs(value) <= SMALL
        if not small or _RESULT_BEFORE.search(bare[: m.start()]):
            out.append(token)
    return out


def _answer_label(sentence: str) -> re.Match[str] | None:
    """Where a question is followed by its answer ("Question: ...? Answer: ..."), or a line
    that is an answer label."""
    bare = MARKER.sub("", sentence)
    return _ANSWER_LABEL.search(bare)


def _functions(text: str) -> list[str]:
    return [f for f in (_BLANKS.sub("", m.group(0)).lower().rstrip(".")
                        for m in _FUNCTION.finditer(text)) if len(f) >= 5]


def _sentence_violations(level: Level, sentence: str, facts: RungFacts,
                         given: set[float]) -> list[Violation]:
    out: list[Violation] = []
    if facts.answers and states_number(sentence, facts.answers, NUMBER.findall(facts.exercise)):
        out.append(Violation("states_answer", sentence, ", ".join(facts.answers[:4])))
    elif final := _computes_final(sentence, facts.results):
        out.append(Violation("states_answer", sentence, final))
    if sums := asserted_wrong(_bare(sentence)):
        out.append(Violation("wrong_sum", sentence, sums[0].text))
    if level == "example":
        own = sorted(numbers(_bare(sentence)) & facts.own_numbers())
        if own:
            out.append(Violation("same_numbers", sentence, ", ".join(_fmt(v) for v in own)))
        squeezed = _BLANKS.sub("", sentence).lower()
        same = [f for f in _functions(facts.exercise) if f in squeezed]
        if same:
            out.append(Violation("same_function", sentence, same[0]))
        return out
    if _answer_label(sentence):
        out.append(Violation("answer_given", sentence))
    found = new_results(sentence, given)
    if found:
        out.append(Violation("computed_result", sentence, ", ".join(found)))
    if wrong_values := _students_only(sentence, facts):
        out.append(Violation("student_value", sentence, ", ".join(wrong_values)))
    return out


def _students_only(sentence: str, facts: RungFacts) -> list[str]:
    """Numbers `sentence` states as results that only the student wrote: neither the
    exercise nor the worked solution has them ("The total number of towels is
    15", the student's sum, where the solution has 12), other than as the result of a
    computation that holds ("2000 + 1000 makes 3000"). Without a solution: none."""
    if not facts.solution or not facts.student:
        return []
    # not what the student was shown: the tutor's own "12 not 15" names the student's value
    known = numbers(facts.exercise) | numbers(facts.solution)
    bare = _bare(sentence)
    worked = {v for e in equations(bare) if e.right for v in numbers(e.stated)}
    theirs = numbers(facts.student) - known - IDENTITIES - worked
    return [m.group(0) for m in NUMBER.finditer(bare)
            if numbers(m.group(0)) & theirs and _RESULT_BEFORE.search(bare[: m.start()])]


def _computes_final(sentence: str, results: Sequence[str]) -> str:
    """The computation of `sentence` whose result is one the solution closes on ("" if none):
    carrying out the last operation gives the answer away even when the number itself is one
    of the exercise's data."""
    for e in equations(_bare(sentence)):
        if e.right and states_number(e.stated, results):
            return e.text
    return ""


def _fmt(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def check(level: Level, reply: str, facts: RungFacts) -> tuple[Violation, ...]:
    """Every rule of `level`'s contract that `reply` breaks (none for `solution`)."""
    if level == "solution":
        return ()
    given = facts.given()
    parts = [s for s in sentences(reply) if _bare(s)]
    out: list[Violation] = []
    for s in parts:
        out.extend(_sentence_violations(level, s, facts, given))
    own = _without_reason(reply, facts.reason)
    if facts.solution and copies_solution(own, facts.solution):
        out.append(Violation("copies_solution"))
    if level == "example":
        if story := _own_story(parts, facts):
            out.append(Violation("same_story", "", ", ".join(story)))
        return _example_whole(tuple(out), facts)
    if level == "guiding":
        if not any(asks(s) for s in parts):
            out.append(Violation("no_question"))
        elif not asks(parts[-1]):
            out.append(Violation("ends_in_statement", parts[-1]))
    return tuple(out)


def _without_reason(reply: str, reason: str) -> str:
    """`reply` without the solution's words a hint shows by design: the reason, and its
    formulas, which a translation of the hint keeps as written."""
    if not reason:
        return reply
    for shown in (reason, *mask_formulas(reason)[1]):
        reply = reply.replace(shown, " ")
    return reply


def _own_story(parts: Sequence[str], facts: RungFacts) -> list[str]:
    """The exercise's own names that an example's sentences before its last one use: it
    works on the student's problem, not another ("To find out how many boxes Meg needs, we
    divide the pencils Meg has …"); the last may invite the student to try them."""
    own = facts.own_names()
    if not own:
        return []
    used = {w for s in parts[:-1] for w in _CAPITALISED.findall(_bare(s)) if w in own}
    return sorted(used)


def _example_whole(found: tuple[Violation, ...], facts: RungFacts) -> tuple[Violation, ...]:
    """An example breaks the rule on numbers only when it reuses two of the problem's own
    numbers (or its only one): one shared value can be chance."""
    own = facts.own_numbers()
    used = {v for x in found if x.rule == "same_numbers" for v in numbers(x.detail)}
    if own and len(used) >= min(2, len(own)):
        return found
    return tuple(x for x in found if x.rule != "same_numbers")


def cut_back(level: Level, reply: str, facts: RungFacts) -> str:
    """The sentences of `reply` that keep `level`'s contract; an answer that follows a
    question in the same sentence goes and the question stays; a guiding reply stops at its
    last question. "" when what is left no longer helps (fewer than MIN_HELP letters, or
    guiding without a question)."""
    if level == "solution":
        return reply.strip()
    given = facts.given()
    reuse = {x.rule for x in check(level, reply, facts)}
    if "same_story" in reuse:  # no sentence of it is another problem's
        return ""
    kept: list[str] = []
    for s in sentences(reply):
        if not _bare(s):
            continue
        label = _answer_label(s) if level != "example" else None
        if label and label.start() > 0:
            s = _keep_markers(MARKER.sub("", s)[: label.start()].rstrip(), s)
        bad = {x.rule for x in _sentence_violations(level, s, facts, given)}
        if level == "example" and "same_numbers" not in reuse:
            bad.discard("same_numbers")
        if not bad:
            kept.append(s)
    if level == "guiding":
        last = max((i for i, s in enumerate(kept) if asks(s)), default=-1)
        kept = kept[: last + 1]
    text = _EMPTY_MATH.sub("", "".join(kept)).strip()
    return text if says_something(text) else ""


def _keep_markers(head: str, sentence: str) -> str:
    """`head` (a sentence cut short) with the sentence's citation markers after it."""
    markers = " ".join(m.group(0) for m in MARKER.finditer(sentence))
    return f"{head} {markers} " if markers else f"{head} "


_LEADING = re.compile(r"^\s*((?:\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]\s*)+)(?=\w)")


def cite(text: str, number: int | None) -> str:
    """`text` citing source `number` (the exercise): a marker after its first sentence when
    it does not cite it yet, and markers the reply opens with ("[1] To solve this …") moved
    there too."""
    if lead := _LEADING.match(text):
        parts = sentences(text[lead.end():])
        if parts:
            first = parts[0].rstrip()
            head = first.rstrip(".!?\u3002\uff01\uff1f")
            parts[0] = f"{head} {lead.group(1).strip()}{first[len(head):]} "
            text = "".join(parts).strip()
    if number is None or re.search(rf"\[(?:[\d\s,;]*\b)?{number}(?:\b[\d\s,;]*)?\]", text):
        return text
    parts = sentences(text)
    if not parts:
        return text
    first = parts[0]
    stripped = first.rstrip()
    tail = first[len(stripped):]
    head = stripped.rstrip(".!?\u3002\uff01\uff1f")
    ends = stripped[len(head):]
    parts[0] = f"{head} [{number}]{ends}{tail or ' '}"
    return "".join(parts).strip()


def contract_lines(found: Sequence[Violation]) -> str:
    """The violations as lines for the rewrite prompt (each rule once per sentence)."""
    seen: list[str] = []
    for v in found:
        line = f"- {v.describe()}"
        if line not in seen:
            seen.append(line)
    return "\n".join(seen)
