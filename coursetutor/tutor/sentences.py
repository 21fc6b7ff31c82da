"""Evidence sentences: the few whole sentences of the retrieved passages that answer a question.

A small model answers well from one to three clean sentences and badly from long mixed
passages. So the turn first picks those sentences, and the model writes only from them:

1. a passage is cut into sentences, whole: a slide's lines are joined where a line goes on on
   the next (it ends on "with", a comma or "=", the next begins in lower case or with
   maths), and a sentence that introduces ("The update is:") keeps the formula or list after
   it;
2. garbled text never becomes evidence: a blank where a formula was, `[formula missing]`,
   private-use glyphs, glyph soup (runs of two or three characters between spaces, the
   `z }| {` of a brace set as glyphs), tables of contents and headings;
3. each sentence is scored against the question, and against the question as searched in the
   course's language: the e5 cosine, plus 0.05 for each of the question's terms it holds, plus
   a little for the words the question's intent asks for (a definition's "is called", a why's
   "because"; a formula for a question that asks for one); the best, and those close behind
   it, are the evidence, numbered S1..Sk. For a how, why or proof question the sentence after
   the best one in its passage comes too: the next step of the explanation; a sentence that
   points back ("This is Newton's iteration.") comes after the one it names.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Sequence

import numpy as np

from ..ingest.formulas import has_gap
from ..retrieval.embed import EmbeddingModel, SentenceStore
from ..retrieval.language import ANY_STOPWORD
from ..retrieval.names import other_spellings
from ..retrieval.tokenize import has_cjk, tokenize
from ..types import Hit
from .claims import sentences, without_latex
from .whole import RELATION, WHY, asks_formula, line_formulas
from .wording import dangles

MAX_SENTENCES = 4  # evidence sentences at most
CLOSE = 0.05  # a sentence this close to the best one's score is evidence too
PASSAGES = 5  # the first passages read
TERM_WEIGHT = 0.05
CUE_WEIGHT = 0.03
DRAWBACK_WEIGHT = 0.08  # a question about drawbacks: the sentence a slide labels as one
DRAWBACK_WIDTH = 0.15  # ... and those labelled so this close to the best one, no others
FORMULA_WEIGHT = 0.05
SECTION_WEIGHT = 0.04  # a passage whose section title the question names
NAMED_WEIGHT = 0.06  # the label of the result the question names, at most
NAMED_SHARE = 0.5  # ... when at least this share of its kind and name words are asked
DEFINES_WEIGHT = 0.08  # a "what is X" question: the sentence that defines X
DEFINES_NEAR = 4  # ... names X within this many words of its "is called", "si chiama", "称为"
MAX_CHARS = 480  # a longer "sentence" is a page run together; it is cut at its words
WHOLE = 320  # a block between two labels this short stays one unit
WHOLE_CJK = 130
SHORT_CJK = 20
SHORT = 60  # a sentence this short (a theorem's label, "Let f be...") goes with the next
RANK_WEIGHT = 0.03  # the first passage's sentences first among equals (the search's order)
TITLE_WORDS = 5  # a line of this many capitalised words, most of its words: titles
TITLE_SHARE = 0.6

_STEPS = ("how", "why", "proof", "explain")
# what names a drawback, on a page and in a question
_DRAWBACKS = (r"disadvantages?|drawbacks?|limitations?|weakness(?:es)?|downsides?|shortcomings?|"
              r"svantagg[io]|limitazion[ei]|difett[io]|nachteile?|inconvénients?|desventajas?|"
              r"limitaciones")
_DRAWBACKS_CJK = "缺点|局限|弊端|단점|한계|문제점|欠点|短所"
_CUES = {
    "definition": re.compile(
        r"\b(?:is called|is defined|we call|denotes|si dice|si chiama|è detta|è detto|"
        r"si definisce|definizione|definition)\b|称为|叫做|定义|이라고|정의", re.I),
    "why": re.compile(r"\b(?:because|since|so that|therefore|thus|hence|perché|poiché|"
                      r"quindi|dunque)\b|因为|所以|由于|때문|따라서", re.I),
    "proof": re.compile(r"\b(?:proof|suppose|assume|let|then|dimostrazione|supponiamo|sia|"
                        r"allora)\b|证明|假设|设|则|증명", re.I),
    # what a page calls a drawback: "Disadvantage: For “bad” starting points: Newton-Raphson
    # may diverge", "Problem 2: Hessian can be computationally expensive"
    "drawback": re.compile(rf"\b(?:problem \d{{1,2}}|{_DRAWBACKS})\b|{_DRAWBACKS_CJK}", re.I),
}
# a question about drawbacks ("뉴턴-랩슨 방법의 단점은 무엇인가요?", searched as "What are the
# limitations of the Newton-Raphson method?"): the slide of its "Aim: Find quasi-second order
# methods" came before the one of its "Disadvantage"
_DRAWBACK_ASKED = re.compile(
    rf"\b(?:{_DRAWBACKS}|pitfalls?|punti deboli|schwächen|faiblesses?)\b|{_DRAWBACKS_CJK}|"
    r"不足之处|劣势|약점|デメリット", re.I)

_JOINS_NEXT = re.compile(r"[,:=+\-−(\[{]$|\b(?:with|of|and|or|to|the|a|is|by|for|where)$", re.I)
_GOES_ON = re.compile(r"^(?:[a-zà-ÿ(\[{=+\-−∇∑∫√`$]|\d)")
_BRACE_GLYPHS = re.compile(r"[}{]\s*\|\s*[{}]|\}\|\s*\{|z\s*\}\|")
# where a new statement begins inside text run together: a numbered section title ("7.1.7
# Teorema di Rolle"), a theorem's, definition's or proof's label
_STRUCTURE = re.compile(
    r"\s+(?=\d+(?:\.\d+){1,3}\s+[A-ZÀ-Ý])|\s+(?=(?:Teorema|Definizione|Corollario|Lemma|"
    r"Proposizione|Esempio|Osservazione|Theorem|Definition|Corollary|Example|Remark|Satz|"
    r"Théorème)\s+\d|(?:Dimostrazione|Proof|Beweis|Preuve)\.)|\s*(?=(?:定理|定义|例子|证明|引理|推论)"
    r"\s*\d+(?:\.\d+)*\s*(?:[(（*]|$))")  # a label, not a reference ("定理 3.3.1 的反证")
# a unit that is a label alone ("Teorema 56 (della media integrale).", "定理3.2.4"): what it
# names follows, in the next passage when a chunk ends there
_LABEL_ONLY = re.compile(
    r"^(?:\d+(?:\.\d+){1,3}\s+)?(?:Teorema|Definizione|Corollario|Lemma|Proposizione|Theorem|"
    r"Definition|Corollary|Proposition|Satz|Théorème|Esempio|Example|定理|定义|引理|推论|例子)"
    r"\s*\d*(?:\.\d+)*"
    r"\s*(?:[(（][^)）]{1,60}[)）])?\s*[.:：]?$")
# a named result's label: its kind, its number, and its name ("Teorema 43 (di Lagrange).")
_LABEL = re.compile(
    r"^(?:\*\*?\s*)?(?:\d+(?:\.\d+){1,3}\s+)?((?:Teorema|Definizione|Corollario|Lemma|"
    r"Proposizione|Theorem|Definition|Corollary|Proposition|Satz|Théorème|定理|定义|引理|推论))\s*\d*(?:\.\d+)*"
    r"\s*[(（]([^)）]{1,60})[)）]")
_ODD = re.compile(r"\(\s*\)|[，。]\s*[，。]|\uFFFD|[\uE000-\uF8FF]|\(cid:\d+\)")
# a bullet inside a long run of text starts a new statement ("·若…则称为第一类间断点 ·否则…")
_BULLET = re.compile(r"\s+(?=[·•]\s*\S)")
# a slide's labels inside a long run: "Aim: …", "Update scheme: …", "Problem 1: …", "But: …"
_SLIDE_LABEL = re.compile(r"\s+(?=(?:[A-Z][a-z]{1,14}(?: [a-z]{2,10})?|Problem \d{1,2}):\s)")
# the pieces of a formula: a token with an operator, a bracket or a maths sign
_MATHS = re.compile(r"[=+\-−*/^()\[\]{}∇∑∫√≤≥<>≈∈→⊤∂·|]")
# a sum the PDF flattened: "Pn i=1" for the sigma of i = 1 to n
_FLAT_SUM = re.compile(r"\bP\s?[a-zA-Z]?\s+[a-z]\s?=\s?\d\b")
_LIST_ITEM = re.compile(r"^(?:[-*•·]|\d{1,2}[.)]|\(?[a-z][.)]|\(?[ivx]{1,4}\))\s+")
# what a list of hypotheses leads to: "Allora:", "Then", "则"
_THEN = re.compile(r"^(?:Allora|Then|Dann|Alors|Entonces|Quindi|Therefore|Hence|则|那么|그러면)\b",
                   re.I)
_PROSE = re.compile(r"(?<![\\\w])[^\W\d_]{4,}|[\u3400-\u9fff\uac00-\ud7af]")
# a sentence that names what the one before it said ("This is Newton's iteration.")
# a proof's label, after emphasis marks: "*→ Proof.*", "Dimostrazione.", "证明"
_PROOF_START = re.compile(r"^[\s*_→>#-]*(?:Proof|Dimostrazione|Beweis|Preuve|Demostración|证明|"
                          r"證明|증명)\b", re.I)
_REFERS_BACK = re.compile(
    r"^(?:\*\*)?(?:(?:This|These|That|Those|Questo|Questa|Questi|Queste|Ciò|Dies|Diese|"
    r"Dieser|Cela|Ceci|Ce|Esto|Esta|Este)\b|这|此|上述|以上|이는|이것|이와)", re.I)
_CJK_WORD = re.compile(r"[\u3400-\u9fff\uff0c\u3002]+")
# a caption's sound cue: "(air whooshing)", "[Music]", "(audience laughing)"
_CUE = re.compile(
    r"[(\[](?:[a-z]+\s){0,3}(?:music|whooshing|whoosh|applause|laughter|laughing|laughs|"
    r"inaudible|silence|sighs|chuckles|coughs|noise|static|beeps?|clapping)(?:\s[a-z]+){0,2}"
    r"[)\]]\s*(?:-\s+)?", re.I)


@dataclasses.dataclass(frozen=True)
class Line:
    """One evidence sentence: S{rank}, in its passage's words, with where it is."""

    id: str  # "S1"
    hit: Hit
    text: str
    score: float

    @property
    def language(self) -> str:
        return self.hit.chunk.language or ""


