"""The check of one statement against its own evidence sentences, and nothing else.

A statement names the sentences it restates, so it is compared with those alone (not with
every passage, where scattered words can back anything):
1. its numbers, formulas and named terms must be in its sentences or the question, exactly
   (maths normalised: `claims.missing_terms`);
2. the ranks it names ("second kind", "第二类", "제2종") must be its sentences' too: a
   statement of the second kind from a sentence defining the first shares every other word;
3. a statement that says a phrase of its own twice is a loop, not a statement, and one
   every word of which is the question's says nothing ("介值定理是用介值定理证明的"); one that
   stops before it says anything ("The rule is:", "è definita come", "defined as
   follows.") or holds no words is no statement (compose first completes one whose
   sentence has the formula it introduces: whole.py);
4. in the sentences' language, a polarity or causal word ("not", "only", "because") its
   sentences do not have changes what they say, and so does a negation it drops in Chinese
   or Japanese ("左右极限存在" from "至少一侧极限不存在");
5. in the sentences' language, a statement most of whose words are not in its sentences
   says something of its own ("Newton-Raphson finds the roots of a function" for a slide on
   the cost of the Hessian), however close its embedding, and one that leaves out the
   variant its slide item is about states the variant as the subject itself ("the
   Newton-Raphson update rule is x[t+1] = x[t] + αd[t]" from "Relaxed/Damped
   Newton-Raphson: …" on a slide titled NEWTON-RAPHSON);
6. the e5 cosine to its closest sentence decides the rest: at or above KEEP it restates
   them, below DROP it says something else; between the two the model, asked yes or no on
   that one short pair, decides when a judge is configured, else the statement is kept only
   above the midpoint. Across languages (a Korean statement of an English slide) the
   thresholds are the cross-lingual ones: a correct translation scores lower than a
   same-language restatement, and must still pass. A statement that negates where its
   sentences do not, or drops the negation they all have ("발산하지 않습니다" from "can
   diverge"), goes to the model whatever its cosine: e5 barely sees a negation, and a
   translation moves one into a word often enough (XQuAD-R: 2% of the German sentences of
   an English one, 11% of the Chinese) that it cannot decide alone.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

import numpy as np

from ..ingest.tex_unicode import to_unicode
from ..retrieval.embed import EmbeddingModel
from ..retrieval.language import ANY_STOPWORD
from ..retrieval.tokenize import has_cjk, tokenize
from .arithmetic import asserted_wrong
from .check import WRONG_SUM, Judge
from .claims import formulas, missing_terms, sentences, skeleton
from .exercise import without_reference
from .markers import MARKER
from .ordinals import unbacked_ordinals
from .sentences import Line, unlabelled, variant_words
from .statements import Statement
from .whole import lead_in
from .wording import (
    answers_polar,
    dropped_negation,
    negates,
    spelled_symbols,
    unbacked_polarity,
)

# e5 cosines, statement to its own sentence (course pack and sample course, docs/tutor.md)
KEEP = 0.88
DROP = 0.80
# across languages: chosen on half of the XQuAD-R paragraphs, measured on the other half
# (`coursetutor eval across`, docs/evaluation.md): the midpoint 0.795 keeps 95% of the correct
# translations of every language pair, at most 5% of other claims reach KEEP, and the model
# judges most of the rest
KEEP_ACROSS = 0.855
DROP_ACROSS = 0.735
MIN_LETTERS = 8
REPEAT_CJK = 8  # characters of a phrase said twice
REPEAT_WORDS = 5  # words of a phrase said twice
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
OVERLAP_LOW = 0.5  # share of a same-language statement's words in its sentences: below, removed
AVAILABLE = 4  # words of its own a sentence has beyond the question ...
CARRIED = 2  # ... of which a statement with no number or formula of theirs carries this many
_RELATION = re.compile(r"[=<>≤≥≠≈∈∉⊂⊆→⇒∃∀]")
_RESULT_NUMBER = re.compile(r"(?:定理|引理|定义|推论|命题|정리|보조정리|정의|\b(?:theorem|lemma|"
                            r"definition|corollary|proposition|teorema|definizione|"
                            r"corollario|proposizione|satz|définition|théorème)\b)\s*"
                            r"\d+(?:\.\d+)*", re.I)
# the connectives a Chinese restatement wraps around its sentence's words ("因此，我们可以通过
# 考虑有限开覆盖的 Lebesgue 数来证明这一点" for "考虑有限开覆盖的 Lebesgue 数即可"; "如果 … 满足 …
# 那么" around a definition): counted, its words are mostly not its sentence's, character
# pairs being words there
_FILLER_CJK = re.compile("因此|所以|因而|于是|从而|我们可以|我们|可以|通过|来证明|这一点|"
                         "也就是说|换句话说|是指|如果|那么|满足|对于")


@dataclasses.dataclass(frozen=True)
class StatementVerdict:
    """One statement, checked: kept or not, and why not."""

    statement: Statement
    kept: bool
    similarity: float = 0.0
    reason: str = ""  # why it was removed
    judged: bool = False


def _judged(statement: Statement, question: str) -> str:
    """What the model judges: the statement without the exercise the question names too
    ("The exercise 1 of sheet 9 minimizes the Brier-loss": its sentence names no exercise)."""
    return without_reference(statement.text, question)


def check_statements(statements: Sequence[Statement], lines: Mapping[str, Line],
                     question: str, language: str, embedder: EmbeddingModel,
                     judge: Judge | None = None, max_judged: int = 4) -> list[StatementVerdict]:
    """Each statement against the evidence sentences it names."""
    if not statements:
        return []
    vectors = embedder.embed_passages(s.text for s in statements)
    out = []
    judged = 0
    for statement, vector in zip(statements, vectors, strict=True):
        own = [lines[i] for i in statement.evidence if i in lines]
        others = [line for i, line in lines.items() if i not in statement.evidence]
        verdict = _terms_and_form(statement, own, question, language, others)
        if verdict is None:
            sims = embedder.embed_sentences(line.text for line in own) @ vector
            similarity = float(np.max(sims))
            across = any(line.language and line.language != language for line in own)
            keep, drop = (KEEP_ACROSS, DROP_ACROSS) if across else (KEEP, DROP)
            # a statement that negates where its sentences do not (or the other way round)
            # may say their opposite however close the cosine: the model decides it
            flipped = across and negation_flipped(statement.text, own, language)
            if flipped and judge is not None and judged < max_judged:
                judged += 1
                kept = judge(_judged(statement, question),
                             " ".join(line.text for line in own)) is not False
                verdict = StatementVerdict(
                    statement, kept, similarity,
                    "" if kept else "the model judged it the opposite of its sentences",
                    judged=True)
            elif flipped and similarity < keep:
                verdict = StatementVerdict(statement, False, similarity,
                                           "negates what its sentences do not, or the reverse")
            elif similarity >= keep:
                verdict = StatementVerdict(statement, True, similarity)
            elif similarity < drop:
                verdict = StatementVerdict(statement, False, similarity,
                                           "says something else than its sentences")
            elif judge is not None and judged < max_judged:
                judged += 1
                said = judge(_judged(statement, question), " ".join(line.text for line in own))
                kept = said is not False  # no verdict: the scores put it close enough
                verdict = StatementVerdict(statement, kept, similarity,
                                           "" if kept else "the model judged it unsupported",
                                           judged=True)
            else:
                kept = similarity >= (keep + drop) / 2
                verdict = StatementVerdict(statement, kept, similarity,
                                           "" if kept else "too far from its sentences")
        if not verdict.kept and verdict.reason.startswith(_ELSEWHERE):
            verdict = _recited(statement, vector, lines, language, embedder) or verdict
        out.append(verdict)
    return out


# the reasons a statement may have been compared with the wrong sentence: what it says is
# not in the sentences it names (not a loop, a lead-in or an echo of the question)
_ELSEWHERE = ("not in its sentences", "most of its words", "says something else",
              "too far from")


def _recited(statement: Statement, vector: np.ndarray, lines: Mapping[str, Line],
             language: str, embedder: EmbeddingModel) -> StatementVerdict | None:
    """The statement kept with the one other evidence sentence it restates, when it named
    the wrong one (the model cited the theorem, S1, for the proof's words, S3): that sentence
    must pass every check alone, its cosine at KEEP, without the model's judgement, and with
    nothing taken from the question (a rank the question names is restated only from a
    sentence of that rank: "第二类间断点是指…左右极限存在，但不相等" re-cited to the sentence on
    removable discontinuities, which names no rank, passed the rank check by the question's
    "第二类")."""
    passing = [(dataclasses.replace(statement, evidence=(sid,)), line)
               for sid, line in lines.items() if sid not in statement.evidence]
    passing = [(other, line) for other, line in passing
               if _terms_and_form(other, [line], "", language) is None]
    if not passing:
        return None
    sims = embedder.embed_sentences(line.text for _, line in passing) @ vector  # one batch
    for (other, line), similarity in zip(passing, sims, strict=True):
        across = bool(line.language) and line.language != language
        if float(similarity) >= (KEEP_ACROSS if across else KEEP):
            return StatementVerdict(other, True, float(similarity))
    return None


def content_words(text: str, language: str) -> set[str]:
    """The words the overlap with a statement's sentences counts, LaTeX read as the symbols
    it writes (a statement's "α" is its sentence's `\\alpha`)."""
    return {w for w in tokenize(to_unicode(text), language) if w not in ANY_STOPWORD}


def negation_flipped(text: str, own: Sequence[Line], language: str) -> bool:
    """Across languages: the statement negates and none of its sentences does, or its
    sentences all negate and it does not (False where a language has no negation list)."""
    mine = negates(text, language)
    theirs = [negates(line.text, line.language or language) for line in own]
    if mine is None or None in theirs:
        return False
    return mine != any(theirs) if mine else all(theirs)


def echoes(text: str, question: str, language: str) -> bool:
    """Does the statement say nothing the question does not: every word of it (every
    character, in Chinese or Japanese) is the question's, with no number, formula or
    polarity word of its own ("介值定理是用介值定理证明的" for "介值定理是用什么方法证明的？",
    "闭区间上的连续函数一致连续" for "为什么闭区间上的连续函数一致连续？")?"""
    # a result's number names a result and says nothing of it ("介值定理是用定理 3.2.4 的证明
    # 方法证明的": the theorem is proved by the proof of the theorem)
    bare = _RESULT_NUMBER.sub(" ", MARKER.sub(" ", text))
    if missing_terms(bare, [question]) or unbacked_polarity(bare, question, language):
        return False
    if has_cjk(bare):
        mine = {c for c in bare if c.isalnum()}
        return bool(mine) and mine <= set(question)
    words = {w for w in tokenize(bare, language) if w not in ANY_STOPWORD}
    return bool(words) and words <= set(tokenize(question, language))


def dropped_condition(text: str, own: Sequence[Line]) -> str:
    """The condition of a theorem its sentence sets out as a bare formula ("Se: - f è continua
    in [a,b] - f è derivabile su (a,b) - f(a)=f(b) allora: …") that a statement restating the
    theorem's maths leaves out ("… e ha un valore fisso in entrambi gli estremi, allora esiste
    … c∈ (a,b) tale che f'(c)=0"): a condition written only as a formula can be restated only
    as that formula, and a theorem without one of its conditions is false. Any language: the
    formula is the same in all. "" when none is left out."""
    bare = MARKER.sub(" ", text)
    if not any(_RELATION.search(f) for f in formulas(to_unicode(bare))):
        return ""
    mine = skeleton(bare)
    for line in own:
        for condition in bare_conditions(line.text):
            if skeleton(condition) not in mine:
                return to_unicode(condition)
    return ""


_ITEM_MARK = re.compile(r"\s[-•·]\s+")
_THEN = re.compile(r"\b(?:allora|then|dann|alors|entonces|quindi)\b|则|⇒|\\Rightarrow", re.I)
_COMPARISON = re.compile(r"[=≠]")
_MATHS_SPAN = re.compile(r"\$\$.+?\$\$|\$[^$]+\$")


def bare_conditions(sentence: str) -> list[str]:
    """The items of a sentence's list of conditions that are a relation alone, no words:
    "f(a)=f(b)" in "Se: - f è continua in [a,b] - f è derivabile su (a,b) - f(a)=f(b) allora:
    ∃c∈(a,b): f'(c)=0"."""
    out = []
    for item in _ITEM_MARK.split(sentence)[1:]:
        head = _THEN.split(item, maxsplit=1)[0].strip(" ,;:.")
        words = _MATHS_SPAN.sub(" ", head)
        # (an equation: a membership or a bound reads as well in words, "α e β reali",
        # "α,β > 0" as "positivi"; "f(a)=f(b)" came as "un valore fisso")
        if head and _COMPARISON.search(to_unicode(head)) and not re.search(r"[^\W\d_]{2,}",
                                                                           words):
            out.append(head.strip("$ "))
    return out


# the words that join two clauses of a statement ("… to control the step size and ensure
# that the method converges"), in the languages whose words are told apart by spaces
_JOINED = re.compile(r"\s*[,;]?\s+\b(?:and|but|so|while|whereas|e|ed|ma|quindi|mentre|und|"
                     r"aber|sodass|et|mais|donc|y|pero|así)\s+", re.I)
OWN_CLAUSE = 3  # content words of a joined clause none of which its sentences have


def own_clause(text: str, found: set[str], language: str) -> str:
    """The clause the statement joins to what its sentences say that has OWN_CLAUSE or more
    words and not one of theirs or the question's (`found`): "The damping factor α is used
    to control the step size and ensure that the method converges." for a slide that says
    the step size is chosen "to satisfy Wolfe conditions (or just Armijo rule)"; half its
    words being the slide's, the whole passed. "" when there is none."""
    bare = MARKER.sub(" ", text)
    if has_cjk(bare):
        return ""
    clauses = _JOINED.split(bare)
    if len(clauses) < 2:
        return ""
    for clause in clauses:
        words = content_words(clause, language)
        if len(words) >= OWN_CLAUSE and not words & found:
            return clause.strip(" .")
    return ""


def without_own_sentences(statement: Statement, lines: Mapping[str, Line], question: str,
                          language: str) -> Statement:
    """The statement without a sentence after its first that has OWN_CLAUSE or more content
    words and not one of its sentences' or the question's: "Se `f(a)` e `f(c)` hanno segno
    opposto, la radice sta in `[a, c]`, altrimenti sta in `[c, b]`. Questo è il criterio di
    parità per determinare il nuovo intervallo." restates its sentence, then adds a "parity
    criterion" the course never names; the first sentence is what the student should read."""
    text = statement.text
    if _echoed_label(text, question, language):
        rest = _ECHOED_LABEL.sub("", text, count=1)
        text = rest[:1].upper() + rest[1:]
    if has_cjk(text):
        return dataclasses.replace(statement, text=text)
    own = [lines[i] for i in statement.evidence if i in lines]
    same = [line for line in own if (line.language or language) == language]
    parts = sentences(text)
    if not same or len(parts) < 2:
        return dataclasses.replace(statement, text=text)
    found = content_words(" ".join(line.text for line in same) + " " + question, language)
    kept = [parts[0], *(part for part in parts[1:] if not (
        len(words := content_words(MARKER.sub(" ", part), language)) >= OWN_CLAUSE
        and not words & found))]
    return dataclasses.replace(statement, text=text if len(kept) == len(parts)
                               else " ".join(kept))


# "Come funziona: si calcola il punto medio …": the question's words as a label
_ECHOED_LABEL = re.compile(r"^\s*([^:：.\n]{1,40})[:：]\s+(?=\S)")


def _echoed_label(text: str, question: str, language: str) -> bool:
    """Does the statement open on a label of at most three words, each the question's?"""
    m = _ECHOED_LABEL.match(text)
    if m is None or "`" in m.group(1) or "$" in m.group(1):
        return False
    words = tokenize(m.group(1), language)
    return 0 < len(words) <= 3 and set(words) <= set(tokenize(question, language))


def asks(text: str) -> bool:
    """Is the statement a question ("定理 2.3.1 中提到的定理是什么？")? It answers nothing."""
    return MARKER.sub(" ", text).rstrip().endswith(("?", "？"))


def says_little(text: str, own: Sequence[Line], question: str, language: str) -> bool:
    """Does the statement carry next to nothing of what its sentences add to the question:
    no number or formula of theirs and fewer than CARRIED of their own words, where they
    have AVAILABLE or more ("Il teorema degli zeri è un teorema fondamentale della teoria
    delle funzioni continua." from "Teorema 33 (degli zeri). sia f continua, f(a)·f(b) ≠ 0
    (hanno segno diverso). Allora ∃x₀ ∈ (a,b) tale che f(x₀) = 0")? A sentence that says
    little beyond the question ("Newton-Raphson only needs one iteration for quadratic
    forms") asks no more of its restatement."""
    bare = MARKER.sub(" ", text)
    if any(c.isdigit() for c in bare) or any(_RELATION.search(f) for f in formulas(bare)):
        return False
    # a yes/no question's answer is its own words with the sentence's verdict on them
    if answers_polar(bare, question, " ".join(line.text for line in own), language):
        return False
    asked = set(tokenize(question, language))
    # a word: two CJK characters, not one; three letters, not a symbol ("f", "a", "su")
    shortest = 2 if has_cjk(bare) else 3
    theirs = {w for line in own for w in tokenize(to_unicode(unlabelled(line.text)), language)
              if w not in ANY_STOPWORD and w not in asked and len(w) >= shortest
              and any(c.isalpha() for c in w)}
    mine = set(tokenize(bare, language))
    return len(theirs) >= AVAILABLE and len(mine & theirs) < CARRIED


def repeats_itself(text: str) -> bool:
    """Does the statement say a phrase of its own over and over (a small model's loop: "连续
    函数在区间上是连续的，而连续函数在区间上是连续的")? A run of REPEAT_CJK characters or
    REPEAT_WORDS words said three times, or said again where the run is twice that long or
    its two copies make half the statement. A parallel phrase is no loop: "la differenza tra
    il valore della funzione f in b e il valore della funzione f in a" says six words twice in
    a statement of sixty."""
    bare = MARKER.sub(" ", text)
    if has_cjk(bare):
        units: list[str] = [c for c in bare if not c.isspace()]
        size = REPEAT_CJK
    else:
        units = [w.casefold() for w in _WORD.findall(bare)]
        size = REPEAT_WORDS
    seen: dict[tuple[str, ...], list[int]] = {}
    for i in range(len(units) - size + 1):
        at = seen.setdefault(tuple(units[i:i + size]), [])
        if not at or i >= at[-1] + size:
            at.append(i)
        if len(at) >= 3:
            return True
    run = _longest_repeat(units) if any(len(at) > 1 for at in seen.values()) else 0
    return run >= size and (run >= 2 * size or 4 * run >= len(units))


def _longest_repeat(units: Sequence[str]) -> int:
    """The length of the longest run of `units` found again after its own end."""
    best = 0
    for i in range(len(units)):
        for j in range(i + best + 1, len(units)):
            k = 0
            while j + k < len(units) and i + k < j and units[i + k] == units[j + k]:
                k += 1
            best = max(best, k)
    return best


def _terms_and_form(statement: Statement, own: Sequence[Line], question: str,
                    language: str, others: Sequence[Line] = ()) -> StatementVerdict | None:
    """The verdict the statement's terms and form give alone (None: they allow it)."""
    if not own:
        return StatementVerdict(statement, False, reason="cites no evidence sentence")
    text = statement.text
    if statement.points:  # "La definizione … è descritta in [S1]."
        return StatementVerdict(statement, False, reason="sends to its sentence instead of "
                                "saying what it says")
    if repeats_itself(text):
        return StatementVerdict(statement, False, reason="says one thing over and over")
    if sum(c.isalpha() for c in text) < MIN_LETTERS or lead_in(text, language):
        return StatementVerdict(statement, False, reason="an incomplete sentence")
    if echoes(text, question, language):
        return StatementVerdict(statement, False, reason="says nothing the question does not")
    if asks(text):
        return StatementVerdict(statement, False, reason="a question, not a statement")
    if sums := asserted_wrong(text):
        return StatementVerdict(statement, False, reason=f"{WRONG_SUM}: {sums[0].text}")
    missing = missing_terms(text, [line.text for line in own], question)
    if missing:
        return StatementVerdict(statement, False,
                                reason="not in its sentences: " + ", ".join(missing[:4]))
    if condition := dropped_condition(text, own):
        return StatementVerdict(statement, False, reason="leaves out a condition its sentence "
                                "gives as a formula: " + condition)
    if ranks := unbacked_ordinals(text, [line.text for line in own], question,
                                  [line.text for line in others]):
        return StatementVerdict(statement, False, reason="names another kind than its "
                                "sentences: " + ", ".join(map(str, sorted(ranks))))
    same = [line for line in own if (line.language or language) == language]
    # a variant the question names is the one the statement answers about ("감쇠 뉴턴-랩슨
    # 방법에서 스텝 크기는 …?", searched as "In damped Newton-Raphson, …")
    words = {w for w in tokenize(f"{text} {question}", language) if w not in ANY_STOPWORD}
    for line in same:
        if (variant := variant_words(line)) and not variant & words:
            return StatementVerdict(statement, False, reason="leaves out the variant its "
                                    "sentence is about: " + ", ".join(sorted(variant)))
    mine = content_words(_FILLER_CJK.sub(" ", text), language)
    said = " ".join(x.text for x in same)
    found = content_words(f"{said} {question} {spelled_symbols(to_unicode(said), language)}",
                          language)
    if same and mine and len(mine & found) < OVERLAP_LOW * len(mine):
        return StatementVerdict(statement, False, reason="most of its words are not in its "
                                                         "sentences")
    if same and (clause := own_clause(text, found, language)):
        return StatementVerdict(statement, False, reason="adds a clause of its own: " + clause)
    if same and says_little(text, same, question, language):
        return StatementVerdict(statement, False, reason="carries next to nothing its "
                                "sentences add to the question")
    if same and has_cjk(text) and (dropped := dropped_negation(text, said)):
        return StatementVerdict(statement, False, reason="drops the negation of its "
                                "sentences: " + ", ".join(sorted(dropped)))
    if same and (unbacked := unbacked_polarity(text, said, language)):
        return StatementVerdict(statement, False,
                                reason="says what its sentences do not: " + ", ".join(
                                    sorted(unbacked)))
    return None
