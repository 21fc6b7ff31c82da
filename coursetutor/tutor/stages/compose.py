"""Stage: compose. The model writes short statements from the evidence sentences alone,
under the statements contract (statements.py: a grammar on llama.cpp, a JSON schema on the
servers); each statement is checked against its own sentences (statement_check.py) as soon
as it is closed, and shown only once it passed, in the student's language, citing the line
it restates. A reply that would say nothing never ships: with every statement removed the
model writes once more from the best sentence alone, and as a last resort that sentence is
quoted. Past the turn's deadline the reply ends with what is checked so far, and says so."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Generator, Iterator, Sequence
from difflib import SequenceMatcher

from ...errors import BackendError, ModelBusyError
from ...ingest.tex_unicode import to_unicode
from ...llm import GenParams, Message
from ...types import Citation, MetaEvent, StreamEvent, TokenEvent
from .. import prompts
from ..check import CheckResult, Verdict, model_judge
from ..citations import hit_citation
from ..claims import sentences
from ..glossary import dropped
from ..left_out import names_left_out
from ..pedagogy import level_hint
from ..pipeline import Reply
from ..replies import language_name, reply
from ..reply_language import checked, in_script, keeps_terms, translate_reply
from ..sentences import (
    Line,
    asks_definition,
    asks_proof,
    asks_which,
    asks_yes_no,
    concludes,
    has_prose,
    is_proof,
    refers_back,
    states_result,
    steps_wanted,
    unasked,
    without_contrast,
)
from ..statement_check import StatementVerdict, check_statements, without_own_sentences
from ..statements import MAX_STATEMENTS, Statement, StatementStream, parse, schema
from ..terms import cites_result, named_results, result_labels
from ..whole import complete, every_item
from ..wording import dangles
from .find import not_covered
from .select import Selected
from .tools import Tools
from .write import native_instruction

TOKENS = 60  # completion tokens per statement the model may write
# a "how was it proved" question: the small model restated the theorem ("介值定理是用定理 3.2.4
# 的证明方法证明的") where the evidence's proof line says how ("Proof. 区间套, …")
PROOF_SHAPE = ("The student asks how a result is proved: restate the steps of the proof (the "
               "evidence sentence that begins with Proof, Dimostrazione or 证明), in order, "
               "as 1 to 4 statements, with the method it uses first. Do not restate the "
               "theorem itself.")

# the second attempt, from the best sentence alone: the model's own paraphrase of it was
# removed ("a technique … used to improve its performance on a different task" for "leverage
# the knowledge acquired … on another task"), so it is asked to keep the sentence's words
CLOSE_SHAPE = ("Answer with 1 or 2 statements that say what the evidence sentence says, in "
               "its own words as far as the language allows: keep its terms, numbers and "
               "formulas as written and add nothing of your own.")

# the second attempt from a labelled result: asked for the sentence in its own words, the
# model wrote "Il teorema di Lagrange è un teorema che fornisce una relazione tra la derivata
# di una funzione e il valore della funzione a un punto intermedio" twice from "Teorema 43 (di
# Lagrange). Sia f … Se: f è continua in [a,b], f è derivabile su (a,b). Allora: ∃ c∈ (a,b):
# f'(c)=(f(b)−f(a))/(b−a)"
RESULT_SHAPE = ("The evidence sentence states a result. Restate it as 1 statement of the "
                "form \"if <what it assumes>, then <what it concludes>\", in the student's "
                "language, with its formulas exactly as written. Do not describe the result in "
                "general words.")

# the first attempt when the student asks what a labelled result says and the best sentence
# states it: asked for 1 to 3 statements, the model wrote "se una funzione continua in un
# intervallo [a, b] ha massimo e minimo, esso ha un unico punto di massima" from "Teorema 34
# (di Weierstrass). Sia f:[a,b]→ ℝ, continua. Allora f ha sia massimo che minimo in [a,b]."
RESULT_FIRST_SHAPE = ("The first evidence sentence states the result the student asks about. "
                      "Restate it first, as 1 statement of the form \"if <what it assumes>, "
                      "then <what it concludes>\", with its formulas exactly as written; then "
                      "at most 2 short statements of what the other sentences add to it.")

# the second attempt for a yes/no question: asked for the sentence in its own words, the
# model wrote "La serie armonica converge se e solo se 1/k+1/(k+1)+…" from "… Cauchy non è
# rispettato quindi e la serie diverge."
YES_NO_SHAPE = ("The student asks a yes-or-no question, and the evidence sentence's last "
                "words answer it: the answer may be no. Write 1 statement that repeats those "
                "last words, then 1 that gives the reason the sentence gives before them. Add "
                "nothing of your own.")

# one more statement, from a cited sentence whose names the statements left out (left_out.py):
# "… uses a step size α > 0" from "Use step size α > 0 … to satisfy Wolfe conditions (or
# just Armijo rule)", and no word of the conditions
NAMES_SHAPE = ("Answer with 1 statement that says what the evidence sentence says about "
               "{names}, with the sentence's own words for them.")

# "哪些定理与区间套定理等价？": the model named one of the five its sentence lists
ALL_SHAPE = (" The question asks which ones: name every one the evidence gives, each "
             "condition or item as written.")

@dataclasses.dataclass
class _Shown:
    """What the student has been shown so far: kept statements and the lines they cite."""

    lines: dict[str, Line]
    steps: bool
    numbers: dict[str, int] = dataclasses.field(default_factory=dict)  # S id -> [n]
    texts: list[str] = dataclasses.field(default_factory=list)
    said: list[str] = dataclasses.field(default_factory=list)  # the kept statements, bare
    # terms of the question its translation left out: still what the statements are about
    # ("감쇠 …" searched as "… the Newton-Raphson method?": damped)
    unsaid: tuple[str, ...] = ()
    verdicts: list[StatementVerdict] = dataclasses.field(default_factory=list)

    def add(self, text: str, evidence: Sequence[str]) -> str:
        """The statement as shown, with its markers; numbers lines in order of first use."""
        for sid in evidence:
            self.numbers.setdefault(sid, len(self.numbers) + 1)
        markers = "".join(f"[{self.numbers[sid]}]" for sid in dict.fromkeys(evidence))
        body = text.rstrip()
        if self.steps:
            piece = f"{len(self.texts) + 1}. {body} {markers}"
            out = piece if not self.texts else f"\n{piece}"
        else:
            piece = f"{body} {markers}"
            out = piece if not self.texts else f" {piece}"
        self.texts.append(piece)
        return out

    @property
    def text(self) -> str:
        return ("\n" if self.steps else " ").join(self.texts)

    def citations(self) -> tuple[Citation, ...]:
        return tuple(hit_citation(number, self.lines[sid].hit, self.lines[sid].text)
                     for sid, number in sorted(self.numbers.items(), key=lambda kv: kv[1]))


def compose(tools: Tools, s: Selected) -> Generator[StreamEvent, None, Reply]:
    f = s.found
    cat, ev, u = f.cat, f.evidence, f.understood
    o = u.recalled.opened
    yield MetaEvent(o.session_id, cat.category, cat.intent, "", ev.grade, cat.language)
    lines = {line.id: line for line in s.selection.lines}
    pivot = _pivot(tools, s)
    shown = _Shown(lines, steps_wanted(o.question, cat.intent) and len(lines) > 1,
                   unsaid=tuple(dropped(u.translated, o.question, cat.language, pivot))
                   if pivot else ())
    deadline = o.started + tools.settings.answer_deadline_s
    laps: dict[str, float] = {}
    complete = True
    first: float | None = None
    removed: list[str] = []
    best = _closest(s.selection.lines, o.question, cat.intent)
    closest = _with_conclusion(best, s.selection.lines)
    first_writing = _Writing()  # the first attempt's, from every evidence sentence
    for attempt, close in ((tuple(lines.values()), False), (closest, True)):
        if shown.texts:
            break
        if time.perf_counter() >= deadline:
            complete = False
            break
        writing = _Writing()
        held: list[Statement] = []  # waiting for the model, which is still writing
        if not close:
            first_writing = writing
        for statement in _writing(tools, s, attempt, deadline, writing, pivot, close):
            shown_now = not held and _show(tools, s, shown, statement, removed, True, pivot)
            if shown_now is None or held:
                held.append(statement)  # the model must judge it: it and all after it wait
            elif shown_now:
                first = first or time.perf_counter()
                yield TokenEvent(shown_now)
        for statement in held:  # the model has finished writing: it judges them now
            if text := _show(tools, s, shown, statement, removed, False, pivot):
                first = first or time.perf_counter()
                yield TokenEvent(text)
        complete = complete and writing.finished
    if shown.texts and complete and asks_definition(o.question, cat.intent) \
            and not shown.steps and best.id not in shown.numbers:
        # what is asked is what the best sentence says, and no kept statement said it
        complete = yield from _more(tools, s, shown, removed, deadline, pivot, closest)
    if shown.texts and complete:
        complete = yield from _names_said(tools, s, shown, removed, deadline, pivot)
    if not shown.texts and complete and ev.deferred:
        # the statements were to decide whether the passages, in another language than the
        # question, cover it (evidence.py), and none held: they do not
        return not_covered(o.session_id, f, meta_sent=True)
    quoted = not shown.texts
    if quoted:  # nothing the model wrote held: the best sentence as the page says it
        shown.numbers[best.id] = 1
        text = f"{reply('quote_first', cat.language)}\n> {best.text} [1]"
        first = first or time.perf_counter()
        yield TokenEvent(text)
        if (said := _quote_translated(tools, best, cat.language, deadline)):
            text += f"\n{said}"
            yield TokenEvent(f"\n{said}")
    else:
        text = shown.text
    laps["first_token"] = round(((first or time.perf_counter()) - o.started) * 1000, 1)
    # before it: the prompt evaluated (the model's first token), the first statement written
    for lap, at in (("prompt_evaluated", first_writing.first_piece),
                    ("first_written", first_writing.first_closed)):
        if at is not None:
            laps[lap] = round((at - o.started) * 1000, 1)
    tail: tuple[str, ...] = ()
    if not complete:
        marker = reply("incomplete", cat.language)
        text, tail = f"{text}\n\n{marker}", (f"\n\n{marker}",)
    verdicts = tuple(Verdict(v.statement.text, v.kept, similarity=round(v.similarity, 4),
                             judged=v.judged, note=v.reason) for v in shown.verdicts)
    check = CheckResult(text, tuple(removed), verdicts, quote_first=quoted)
    return Reply(cat, ev, text, shown.citations(), shown=True, tail=tail, complete=complete,
                 context=tuple(dict.fromkeys(line.hit.chunk.id for line in lines.values())),
                 check=check, tier=f.tier, laps=laps,
                 note="" if complete else "the answer deadline was reached")


def _names_said(tools: Tools, s: Selected, shown: _Shown, removed: list[str],
                deadline: float, pivot: str) -> Generator[StreamEvent, None, bool]:
    """One more statement, checked and shown like the others, from the first cited sentence
    whose names the statements left out (left_out.py); False when the deadline stopped it."""
    gap = names_left_out(shown.said, [shown.lines[sid] for sid in shown.numbers],
                         _asked(s, pivot))
    if gap is None or time.perf_counter() >= deadline:
        return True
    line, left = gap
    return (yield from _more(tools, s, shown, removed, deadline, pivot, (line,), names=left))


def _more(tools: Tools, s: Selected, shown: _Shown, removed: list[str], deadline: float,
          pivot: str, lines: Sequence[Line],
          names: Sequence[str] = ()) -> Generator[StreamEvent, None, bool]:
    """The statements of one more attempt from `lines` alone (the sentence in its own
    words, or what it says about `names`), checked and shown like the others; False when
    the deadline stopped it."""
    if time.perf_counter() >= deadline:
        return True
    writing = _Writing()
    for statement in _writing(tools, s, lines, deadline, writing, pivot, close=not names,
                              names=names):
        if text := _show(tools, s, shown, statement, removed, False, pivot):
            yield TokenEvent(text)
    return writing.finished


REPEATED = 0.75  # share of a statement's letters in runs an earlier one wrote the same
RUN = 8  # letters of a run, at least


def repeats(text: str, earlier: Sequence[str]) -> bool:
    """Does `text` say again what an earlier statement said: the same words, a part of
    them, or the same sentence under another opening ("In practice, we get d[t] by solving
    the linear system … or iterative methods." after "The Newton-Raphson direction is
    computed by solving the linear system … or iterative methods.")?"""
    mine = _bare(text)
    return bool(mine) and any(mine in _bare(e) or _bare(e) in mine
                              or _shared(mine, _bare(e)) >= REPEATED for e in earlier)


def _shared(mine: str, theirs: str) -> float:
    runs = SequenceMatcher(None, mine, theirs, autojunk=False).get_matching_blocks()
    return sum(run.size for run in runs if run.size >= RUN) / len(mine)


def _bare(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


class _Busy(Exception):
    """The model is still writing and has no free context to judge with: a statement that
    needs it waits until the writing is done."""


@dataclasses.dataclass
class _Writing:
    finished: bool = True  # the model ended before the deadline
    # when the model wrote its first token (its prompt evaluated) and closed its first
    # statement (perf_counter), for the turn's laps: what comes before the first word
    first_piece: float | None = None
    first_closed: float | None = None


def _pivot(tools: Tools, s: Selected) -> str:
    """The course's language when the statements are written in it and translated once
    checked (`answer_across = "pivot"`): the question was translated into it, and every
    evidence sentence is in it. "" when they are written in the student's language."""
    u = s.found.understood
    if tools.settings.answer_across != "pivot" or not u.translated or not u.translates:
        return ""
    same = all(line.language == u.searched for line in s.selection.lines)
    return u.searched if s.selection.lines and same else ""


def _show(tools: Tools, s: Selected, shown: _Shown, statement: Statement,
          removed: list[str], busy: bool, pivot: str = "") -> str | None:
    """The statement as the student sees it once checked ("" when it is removed), or None
    when deciding it needs the model while the model is `busy` writing (a yes/no judgement,
    a translation into the student's script). A statement written in the course's language
    (`pivot`) is checked against its sentences in that language, then translated; a
    translation that lost a name or a number keeps the checked statement after it."""
    f = s.found
    cat, u = f.cat, f.understood
    question = _asked(s, pivot)
    written = pivot or cat.language
    lines = {line.id: line for line in s.selection.lines}
    if repeats(statement.text, shown.said):  # small models loop on one sentence
        removed.append(statement.text)
        return ""
    statement = _whole(statement, lines, f"{question} {u.translated}", written, shown.steps)
    statement = without_own_sentences(statement, lines, question, written)
    about = " ".join([question, *shown.unsaid])
    try:
        if len(_parts(statement.text)) > 1:  # each of its sentences on its own
            verdict = _by_sentence(tools, statement, lines, about, written, busy, removed)
            statement = verdict.statement
        else:
            verdict = _checked(tools, statement, lines, about, written, busy)
    except _Busy:
        return None
    # the course's name of a result the statement cites by number (not checked: the
    # course's own label, "引理 5.1.1 (Fermat 中值)")
    text = statement.text
    if verdict.kept and cites_result(text):
        text = named_results(text, result_labels(tools.ws.store, tools.ws.tenant,
                                                 u.recalled.opened.course))
    if verdict.kept and (pivot or (checked(cat.language)
                                   and not in_script(text, cat.language))):
        try:
            text = _translated(tools, text, cat.language, pivot, wait=not busy)
        except ModelBusyError:
            return None
    shown.verdicts.append(verdict)
    if not verdict.kept:
        removed.append(statement.text)
        return ""
    shown.said.append(statement.text)
    return shown.add(text, verdict.statement.evidence)  # as re-cited by the check


def _by_sentence(tools: Tools, statement: Statement, lines: dict[str, Line], question: str,
                 language: str, busy: bool, removed: list[str]) -> StatementVerdict:
    """A statement of several sentences, checked one sentence at a time: the sentences that
    hold, as one statement (the others booked as removed), or the whole statement removed
    when none does. The model often opens with a gloss of its own and then restates its line
    ("The Hessian matrix is a crucial component …, as it provides the direction of steepest
    descent. However, calculating the Hessian can be computationally expensive …"): checked
    whole, the gloss either rode on the restatement's words or took it out with it. A
    sentence that points back ("This …") stands only after the one it points to; "However,"
    loses its contrast with a sentence left out."""
    parts = _parts(statement.text)
    kept: list[StatementVerdict] = []
    held = False  # the sentence before was kept
    out: list[str] = []
    for part in parts:
        if refers_back(part) and not held:
            out.append(part)
            continue
        text = part if held else without_contrast(part)
        verdict = _checked(tools, dataclasses.replace(statement, text=text), lines, question,
                           language, busy)
        held = verdict.kept
        if held:
            kept.append(verdict)
        else:
            out.append(part)
    if not kept:
        return StatementVerdict(statement, False, reason="no sentence of it holds")
    removed.extend(out)
    evidence = tuple(dict.fromkeys(i for v in kept for i in v.statement.evidence))
    text = " ".join(v.statement.text for v in kept)
    return dataclasses.replace(kept[0], statement=dataclasses.replace(
        statement, text=text, evidence=evidence), judged=any(v.judged for v in kept))


def _parts(text: str) -> list[str]:
    """The sentences of a statement, a formula without a word of prose kept with the
    sentence it completes ("… il numero minimo dei maggioranti di A. $$\\alpha=\\sup A$$",
    the formula whole.py gave the sentence that introduced it)."""
    out: list[str] = []
    for part in sentences(text):
        if out and not has_prose(part):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


def _asked(s: Selected, pivot: str) -> str:
    """The question the statements answer: as translated into the course's language when
    they are written in it (`pivot`), else as the student asked it."""
    u = s.found.understood
    return u.translated if pivot else u.recalled.opened.question


def _translated(tools: Tools, text: str, language: str, pivot: str, wait: bool = True) -> str:
    """A kept statement in the student's language (as written when the model gives no
    translation); one written in the course's language (`pivot`) whose translation lost a
    name or a number, or stops before its end ("… 이를 이동하면 .", "if we move it ."), keeps
    itself after the translation, in parentheses."""
    translated = translate_reply(tools.router, text, language_name(language), tools.log,
                                 wait, source=pivot)
    if not translated:
        return text
    if pivot and (not keeps_terms(text, translated) or (
            dangles(translated, language) and not dangles(text, pivot))):
        return f"{translated} ({text})"
    return translated


def _quote_translated(tools: Tools, line: Line, language: str, deadline: float) -> str:
    """The quoted line in the student's language, when the page writes another: a Korean
    student asking "전이 학습이란 무엇인가요?" was shown the transcript's English line alone.
    "" when the line is in the student's language, the deadline has passed or the model
    gives no translation."""
    if not line.language or line.language == language or time.perf_counter() >= deadline \
            or not tools.router.enabled:
        return ""
    try:
        said = translate_reply(tools.router, to_unicode(line.text), language_name(language),
                               tools.log, source=line.language)
    except BackendError:
        return ""  # the quote stands alone
    return f"({said.strip()})" if said.strip() else ""


def _closest(lines: Sequence[Line], question: str, intent: str) -> Line:
    """The one sentence the second attempt writes from, and the quote of last resort: the
    proof's first sentence for a question on how a result is proved (given the theorem
    alone, the model wrote "介值定理是用定理 3.2.4 的证明方法证明的"), else the best that
    opens no proof (for "确界原理是什么？", "定理 1.3.2 (确界存在) …", not the proof line ranked
    above it, "*→ Proof.* 由上确界定义, …", from which the model wrote "界原理是定义中所提到的
    上确界定义")."""
    proof = asks_proof(question, intent)
    return next((line for line in lines if is_proof(line.text) is proof), lines[0])


def _with_conclusion(best: Line, lines: Sequence[Line]) -> tuple[Line, ...]:
    """The lines the second attempt writes from: the best one, and when it lists a result's
    hypotheses, the evidence sentence of its passage that concludes them ("Teorema 45 (di De
    L'Hopital). Siano f,g … con: …" and "Allora se esiste il: lim f'/g' = L …")."""
    after = next((line for line in lines if line.hit.chunk.id == best.hit.chunk.id
                  and line is not best and concludes(line.text)), None)
    return (best,) if after is None or concludes(best.text) else (best, after)


def _writing(tools: Tools, s: Selected, lines: Sequence[Line], deadline: float,
             writing: _Writing, pivot: str = "", close: bool = False,
             names: Sequence[str] = ()) -> Iterator[Statement]:
    """The statements the model writes from `lines`, each as soon as it is closed (the
    model waits while it is checked); `writing.finished` says whether it ended before the
    deadline. A reply that is not the contract's JSON is asked for once more. `close`: the
    second attempt, after every statement of the first was removed, asks for the sentence
    in its own words; `names`: what the sentence says about the names the statements left
    out."""
    ids = [line.id for line in lines]
    most = min(MAX_STATEMENTS, 1 + len(lines))
    params = GenParams(temperature=tools.settings.llm_temperature,
                       max_tokens=min(TOKENS * most + 40, tools.settings.llm_max_tokens),
                       schema=schema(ids, most))
    stream = StatementStream(ids)
    wrote = False
    try:
        for piece in _pieces(tools, _messages(tools, s, lines, pivot, close, names), params):
            writing.first_piece = writing.first_piece or time.perf_counter()
            for statement in stream.feed(piece):
                wrote = True
                writing.first_closed = writing.first_closed or time.perf_counter()
                yield statement
            if time.perf_counter() >= deadline:
                writing.finished = False
                return
    except BackendError:
        if not wrote:
            raise
        writing.finished = False
        return
    if wrote:
        return
    retry = prompts.render("statements_retry", evidence=_evidence(lines),
                           question=(s.found.understood.translated if pivot else
                                     s.found.understood.recalled.opened.question),
                           most=most, language=language_name(pivot or s.found.cat.language))
    raw = tools.router.complete("answer", [Message("user", retry)], GenParams(
        temperature=0.0, max_tokens=params.max_tokens, json=True), tools.log).text
    yield from parse(raw, ids) or []


def _pieces(tools: Tools, messages: Sequence[Message], params: GenParams) -> Iterator[str]:
    deltas = tools.router.stream("answer", messages, params, tools.log)
    try:
        for delta in deltas:
            if delta.text:
                yield delta.text
    finally:
        deltas.close()  # a deadline stops the model now, freeing it for the next turn


def _messages(tools: Tools, s: Selected, lines: Sequence[Line], pivot: str = "",
              close: bool = False, names: Sequence[str] = ()) -> list[Message]:
    f = s.found
    r, cat = f.understood.recalled, f.cat
    o = r.opened
    language = pivot or cat.language
    earlier = "".join(f"Student: {h.question}\n" for h in r.history[-2:])
    shape = shape_for(o.question, cat.intent, lines, close, names)
    user = prompts.render(
        "statements", evidence=_evidence(lines),
        history=f"\nEarlier in this conversation:\n{earlier}" if earlier else "",
        question=f.understood.translated if pivot else o.question, shape=shape,
        level=r.level, level_hint=level_hint(r.level), language=language_name(language),
        native=native_instruction(language))
    return [Message("system", prompts.load("statements_system")), Message("user", user)]


def shape_for(question: str, intent: str, lines: Sequence[Line], close: bool = False,
              names: Sequence[str] = ()) -> str:
    """What the prompt asks the statements to be, for the attempt's `lines`."""
    if names:
        return NAMES_SHAPE.format(names=", ".join(names))
    if close:
        return _close_shape(lines[0].text, question)
    if asks_proof(question, intent):
        return PROOF_SHAPE
    if asks_definition(question, intent) and states_result(lines[0].text):
        return RESULT_FIRST_SHAPE
    if steps_wanted(question, intent) and len(lines) > 1:
        # steps of one sentence are the model's own: asked "Why can Newton-Raphson diverge?"
        # with "Disadvantage: For “bad” starting points: Newton-Raphson may diverge" alone,
        # it wrote a reason and an oscillation the slide never gives
        return ("Explain it as 2 to 5 statements that are the steps of the explanation, in "
                "the order the evidence gives them.")
    return ("Answer with 1 to 3 short statements: what the evidence says that answers the "
            "question, first the direct answer." + (ALL_SHAPE if asks_which(question) else ""))


def _close_shape(sentence: str, question: str) -> str:
    """What the second attempt, from the best sentence alone, asks for: a labelled result's
    hypotheses and conclusion, a yes/no question's verdict, else the sentence in its own
    words."""
    if states_result(sentence):
        return RESULT_SHAPE
    return YES_NO_SHAPE if asks_yes_no(question) else CLOSE_SHAPE


def _evidence(lines: Sequence[Line]) -> str:
    return "\n".join(f"[{line.id}] ({line.hit.locator.label()}) "
                     f"{to_unicode(unasked(line.text))}" for line in lines)


def _whole(statement: Statement, lines: dict[str, Line], question: str,
           language: str, steps: bool = False) -> Statement:
    """The statement with the formula its sentences give and it leaves out (whole.py): a
    lead-in completed, a formula asked for given as the page writes it, the whole list its
    sentence gives for a question that asks which ones (`question`: as asked and as
    searched)."""
    if statement.points:  # it sends to its sentence: nothing of it to complete
        return statement
    ids = [i for i in statement.evidence if i in lines]
    own = [lines[i].text for i in ids]
    if asks_which(question) and (listed := every_item(statement.text, own)):
        n, whole = listed  # the sentence's whole list, not the part the model wrote
        return dataclasses.replace(statement, text=whole, evidence=(ids[n],))
    text = complete(statement.text, own, language, question, steps)
    return statement if text is None else dataclasses.replace(statement, text=text)


def _checked(tools: Tools, statement: Statement, lines: dict[str, Line], question: str,
             language: str, busy: bool = False) -> StatementVerdict:
    """The statement's verdict; raises _Busy when it needs the model's judgement while the
    model is `busy` writing and has no free context (the in-process model judges in its
    second context while the stream of statements is paused)."""
    settings = tools.settings
    if not settings.answer_check:
        return StatementVerdict(statement, True)
    judge = (model_judge(tools.router, tools.log, wait=not busy)
             if settings.answer_check_judge else None)
    try:
        return check_statements([statement], lines, question, language, tools.ws.embedder,
                                judge)[0]
    except ModelBusyError as exc:
        raise _Busy from exc