def units(text: str, language: str = "en") -> list[str]:
    """The whole sentences of a passage (lines joined where one goes on on the next; an
    introducing sentence with what it introduces)."""
    joined: list[str] = []
    for line in (raw.strip() for raw in text.splitlines()):
        if not line:
            if joined and joined[-1]:
                joined.append("")
            continue
        if _formula_only(line) and any(joined):
            # a displayed formula belongs to the sentence that introduced it ("… gives")
            while not joined[-1]:
                joined.pop()
            joined[-1] = f"{joined[-1]} {line}"
            continue
        if joined and joined[-1] and (_JOINS_NEXT.search(joined[-1]) or _GOES_ON.match(line)
                                      or dangles(joined[-1], language)):
            joined[-1] = f"{joined[-1]} {line}"
        else:
            joined.append(line)
    out: list[str] = []
    for block in (piece.strip() for b in _statements(joined) for piece in _STRUCTURE.split(b)):
        if not block:
            continue
        # a theorem with its hypotheses, a definition: one unit (a CJK character says more)
        if len(block) <= (WHOLE_CJK if has_cjk(block) else WHOLE):
            out.extend(_labelled(block))
            continue
        for sentence in (p for s in sentences(block) for b in _BULLET.split(s)
                         for p in _SLIDE_LABEL.split(b) if p.strip()):
            # what a sentence introduced, and what a label or a set-up says of ("Sia f : [a,
            # b] → R. Se: ...")
            short = SHORT_CJK if has_cjk(sentence) else SHORT
            # (a formula alone states a result: it does not take in the proof after it)
            if out and (out[-1].rstrip().endswith((":", "\uff1a")) or (
                    len(out[-1]) < short and not _formula_only(out[-1]))):
                out[-1] = f"{out[-1]} {sentence}"
            else:
                out.append(sentence)
    return [piece for s in _marks_joined(out) for piece in _cut(s)]


def _labelled(block: str) -> list[str]:
    """A short block that is a slide's run of labelled items, one unit per item: "Note: In
    practice, we get d[t] by solving … Relaxed/Damped Newton-Raphson: Use step size α > 0
    with …" holds two statements, and read as one, its words answer every question about
    the slide. A heading before the first label stays with it; a theorem's set-up ("Se:",
    "Let:") and a block with maths markup or CJK text stay whole."""
    if has_cjk(block) or "$" in block or "\\" in block:
        return [block]
    pieces = [p for p in _ITEM_LABEL.split(block) if p.strip()]
    if len(pieces) < 2 or any(_SETUP.match(p) for p in pieces):
        return [block]
    out: list[str] = []
    for piece in pieces:
        if out and len(out[-1]) < SHORT and not out[-1].rstrip().endswith((".", "?", "!")):
            out[-1] = f"{out[-1]} {piece}"  # "NEWTON-RAPHSON" over its first item
        else:
            out.append(piece)
    if len(out) < 2 or any(len(p) < SHORT for p in out):
        return [block]
    return out


# an item's label on a slide: "Note:", "Update scheme:", "Relaxed/Damped Newton-Raphson:"
_ITEM = r"[A-Z][a-z]{1,14}(?:[/ -][A-Z]?[a-z]{1,14}){0,3}"
_ITEM_LABEL = re.compile(rf"\s+(?={_ITEM}:\s)")
# a label that sets up what follows rather than naming an item of its own
_SETUP = re.compile(r"(?:Se|Sia|Siano|If|Let|Then|Allora|Dann|Sei|Soit|Si|Wenn|Where|Dove)"
                    r":", re.I)


_MARKS_ONLY = re.compile(r"^[*_→>#\s]{1,6}$")  # emphasis or an arrow, cut off what it opens


def _marks_joined(found: list[str]) -> list[str]:
    """Units of emphasis marks alone ("*→", "**", cut off before "Proof." or "例子 3.2.5")
    and labels alone ("**定理 3.2.4 (介值定理)**") joined to the unit they open; a label
    that ends the passage stays a unit of its own (its statement is in the next passage)."""
    out: list[str] = []
    carried = ""
    for unit in found:
        if _MARKS_ONLY.match(unit):
            carried += unit
            continue
        if carried:
            glued = bool(_MARKS_ONLY.match(carried)) and carried.endswith(("*", "_"))
            unit = f"{carried}{unit}" if glued else f"{carried} {unit}"  # "**定理", "*→ Proof"
            carried = ""
        if _LABEL_ONLY.match(unit.strip("*_ →")):
            carried = unit
            continue
        out.append(unit)
    if carried and not _MARKS_ONLY.match(carried):
        out.append(carried)
    return out


# a question the passage asks before it answers ("What is transfer learning? The idea of …")
_ASKED_FIRST = re.compile(r"^[^?？.!。\n]{3,160}[?？]\s+(?=\S)")


def unasked(sentence: str) -> str:
    """The sentence without the question its passage asks before answering it ("What is
    transfer learning? The idea of transfer learning is to leverage …"): read with it, the
    model took the line for a question and wrote its own definition of transfer learning,
    which the check removed. A sentence that is nothing but a question stays as it is."""
    rest = _ASKED_FIRST.sub("", sentence, count=1)
    return rest if rest.strip() else sentence


def is_proof(sentence: str) -> bool:
    """Does the evidence sentence begin a proof ("*→ Proof.* 区间套, …", "Dimostrazione.")?"""
    return bool(_PROOF_START.match(sentence))


def states_result(sentence: str) -> bool:
    """Does the evidence sentence state a named result under its label ("Teorema 43 (di
    Lagrange). Sia f … Se: … Allora: …")?"""
    return bool(_LABEL.match(sentence.strip()))


def opens_on_proof(text: str, language: str = "en", found: list[str] | None = None) -> bool:
    """Does the passage open on a proof, the statement it proves at the end of the passage
    before? (`found`: its units, when already cut.)"""
    found = units(text, language) if found is None else found
    return bool(found) and bool(_PROOF_START.match(found[0]))


_BULLET_ITEM = re.compile(r"^[-*•·]\s+")  # a bullet, not an exercise's part ("b) …")
_SENTENCE_ENDS = (".", "!", "?", ";", "$$", "\\]", "\u3002", "\uff01", "\uff1f", "\uff1b")


def _statements(blocks: list[str]) -> list[str]:
    """The blocks of a passage, a statement set out over several (a theorem's "Se:", its
    hypotheses as a list, its "Allora: $$...$$") joined into one while it stays short."""
    out: list[str] = []
    listing = False  # the last block ends in a list that its lead-in opened
    for block in (b for b in blocks if b):
        item = bool(_LIST_ITEM.match(block))
        # "Se:", or a lead-in cut before its list ("Siano" / "- α,β>0"): no sentence ended
        opened = bool(out) and (out[-1].rstrip().endswith((":", "\uff1a")) or (
            bool(_BULLET_ITEM.match(block)) and not out[-1].rstrip().endswith(_SENTENCE_ENDS)))
        then = bool(_THEN.match(block))
        # what the hypotheses lead to, after hypotheses that ended no sentence ("- α<β" /
        # "allora ∃n: nα>β")
        goes_on = opened or (listing and (item or then)) or (
            then and bool(out) and not out[-1].rstrip().endswith(_SENTENCE_ENDS))
        limit = WHOLE_CJK if has_cjk(block) else WHOLE
        if goes_on and len(out[-1]) + len(block) < limit:
            out[-1] = f"{out[-1]} {block}"
            listing = item or (listing and not then)
        else:
            out.append(block)
            listing = False
    return out


def _formula_only(line: str) -> bool:
    """A line that is a formula alone (`x_{n+1} = x_n - f(x_n) / f'(x_n)`): a relation, and
    no word of prose (LaTeX commands are not words)."""
    return bool(RELATION.search(line)) and not _PROSE.search(line)


def ends_in_label(text: str, language: str = "en", found: list[str] | None = None) -> bool:
    """Does the passage end on a theorem's or definition's label, its statement cut off
    into the next passage? (`found`: its units, when already cut.)"""
    found = units(text, language) if found is None else found
    return bool(found) and bool(_LABEL_ONLY.match(found[-1].strip("*_ →")))


def ends_in_lead_in(found: list[str]) -> bool:
    """Does the passage (its units, `found`) end on a sentence that introduces what follows,
    cut off into the next passage ("In the following we want to estimate a model π :",
    "Sia f:(a,b)→ℝ, x₀∈(a,b). Se:")?"""
    return bool(found) and found[-1].strip("*_ →").endswith((":", "\uff1a"))


def _cut(sentence: str) -> list[str]:
    """A run-on "sentence" (a page without full stops) cut where prose begins after code or
    numbers, then into pieces of MAX_CHARS."""
    if len(sentence) <= MAX_CHARS:
        return [sentence]
    words = sentence.split(" ")
    starts = [0, *(n for n in range(1, len(words)) if _prose_starts(words, n)), len(words)]
    return [piece for a, b in itertools.pairwise(starts)
            for piece in _cut_words(words[a:b])]


PROSE_RUN = 4  # words in a row that make prose
_CODE = re.compile(r"[\d()\[\]{}=$#%*/+<>|\\]")


def _prose_starts(words: Sequence[str], n: int) -> bool:
    """Does a sentence begin at word `n` of a run-on page, after code, a plot's axis numbers
    or a formula ("… xlab(expression(x[1])) 0.00 0.25 … x1 x2 type 0 1 | In the following we
    want to estimate a model π :")? A capitalised word and the three after it are words,
    and the word before holds a digit or a symbol of code."""
    run = words[n:n + PROSE_RUN]
    return (len(run) == PROSE_RUN and run[0][:1].isupper() and all(w.isalpha() for w in run)
            and bool(_CODE.search(words[n - 1])))


def _cut_words(words: Sequence[str]) -> list[str]:
    """Words run together, in pieces of MAX_CHARS at most."""
    pieces: list[list[str]] = [[]]
    size = 0
    for word in words:
        if size + len(word) > MAX_CHARS and pieces[-1]:
            pieces.append([])
            size = 0
        pieces[-1].append(word)
        size += len(word) + 1
    return [" ".join(p) for p in pieces if p]


def garbled(sentence: str) -> bool:
    """Text that must not be quoted or restated: a lost formula, glyph soup, odd glyphs."""
    # (a colon between blanks is maths, "f : [a, b] → R", not a lost formula)
    if (has_gap(sentence) or _ODD.search(sentence) or _BRACE_GLYPHS.search(sentence)
            or _FLAT_SUM.search(sentence)):
        return True
    if has_cjk(sentence):
        # "这等价于 第六章 不定积分 分部积分法 由于有 所以 例如": words left between formulas
        short = [t for t in sentence.split() if _CJK_WORD.fullmatch(t) and len(t) <= 5]
        return len(short) >= 4 and len(short) >= 0.6 * len(sentence.split())
    # maths is short tokens by nature ("f è continua in [a, b]"): only a line with hardly a
    # word in it is soup; a formula's pieces ("x [t+1] = x [t] + d[t]") are readable, a plot's axis
    # numbers or letters left from lost glyphs are not
    tokens = sentence.split()
    worded = sum(1 for t in tokens if sum(c.isalpha() for c in t) >= 3)
    maths = sum(1 for t in tokens if _MATHS.search(t))
    return len(tokens) >= 8 and worded < 0.2 * len(tokens) and (
        worded + maths < 0.6 * len(tokens))


# where a clause ends inside a sentence: a comma (with "i.e.", "cioè", "d.h." after it) or a
# semicolon, then a blank
_CLAUSE_END = re.compile(
    r"(?:,(?:\s*(?:i\.\s?e\.|e\.\s?g\.|cioè|ossia|d\.\s?h\.),?)?|;)\s+")
# a map's arrow ↦ as a PDF's text layer gives it, a digit glued to an arrow: "(x1, x2) 7→ 1
# 1+exp(…)" (the fraction 1/(1+exp(…)) ran flat after it too)
_LOST_MAPSTO = re.compile(r"(?:^|(?<=[\s(]))\d→")
_WORD_TOKEN = re.compile(r"^[^\W\d_][^\W_]*(?:[-'’][^\W_]+)*[.,;:]?$")  # a word, not maths
MIN_HEAD_WORDS = 3  # words of three letters or more a readable head must carry


def readable_head(sentence: str) -> str:
    """What reads of a garbled sentence: up to the clause a lost formula garbles ("…, i.e.,
    Remp = Pn i=1 ∥y(i) − π(x(i))∥2 2.", a sum the PDF ran flat), and of that the words after
    its last formula when a map's arrow was lost in it ("R2 → [0, 1], (x1, x2) 7→ 1
    1+exp((1,x1 ,x2 )⊤ θ) such that it minimizes the Brier-loss" → "… such that it minimizes
    the Brier-loss."); "" when nothing with words reads."""
    for match in reversed(list(_CLAUSE_END.finditer(sentence))):
        head = sentence[:match.start()].rstrip(" ,;")
        if lost := _LOST_MAPSTO.search(head):
            tail = list(itertools.takewhile(_WORD_TOKEN.match, reversed(head.split())))
            head = (f"{_map_head(head[:lost.start()])}… " + " ".join(reversed(tail))
                    if len(tail) >= MIN_HEAD_WORDS else "")
        words = sum(1 for t in head.split() if sum(c.isalpha() for c in t) >= 3)
        if words >= MIN_HEAD_WORDS and not garbled(head):
            return head if head.endswith((".", "。")) else f"{head}."
    return ""


def _map_head(before: str) -> str:
    """What reads of a map before its lost arrow: its name, domain and codomain ("R2 → [0,
    1]" of "R2 → [0, 1], (x1, x2) 7→ …"), up to the clause that names its argument; "" when
    that is garbled or nothing."""
    for match in reversed(list(_CLAUSE_END.finditer(before))):
        head = before[:match.start()].rstrip(" ,;")
        if head and _balanced(head) and not garbled(head):
            return f"{head} "
    return ""


def _balanced(text: str) -> bool:
    """Are the brackets of `text` closed ("[0, 1]", not "[0, 1], (x1")?"""
    depth = 0
    for c in text:
        depth += (c in "([{") - (c in ")]}")
        if depth < 0:
            return False
    return depth == 0


def _heading(sentence: str, hit: Hit) -> bool:
    """A title, a section heading or a table of contents: it names a topic, says nothing."""
    if any(c in sentence for c in "=∑∫≤≥<>→"):
        return False
    words = {w for w in tokenize(sentence, hit.chunk.language or "en")
             if w not in ANY_STOPWORD and not w.isdigit()}
    heads = {w for w in tokenize(f"{hit.chunk.document_title} {' '.join(hit.chunk.section_path)}",
                                 hit.chunk.language or "en")}
    numbered = len(re.findall(r"(?<![\d.])\d+\.\d+(?![\d.])\s*[^\W\d_]", sentence))
    ends = sentence.rstrip().endswith((".", "。", ":", "：", "!", "?", ")"))
    return numbered >= 4 or (bool(words) and len(words & heads) >= 0.6 * len(words)) or (
        not ends and ((len(words) <= 4 and not has_cjk(sentence)) or _titled(sentence)))


def _titled(sentence: str) -> bool:
    """A run of capitalised titles with no sentence in it: a title slide ("Optimization in
    Machine Learning Second order methods Newton-Raphson Learning goals Newton-Raphson
    Limitations"), where a slide's line ("Disadvantage: For “bad” starting points:
    Newton-Raphson may diverge") has its lower-case words."""
    if ":" in sentence:
        return False
    words = [w for w in re.findall(r"[^\W\d_][\w'’-]*", sentence) if len(w) >= 3]
    capital = sum(1 for w in words if w[0].isupper())
    return capital >= TITLE_WORDS and capital >= TITLE_SHARE * len(words)


@dataclasses.dataclass(frozen=True)
class Selection:
    """The evidence for one question: the sentences that answer, and what was passed over."""

    lines: tuple[Line, ...]
    best: float  # the best sentence's cosine to the question (0.0: no sentence)
    garbled_only: Hit | None = None  # the passage that answers, though only in garbled text

    @property
    def answers(self) -> bool:
        return bool(self.lines)


def select(question: str, search: str, hits: Sequence[Hit], language: str, intent: str,
           embedder: EmbeddingModel, stored: SentenceStore | None = None) -> Selection:
    """The evidence sentences of the first passages for `question` (asked in `language`;
    `search`: the question as searched in the course's language, "" when the same;
    `stored`: where the sentences' vectors are kept, which warm.py fills at ingest)."""
    candidates: list[tuple[int, int, str]] = []  # (passage, position, sentence)
    soup: set[int] = set()  # the candidates too garbled to restate
    seen: set[str] = set()  # a sentence two passages hold (a proof's statement added to it)
    for p, hit in enumerate(hits[:PASSAGES]):
        for i, sentence in enumerate(units(hit.chunk.text, hit.chunk.language or language)):
            sentence = uncued(sentence)
            key = _markless(sentence)
            if not readable(sentence) or _heading(sentence, hit) or key in seen:
                continue
            seen.add(key)
            if i == 0 and _formula_only(sentence):
                sentence = _headed(sentence, hit)
            if garbled(sentence):
                soup.add(len(candidates))
            candidates.append((p, i, sentence))
    asked = [q for q in dict.fromkeys([question, search]) if q]
    if not candidates:
        return Selection((), 0.0)
    vectors = embedder.embed_sentences((s for _, _, s in candidates), stored)
    cosines = np.max([vectors @ embedder.embed_query(q) for q in asked], axis=0)
    # a name as the notes write it counts as the question's word ("Cauchy" for 柯西)
    spelled = " ".join(other_spellings(" ".join(asked), hits[0].chunk.language or language))
    people = set(tokenize(spelled, hits[0].chunk.language or language))
    wanted = [{t for t in tokenize(f"{q} {spelled}", lang) if t not in ANY_STOPWORD}
              for q, lang in zip(asked, [language, hits[0].chunk.language or language],
                                     strict=False)]
    kind = _cue_kind(question, intent)
    if not kind and _DRAWBACK_ASKED.search(search):
        kind = "drawback"
    cue = _CUES.get(kind)
    cued = DRAWBACK_WEIGHT if kind == "drawback" else CUE_WEIGHT
    formula = asks_formula(question) or asks_formula(search)
    scores = []
    # a term of the passage's section title counts for each of its sentences alike (a slide
    # repeats its title in its first line only)
    titles = [set(tokenize(" ".join(h.chunk.section_path), h.chunk.language or language))
              for h in hits[:PASSAGES]]
    # a passage whose own section the question names ("5.2.3 Serie Armonica" for "La serie
    # armonica converge?") is about what is asked: its sentences before a theorem elsewhere
    # that shares a word or two with the question
    about = [SECTION_WEIGHT if _names_section(h, wanted, language) else 0.0
             for h in hits[:PASSAGES]]
    definers = _definers(candidates, hits, wanted, language) if kind == "definition" else set()
    for n, ((p, _, sentence), cosine) in enumerate(zip(candidates, cosines, strict=True)):
        lang = hits[p].chunk.language or language
        terms = max(len(w & (set(tokenize(sentence, lang)) | titles[p])) for w in wanted)
        bonus_named = max(max(named(sentence, w, lang, people), item_named(sentence, w, titles[p],
                                                                   lang)) for w in wanted)
        bonus = cued if cue and cue.search(sentence) else 0.0
        if n in definers:
            bonus += DEFINES_WEIGHT
        if formula and any(RELATION.search(f) for _, f in line_formulas(sentence)):
            bonus += FORMULA_WEIGHT  # a formula asked for: the sentence that gives one
        scores.append(float(cosine) + TERM_WEIGHT * min(terms, 4) + bonus + bonus_named
                      + RANK_WEIGHT / (p + 1) + about[p])
    order = sorted(range(len(candidates)), key=lambda i: -scores[i])
    clean = [i for i in order if i not in soup]
    if order[0] in soup and (not clean or scores[clean[0]] < scores[order[0]] - CLOSE):
        # what answers is garbled, and nothing readable comes close: the page, not its glyphs
        return Selection((), float(cosines[order[0]]), hits[candidates[order[0]][0]])
    order = clean
    top = order[0]
    chosen = [i for i in order if scores[i] >= scores[top] - CLOSE][:MAX_SENTENCES]
    if kind == "drawback" and cue and cue.search(candidates[top][2]):
        # the drawbacks the pages label as such, and not what their slides say beside them
        # ("Aim: Find quasi-second order methods", the remedy, beside "Problem 2: Hessian
        # can be computationally expensive")
        chosen = [i for i in order if scores[i] >= scores[top] - DRAWBACK_WIDTH
                  and cue.search(candidates[i][2])][:MAX_SENTENCES]
    chosen = _with_antecedents(chosen, candidates, set(order))
    if steps_wanted(question, intent):
        after = [i for i in order if candidates[i][0] == candidates[top][0]
                 and candidates[i][1] == candidates[top][1] + 1]
        if after and after[0] not in chosen:
            chosen = [*chosen[: MAX_SENTENCES - 1], after[0]]
    if kind == "why":
        chosen = _with_reason(chosen, top, candidates, set(order))
    if steps_wanted(question, intent):
        chosen = _with_result(_with_proof(chosen, candidates, hits, set(order)), top,
                              candidates, set(order))
        chosen = _with_list(chosen, candidates, top, set(order))
    if steps_wanted(question, intent):
        # the best passage's sentences first, in reading order (steps as the page gives them)
        chosen.sort(key=lambda i: (order.index(i) if candidates[i][0] != candidates[top][0]
                                   else -1, candidates[i][0], candidates[i][1]))
    lines = tuple(Line(f"S{n}", hits[candidates[i][0]], candidates[i][2], round(scores[i], 4))
                  for n, i in enumerate(chosen, start=1))
    return Selection(lines, float(cosines[top]))


_NUMBERING = re.compile(r"^\s*(?:\$\\S[\d.]*\$|§?\d[\d.]*(?=\s))\s*")  # "5.2.2 ", "$\\S3.3$ "


def _headed(formula: str, hit: Hit) -> str:
    """A passage's opening formula with no sentence of its own (a section that states its
    result as "$$\\sum 1/(n(n+1)) = 1$$"), under its section's title: the title says what
    the formula is about ("Serie di Mengoli (o Telescopica): $$…$$")."""
    if not hit.chunk.section_path:
        return formula
    title = _NUMBERING.sub("", hit.chunk.section_path[-1]).strip()
    return f"{title}: {formula}" if title else formula


def readable(sentence: str) -> bool:
    """Can `sentence` be evidence: a dozen letters or digits, and more than a label alone
    (its statement not read, it names and says nothing)?"""
    return sum(c.isalnum() for c in sentence) >= 12 and not _LABEL_ONLY.match(
        sentence.strip("*_ →"))


def uncued(sentence: str) -> str:
    """A transcript's sentence without its captions' sound cues ("(air whooshing) - What is
    transfer learning? …" → "What is transfer learning? …")."""
    return _CUE.sub("", sentence).strip() or sentence


def _markless(text: str) -> str:
    """A sentence without its emphasis marks and spaces: the same statement as two
    overlapping passages print it ("**定理 2.4.2 (区间套)** 若…" and "** 定理 2.4.2
    (区间套)** 若…")."""
    return "".join(c for c in text if not c.isspace() and c not in "*_")


MAX_LIST = 8  # evidence sentences at most with the rest of a numbered list of steps
# a list item's number, at a sentence's start or after the colon that opens the list
# (a sentence may hold two: "3. If f(c) = 0, … we stop. 4. If f(a) * f(c) < 0, …")
_STEP_NUMBER = re.compile(r"(?:^|[:：.;]\s+)[*_]*(\d{1,2})[.)]\s+(?=\S)")


def _with_list(chosen: list[int], candidates: Sequence[tuple[int, int, str]], top: int,
               readable: set[int]) -> list[int]:
    """The chosen sentences with the rest of the numbered list the best passage's chosen
    ones begin ("1. Start with a and b …", "2. Compute the midpoint …", then "3. If f(c) =
    0 …", "4. If f(a) * f(c) < 0 …", "Otherwise …", "5. Repeat from step 2 …"): asked how
    the bisection method works, the tutor gave its first two steps of five. Up to the list's
    last item, MAX_LIST sentences at most, in reading order."""
    p = candidates[top][0]
    at = {i: n for n, (q, i, _) in enumerate(candidates) if q == p and n in readable}
    numbers = {i: [int(m.group(1)) for m in _STEP_NUMBER.finditer(candidates[n][2])]
               for i, n in at.items()}
    numbers = {i: found for i, found in numbers.items() if found}
    mine = [candidates[n][1] for n in chosen if candidates[n][0] == p]
    if len(numbers) < 2 or not mine:
        return chosen
    # the list the chosen sentences are in: its items numbered on by one, in order
    start = max(i for i in mine if i in numbers or i == min(mine))
    last, number = start, numbers[start][-1] if start in numbers else None
    for i in sorted(k for k in numbers if k > start):
        if number is not None and numbers[i][0] != number + 1:
            break
        last, number = i, numbers[i][-1]
    if number is None or last == start:
        return chosen
    added = [at[i] for i in range(start + 1, last + 1) if i in at and at[i] not in chosen]
    room = MAX_LIST - len(chosen)
    return [*chosen, *added[:room]] if room > 0 else chosen


def _with_antecedents(chosen: list[int], candidates: Sequence[tuple[int, int, str]],
                      readable: set[int]) -> list[int]:
    """The chosen sentences, each that points back ("This is Newton's iteration.") after
    the sentence of its passage it points to (the formula it names), at most
    MAX_SENTENCES."""
    at = {(p, i): n for n, (p, i, _) in enumerate(candidates) if n in readable}
    out: list[int] = []
    for n in chosen:
        p, i, sentence = candidates[n]
        before = at.get((p, i - 1))
        if _REFERS_BACK.match(sentence) and before is not None and before not in chosen \
                and before not in out:
            out.append(before)
        out.append(n)
    return out[:MAX_SENTENCES]


def _with_reason(chosen: list[int], top: int, candidates: Sequence[tuple[int, int, str]],
                 readable: set[int]) -> list[int]:
    """For a why question, the sentence right before the best one in its passage when it
    gives a reason ("Problem 2: Hessian can be computationally expensive to calculate,
    since …" before "Aim: Find quasi-second order methods not relying on exact Hessians"
    for "Why would we want quasi-Newton methods instead of exact Newton-Raphson?"): what
    the best sentence answers, which shares no word with the question."""
    p, i, _ = candidates[top]
    before = next((n for n, (q, j, _) in enumerate(candidates)
                   if q == p and j == i - 1 and n in readable), None)
    if before is None or not _CUES["why"].search(candidates[before][2]):
        return chosen
    return _inserted(chosen, before, before=top)


def _with_proof(chosen: list[int], candidates: Sequence[tuple[int, int, str]],
                hits: Sequence[Hit], readable: set[int]) -> list[int]:
    """For a why or proof question, the first chosen result with its proof: the first
    proof after it in its document, in its passage or the passage that follows it ("定理
    3.3.4 (一致连续性) …" in one passage, "*→ Proof.* 考虑有限开覆盖的 Lebesgue 数即可." in
    the next), when no other label comes between (a definition has none). The proof takes
    the place of the last chosen sentence when there are already MAX_SENTENCES."""
    for result in (n for n in chosen if _LABEL.match(candidates[n][2])):
        proof = _proof_of(result, candidates, hits, readable)
        if proof is None:
            continue
        return _inserted(chosen, proof, after=result)
    return chosen


def _inserted(chosen: list[int], n: int, after: int = -1, before: int = -1) -> list[int]:
    """`chosen` with `n` right after (or before) another chosen sentence, in place of the
    last one when there are already MAX_SENTENCES (unchanged when `n` is chosen already)."""
    if n in chosen:
        return chosen
    kept = chosen if len(chosen) < MAX_SENTENCES else chosen[:-1]
    at = (kept.index(after) + 1 if after in kept else len(kept)) if before < 0 else (
        kept.index(before) if before in kept else 0)
    return [*kept[:at], n, *kept[at:]]


def _with_result(chosen: list[int], top: int, candidates: Sequence[tuple[int, int, str]],
                 readable: set[int]) -> list[int]:
    """For a why question whose best sentence comes after a labelled result in its passage
    (the result's proof, an example it gives: "这也说明, 任何奇数次多项式方程都有至少一个实根"
    after "定理 3.2.4 (介值定理) …"), that result before it: the reason it gives. A best
    sentence that is a labelled result itself is its own reason."""
    p, i, best = candidates[top]
    if _LABEL.match(best):
        return chosen
    before = {j: n for n, (q, j, _) in enumerate(candidates) if q == p and j < i and n in readable}
    for j in sorted(before, reverse=True):
        n = before[j]
        sentence = candidates[n][2]
        if _LABEL.match(sentence):
            return _inserted(chosen, n, before=top)
        if _LABEL_ONLY.match(sentence.strip("*_ →")):
            return chosen
    return chosen


def _proof_of(result: int, candidates: Sequence[tuple[int, int, str]], hits: Sequence[Hit],
              readable: set[int]) -> int | None:
    """The candidate that opens the proof of the labelled result `result`, if it is read."""
    p, i, _ = candidates[result]
    doc, ordinal = hits[p].chunk.document_id, hits[p].chunk.ordinal
    following = sorted(
        (0 if q == p else 1, j, n) for n, (q, j, _) in enumerate(candidates)
        if n in readable and hits[q].chunk.document_id == doc
        and ((q == p and j > i) or hits[q].chunk.ordinal == ordinal + 1))
    for _, _, n in following:
        sentence = candidates[n][2]
        if _PROOF_START.match(sentence):
            return n
        if _LABEL.match(sentence) or _LABEL_ONLY.match(sentence.strip("*_ →")):
            return None  # the next result's, not this one's
    return None


def _names_section(hit: Hit, wanted: list[set[str]], language: str) -> bool:
    """Does the question hold every word of the passage's own section title?"""
    if not hit.chunk.section_path:
        return False
    words = {w for w in tokenize(hit.chunk.section_path[-1], hit.chunk.language or language)
             if w not in ANY_STOPWORD and not w.isdigit()}
    return bool(words) and any(words <= w for w in wanted)


def named(sentence: str, wanted: set[str], language: str,
          spelled: set[str] | frozenset[str] = frozenset()) -> float:
    """A bonus for the result the question names: a sentence that opens with a label whose
    kind and name are mostly the question's words ("Teorema 43 (di Lagrange)" for "il
    teorema di Lagrange", not "Corollario 3 (conseguenza ... al teorema di Lagrange)");
    `spelled`: the words of the names the question writes in another script."""
    label = _LABEL.match(sentence)
    if label is None or not wanted:
        return 0.0
    words = {w for w in tokenize(f"{label.group(1)} {label.group(2)}", language)
             if w not in ANY_STOPWORD}
    bonus = _named_bonus(words, wanted)
    name = {w for w in tokenize(label.group(2), language) if w not in ANY_STOPWORD}
    if name & spelled:
        # a person's name the question writes in another script, the result's kind in
        # other words ("定理 2.4.1 (Cauchy 收敛原理)" for "柯西收敛准则是什么？"): the name
        # and its words are what count
        bonus = max(bonus, _named_bonus(name, wanted))
    return bonus


# the words that introduce what a sentence defines: "Si chiama estremo superiore di A il numero
# … minimo dei maggioranti", "x* is called a stationary point", "称为达布上和"
_DEFINING = re.compile(
    r"\b(?:is called|are called|is defined as|are defined as|is defined|we call|is said to be|"
    r"si chiama|si chiamano|si dice|si dicono|si definisce|è detto|è detta|sono detti|"
    r"heißt|wird als|on appelle|est appelée?)\b|称为|称作|叫做|定义为|"
    r"이라고 한다|이라 한다|라고 한다", re.I)


def _definers(candidates: Sequence[tuple[int, int, str]], hits: Sequence[Hit],
              wanted: Sequence[set[str]], language: str) -> set[int]:
    """The candidates that define what is asked: with two of the question's terms by their
    defining phrase, or, when none has and the question names one or two terms, with one
    right after it ("Si dice che F è continua in x₀ se: …" for "Che cos'è una funzione
    continua?": the function is its "F")."""
    for need in (2, 1):
        found = {n for n, (p, _, sentence) in enumerate(candidates)
                 if any(defines(sentence, w, hits[p].chunk.language or language, need)
                        for w in wanted if need == 2 or _few(w))}
        if found:
            return found
    return set()


def _few(wanted: set[str]) -> bool:
    """A question about one thing of one or two words ("una funzione continua"), whose
    definition may write only one of them by its defining phrase; words of three letters or
    fewer ("cos" of "cos'è") aside."""
    return 1 <= sum(len(t) >= 4 for t in wanted) <= 2


def defining_passage(question: str, search: str, hits: Sequence[Hit], language: str,
                     intent: str) -> bool:
    """Does one of the first passages define what a what-is question about one or two
    words asks about (a sentence with a defining phrase and one of them right after it, in
    a passage with both)? Always true for other questions."""
    if _cue_kind(question, intent) != "definition":
        return True
    for hit in hits[:PASSAGES]:
        lang = hit.chunk.language or language
        wanted = {t for t in tokenize(search or question, lang) if t not in ANY_STOPWORD}
        if not _few(wanted):
            return True  # a longer question: its definition is not read deeper for
        long = {t for t in wanted if len(t) >= 4}  # both words, in the passage
        if long <= set(tokenize(hit.chunk.text, lang)) and any(
                defines(u, wanted, lang, 1) for u in units(hit.chunk.text, lang)):
            return True
    return False


def defines(sentence: str, wanted: set[str], language: str, need: int = 2) -> bool:
    """Does the sentence define what the question asks about: a defining phrase with the
    question's terms right after or before it ("Si chiama estremo superiore di A il numero
    … minimo dei maggioranti di A" for "Che cos'è l'estremo superiore di un insieme?"), not
    a remark that merely names it ("Se un insieme ha un massimo, tale valore è anche
    l'estremo superiore")? At least two of the question's terms, or its one term; with
    `need` 1, one term right after the phrase ("Si dice che F è continua in x₀ se", not "Se
    f non è continua in x₀ si dice Discontinua")."""
    if not wanted:
        return False
    need = min(need, len(wanted))
    for found in _DEFINING.finditer(sentence):
        after = tokenize(sentence[found.end():], language)[:DEFINES_NEAR]
        near = after if need < 2 else (
            tokenize(sentence[:found.start()], language)[-DEFINES_NEAR:] + after)
        if len(set(near) & wanted) >= need:
            return True
    return False


def _named_bonus(words: set[str], wanted: set[str]) -> float:
    """NAMED_WEIGHT times the share of a label's `words` the question has, from NAMED_SHARE."""
    share = len(words & wanted) / len(words) if words else 0.0
    return NAMED_WEIGHT * share if share >= NAMED_SHARE else 0.0


def item_named(sentence: str, wanted: set[str], title: set[str], language: str) -> float:
    """The same bonus for a slide's item whose label the question names, the words the
    slide's title already says left out: "Update scheme:" for "the Newton-Raphson update
    rule", not "Relaxed/Damped Newton-Raphson:" on a slide titled NEWTON-RAPHSON."""
    label = _ITEM_START.match(sentence)
    if label is None or not wanted:
        return 0.0
    words = {w for w in tokenize(label.group(1), language)
             if w not in ANY_STOPWORD and w not in title}
    return _named_bonus(words, wanted)


def variant_words(line: Line) -> set[str]:
    """The words by which a slide's item names a variant of the slide's subject ("relaxed",
    "damped" in "Relaxed/Damped Newton-Raphson:" on a slide titled NEWTON-RAPHSON): a label
    that holds the title's words and more. Empty for any other sentence ("Update scheme:",
    "Disadvantage:")."""
    label = _ITEM_START.match(line.text)
    if label is None:
        return set()
    language = line.language or "en"
    title = set(tokenize(" ".join(line.hit.chunk.section_path), language))
    words = {w for w in tokenize(label.group(1), language) if w not in ANY_STOPWORD}
    return words - title if words & title else set()


# a unit that opens with a slide item's label, after the slide's shouted title, if any
_ITEM_START = re.compile(rf"^(?:[A-Z][A-Z0-9 -]+\s)?({_ITEM}):\s")


def unlabelled(sentence: str) -> str:
    """The sentence without the label of the result it states ("Teorema 42 (di Rolle).",
    "**定理 2.3.1 (单调收敛原理)**"): the label names it, the rest says it."""
    found = _LABEL.match(sentence)
    return sentence[found.end():].lstrip(" *.:：") if found else sentence


def steps_wanted(question: str, intent: str) -> bool:
    """A how, why or proof question: its answer is the steps of an explanation."""
    return _cue_kind(question, intent) in _STEPS or intent in ("explain", "compare")


_WHICH = re.compile(r"\b(?:which|what are the|quali|welche|quels|quelles|cuáles|"
                    r"what conditions?)\b|哪些|哪几|哪两|어떤|무엇들|どの|どれ", re.I)


def asks_which(question: str) -> bool:
    """Does the question ask for the members of a list ("哪些定理…", "which conditions",
    "어떤 조건")?"""
    return bool(_WHICH.search(question))


# the words that ask for something other than yes or no, in the tutor's languages
_WH = re.compile(
    r"\b(?:what|how|why|when|where|which|who|whom|whose|cosa|che|come|perch[ée]|quando|dove|"
    r"qual[ei]?|chi|quanto|quanti|was|wie|warum|wann|wo|welche[rsnm]?|wer|que|quoi|comment|"
    r"pourquoi|quand|où|quel(?:le)?s?|qu[ée]|c[óo]mo|cu[áa]ndo|d[óo]nde|cu[áa]l(?:es)?|"
    r"qui[ée]n)\b|什么|怎么|如何|为什么|哪|谁|多少|何|무엇|뭐|어떻게|왜|언제|어디|누구|어떤|몇|무슨",
    re.I)
_YES_NO_CJK = re.compile(r"吗[？?]?$|是否|ですか[？?]?$|ますか[？?]?$")


def asks_yes_no(question: str) -> bool:
    """Does the question ask for a yes or a no ("La serie armonica converge?", "Does Newton's
    method always converge?", "调和级数收敛吗？")?"""
    q = question.strip()
    if _YES_NO_CJK.search(q):
        return not _WH.search(q)
    return q.endswith(("?", "？")) and not _WH.search(q)


def has_prose(text: str) -> bool:
    """Does `text` hold a word of prose outside its LaTeX formulas?"""
    return bool(_PROSE.search(without_latex(text)))


def refers_back(sentence: str) -> bool:
    """Does the sentence open on what the one before it said ("This is Newton's iteration.",
    "Questo …", "这…")?"""
    return bool(_REFERS_BACK.match(sentence.strip()))


_CONTRAST = re.compile(r"^(?:However|But|Yet|Tuttavia|Però|Ma|Jedoch|Aber|Cependant|Mais|Sin "
                       r"embargo|Pero|但是|但|然而|不过|하지만|그러나)\b[,，]?\s*", re.I)


def without_contrast(sentence: str) -> str:
    """The sentence without the "However," that set it against the one before it, when it
    stands alone."""
    rest = _CONTRAST.sub("", sentence.strip(), count=1)
    return rest[:1].upper() + rest[1:] if rest != sentence.strip() else sentence


def asks_definition(question: str, intent: str) -> bool:
    """A question about what something is or what a result says ("Che cos'è l'estremo
    superiore?", "Cosa afferma il teorema di Weierstrass?"): its best sentence is the answer."""
    return _cue_kind(question, intent) == "definition"


def concludes(sentence: str) -> bool:
    """Does the sentence open on the conclusion of the hypotheses before it ("Allora se esiste
    il: lim f'/g' = L …" after "Teorema 45 (di De L'Hopital). Siano f,g … con: …")?"""
    return bool(_THEN.match(sentence.strip()))


def asks_proof(question: str, intent: str) -> bool:
    """A question about how a result is proved ("介值定理是用什么方法证明的？")."""
    return _cue_kind(question, intent) == "proof"


def _cue_kind(question: str, intent: str) -> str:
    """What kind of sentence the question asks for: definition, why, proof, drawback, how
    or ""."""
    q = question.lower()
    if re.search(r"\b(?:prove|proof|proved|dimostra|dimostrazione)\b|证明|증명", q):
        return "proof"
    if _DRAWBACK_ASKED.search(q):
        return "drawback"
    if WHY.search(q):
        return "why"
    if re.search(r"\b(?:defined|definit[oaie]|si definisce|définie?s?|definiert)\b|定义|정의",
                 q):
        return "definition"  # "how is it defined?" asks for the definition, not for steps
    if re.search(r"\b(?:how|come|wie|comment)\b|怎么|如何|어떻게", q):
        return "how"
    if intent == "definition" or re.search(
            r"\b(?:what is|what are|define|cos'è|cosa è|che cos|cosa afferma|cosa dice)\b|"
            r"是什么|什么是|무엇|이란", q):
        return "definition"
    return ""
