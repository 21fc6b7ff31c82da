"""A statement keeps the formula its evidence sentence gives.

A small model restating a sentence that introduces a formula often stops before it ("The
update rule is:", "è definita come") or says it in words alone, and the student misses the
one thing asked. The formula is then taken from the cited sentence as the page writes it
(LaTeX where the source is LaTeX, the PDF's maths otherwise) and never rewritten by the
model, so a completed statement is as exact as its sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

from ..ingest.tex_unicode import to_unicode
from ..retrieval.language import ANY_STOPWORD
from ..retrieval.tokenize import has_cjk
from .claims import formulas, skeleton
from .markers import MARKER
from .wording import dangles

MIN_SKELETON = 5  # a formula shorter than this, without spaces and brackets, is a symbol
COVERED = 0.8  # a statement holding this share of a formula's skeleton already gives it
# a relation sign: what makes a run of maths a formula that says something
RELATION = re.compile(r"[=<>≤≥≈≠→]")
_AS_FOLLOWS = re.compile(
    r"\b(?:as follows|the following|given below|come segue|il seguente|la seguente|"
    r"seguenti|wie folgt|folgende[nrs]?|comme suit|suivante?s?|como sigue|siguientes?)\b|"
    r"如下|以下|다음과 같|아래와 같|次のよう", re.I)
BEFORE = 40  # characters before a formula read for the question's words
_WHERE = {"en": "where", "it": "dove", "de": "wobei", "fr": "où", "es": "donde", "pt": "onde",
          "zh": "其中", "ja": "ここで", "ko": "여기서"}
_PLACEHOLDER = re.compile(r"\.\.\.|…")  # "x_{n+1} = ..." is an exercise's blank
_FUNCTIONS = frozenset("sin cos tan log ln exp lim max min det sup inf arg".split())
_WORDS = re.compile(r"[^\W\d_]+", re.UNICODE)
# a formula as a source marks it: LaTeX maths, or a Markdown code span (`x_{n+1} = ...`)
_MARKED = re.compile(r"\$\$.+?\$\$|\\\[.+?\\\]|\\\(.+?\\\)|(?<![\\$])\$[^$\n]+?\$|`[^`\n]+`",
                     re.DOTALL)
# a question that asks for a formula: the rule, the equation, what something equals
_ASKS_FORMULA = re.compile(
    r"\b(?:formula|formulas|formulae|equation|equations|update rule|update scheme|expression|"
    r"converges? to|equal to|what is the sum|value of|formule|formel|gleichung|regola|"
    r"equazione|a cosa converge|quanto vale|somma|fórmula|ecuación)\b|公式|方程|等式|等于|"
    r"多少|표현식|공식|방정식|식은", re.I)


# a why question asks for a reason, whatever it names: "为什么奇数次多项式方程至少有一个实根？"
# names equations (方程) and got the example's equation appended to its answer
WHY = re.compile(r"\b(?:why|perché|perche|warum|pourquoi)\b|为什么|为何|왜", re.I)


def asks_formula(question: str) -> bool:
    """Does the question ask for a formula (a rule, an equation, what a sum equals)?"""
    return bool(_ASKS_FORMULA.search(question)) and not WHY.search(question)


def line_formulas(line: str) -> list[tuple[int, str]]:
    """The formulas of an evidence sentence as it writes them, with where each starts: its
    LaTeX spans and code spans, and the runs of maths around a relation sign outside them (a
    PDF's text layer, a displayed formula set as plain text)."""
    marked = [(m.start(), m.group(0)) for m in _MARKED.finditer(line)]
    plain = line
    for at, span in marked:  # a marked span is no part of a plain run
        plain = plain[:at] + "\u00a7" * len(span) + plain[at + len(span):]
    return sorted(marked + _plain_formulas(plain))


def _plain_formulas(line: str) -> list[tuple[int, str]]:
    """The runs of maths tokens around each relation sign of plain text."""
    tokens = [(m.start(), m.group(0)) for m in re.finditer(r"\S+", line)]
    out: list[tuple[int, str]] = []
    taken = -1
    for n, (_, token) in enumerate(tokens):
        if n <= taken or not RELATION.search(token) or "\u00a7" in token:
            continue
        first = n
        while first > 0 and _maths_token(tokens[first - 1][1]):
            first -= 1
        last = n
        while last + 1 < len(tokens) and _maths_token(tokens[last + 1][1]):
            last += 1
        taken = last
        start, end = tokens[first][0], tokens[last][0] + len(tokens[last][1])
        if _readable([t for _, t in tokens[first:last + 1]]):
            out.append((start, line[start:end].rstrip(".,;")))
    return out


def _readable(tokens: Sequence[str]) -> bool:
    """A formula a student can read, not a matrix or a fraction a PDF flattened into glyphs
    ("−x [0] 1 −x [0] 2 ! = 0"): no stray "!", and at most two bare digits, the entries
    of a matrix set out in a row."""
    return not any("!" in t for t in tokens) and sum(t.isdigit() for t in tokens) <= 2


def missing_formula(statement: str, lines: Sequence[str], language: str = "",
                    opened: bool = False, question: str = "") -> str | None:
    """The formula of `lines` that `statement` should give and does not, or None when its
    sentences leave the choice open: for a lead-in, the formula after the words it stops on;
    else the one right after the question's words in its sentence ("... la serie converge a
    $\\frac{1}{q+1}$" for "A cosa converge la serie?"); else, for a lead-in, its sentences'
    one formula; else their one equation, in the first sentence that has any."""
    have = _shape(MARKER.sub(" ", statement))
    found = [(n, at, f.strip()) for n, line in enumerate(lines)
             for at, f in line_formulas(line)
             if len(_shape(f)) >= MIN_SKELETON and not _PLACEHOLDER.search(f)
             and not _covered(_shape(f), have)]
    if not found:
        return None
    if opened:
        after = _after_words(statement, lines, language)
        following = [f for n, at, f in found if after is not None and (n, at) >= after]
        if following:
            return following[0]
    asked = _content_words(question)
    scores = [_asked_before(lines[n], at, asked) for n, at, _ in found]
    if max(scores) > 0:
        best = [f for score, (_, _, f) in zip(scores, found, strict=True)
                if score == max(scores)]
        return best[0] if len(best) == 1 else None
    if opened and len(found) == 1:
        return found[0][2]
    equations = [(n, f) for n, _, f in found if "=" in f]
    first = [f for n, f in equations if n == equations[0][0]] if equations else []
    return first[0] if len(first) == 1 else None


def defining(statement: str, lines: Sequence[str], question: str = "") -> str | None:
    """The equation of `lines` that defines a symbol the statement's formula uses and leaves
    undefined (`d[t] = −(∇²f(x[t]))⁻¹∇f(x[t])` for a statement `x[t+1] = x[t] + d[t]`)."""
    own = _shape(" ".join(stated_formulas(statement, question)))
    if not own:
        return None
    for line in lines:
        for _, found in line_formulas(line):
            left, _, right = found.partition("=")
            symbol = _shape(left)
            if right and len(symbol) >= 2 and symbol in own and f"{symbol}=" not in own \
                    and not _covered(_shape(found), own):
                return found.strip()  # (a symbol the statement defines itself is no gap)
    return None


def stated_formulas(statement: str, question: str = "") -> list[str]:
    """The formulas a statement gives that its question does not already hold."""
    asked = _shape(question)
    return [f for f in formulas(MARKER.sub(" ", statement)) if not _covered(_shape(f), asked)]


def _content_words(text: str) -> set[str]:
    return {w for w in _WORDS.findall(text.casefold()) if len(w) >= 3 and w not in ANY_STOPWORD}


def _asked_before(line: str, at: int, asked: set[str]) -> int:
    """How many of the question's words the few words before a formula hold."""
    before = set(_WORDS.findall(line[max(0, at - BEFORE):at].casefold()))
    return len(asked & before)


def _after_words(statement: str, lines: Sequence[str], language: str) -> tuple[int, int] | None:
    """Where, in `lines`, the words the statement stops on end (same language only)."""
    words = _WORDS.findall(MARKER.sub(" ", statement).casefold())[-2:]
    if len(words) < 2 or has_cjk(statement):
        return None
    pattern = re.compile(r"\W+".join(map(re.escape, words)), re.I)
    for n, line in enumerate(lines):
        m = pattern.search(line)
        if m:
            return (n, m.end())
    return None


def _maths_token(token: str) -> bool:
    """A token of a formula in plain text: short, or with a maths sign, bracket or digit,
    never a word of prose (four letters or more in a row, a trailing colon)."""
    if token.endswith((":", "\uff1a")) or re.search(r"[^\W\d_]{4,}", token) or \
            "\u00a7" in token:
        return False
    if token.isascii() and token.isalpha() and len(token) >= 2:
        return token.casefold() in _FUNCTIONS  # "to", "is", "of" are prose; "sin", "ln" maths
    return len(token) <= 3 or bool(re.search(r"[\d()\[\]{}=+\-−*/^∇∑∫√≤≥<>≈∈→⊤∂·|]",
                                             token))


def lead_in(statement: str, language: str) -> bool:
    """Does the statement stop where what it introduces should follow ("The rule is:", "X
    is defined as follows.", "다음과 같이 정의됩니다.")?"""
    bare = MARKER.sub(" ", statement).strip()
    return bare.endswith((":", "\uff1a")) or dangles(bare, language) or as_follows(bare)


def as_follows(statement: str) -> bool:
    """Does the statement end on "as follows" (or "the following", "come segue", "如下",
    "다음과 같이" and a verb): a sentence that announces what it never says?"""
    bare = MARKER.sub(" ", statement).strip().rstrip(".!\u3002\uff01 ")
    found = [m for m in _AS_FOLLOWS.finditer(bare)]
    if not found:
        return False
    rest = bare[found[-1].end():]
    return len(rest) <= 8 if has_cjk(bare) else len(rest.split()) <= 2


def complete(statement: str, lines: Sequence[str], language: str,
             question: str = "", steps: bool = False) -> str | None:
    """The statement with the formula of its sentences that it leaves out; None when it
    needs nothing, or its sentences leave the choice open. A lead-in gets what it
    introduces; for a question that asks for a formula, a statement that gives none (beyond
    the question's own) gets the sentence's, and one that gives a formula with a symbol
    its sentence defines gets that definition ("where d[t] = ..."). Where the reply is a
    list of `steps`, a lead-in that announces them ("Il metodo di bisezione funziona come
    segue:") is no step and gets nothing: given the midpoint's formula, it said what the
    next step said again."""
    body = MARKER.sub(" ", statement).strip()
    opened = lead_in(body, language)
    if opened and steps and as_follows(body):
        return None
    stated = stated_formulas(body, question)
    if opened or (asks_formula(question) and not stated):
        found = missing_formula(body, lines, language, opened, question)
        return None if found is None else _joined(body, found, language, opened)
    if asks_formula(question) and (definition := defining(body, lines, question)):
        where = _WHERE.get(language, "where")
        return f"{body.rstrip('.!。！ ')}, {where} {definition}"
    told = with_antecedent(body, lines)
    bounded = with_bounds(told or body, lines) or told
    return with_gloss(bounded or body, lines) or bounded


# words in parentheses right after a formula, which say what it means: "f(a)⋅ f(b)≠ 0
# (hanno segno diverso)"; they open in lower case ("(Telescopica)" is a name)
_GLOSS = re.compile(r"\s*[(（]([^\W\d_A-ZÀ-Ý][^()（）=<>≤≥≠∈\d]{4,60})[)）]")
GLOSS_WORDS = 2  # words of three letters or more a gloss has: "(o Telescopica)" has one


def with_gloss(statement: str, lines: Sequence[str]) -> str | None:
    """The statement with the words its sentence explains a formula with, in parentheses
    right after it, where the statement writes that formula as the sentence does and leaves
    them out: the notes' "f(a)⋅ f(b)≠ 0 (hanno segno diverso)" was restated as "f(a)⋅ f(b)≠
    0" alone, which says less (and, as the notes write it, says it wrong). None when nothing
    is added."""
    for line in (form for raw in lines for form in dict.fromkeys((raw, to_unicode(raw)))):
        # as the page writes it ("$f(a)\\cdot f(b)\\neq 0$"), and as the model read it
        for at, formula in line_formulas(line):
            gloss = _GLOSS.match(line, at + len(formula))
            if gloss is None or len([w for w in _WORDS.findall(gloss.group(1))
                                     if len(w) >= 3]) < GLOSS_WORDS:
                continue
            said = statement.find(formula)
            if said < 0 or gloss.group(1).casefold() in statement.casefold():
                continue
            end = said + len(formula)
            return f"{statement[:end]} ({gloss.group(1).strip()}){statement[end:]}"
    return None


# a Greek letter its sentence bounds ("Use step size α > 0 with …"), and the same letter
# where a statement writes it bare
_GREEK = "α-ωΑ-Ω"
_BOUND = re.compile(rf"(?<![\w{_GREEK}])([{_GREEK}])\s*([<>≤≥]\s*[−-]?\d[\d.]*)(?![\w(.])")
# a word that says the bound already ("due numeri positivi")
_SIGNED = re.compile(r"positiv|negativ|nonnegativ|non-negativ|正|负|양의|양수|음수|陽|負", re.I)
_BARE = rf"(?<![\w{_GREEK}])%s(?![\w{_GREEK}(\[_^]|\s*[<>≤≥≠∈=])"


def with_bounds(statement: str, lines: Sequence[str]) -> str | None:
    """The statement with the bound its sentences give a Greek letter it writes bare:
    "The step size α > 0 must satisfy the Wolfe conditions" where the model wrote "step
    size α" from "Use step size α > 0 with … to satisfy Wolfe conditions" (a step size of 0
    or less is no step). A bound by a number only, and none where the statement says it in
    words ("se α e β sono due numeri positivi"); the first bare α only; None when nothing is
    added."""
    if _SIGNED.search(statement):
        return None
    bounds: dict[str, str] = {}  # "α" -> "> 0", spaced as a reader writes it
    for line in lines:
        for letter, bound in _BOUND.findall(to_unicode(line)):
            bounds.setdefault(letter, f"{bound[0]} {bound[1:].strip()}")
    bounded = {letter for letter, _ in _BOUND.findall(statement)}
    out = statement
    for letter, bound in bounds.items():
        if letter not in bounded:
            out = re.sub(_BARE % re.escape(letter), f"{letter} {bound}", out, count=1)
    return None if out == statement else out


# a word that points back to a place the statement does not name ("此处导数为 0": here, where?)
_HERE = re.compile(r"此处|这里|此时|该处|在此|ここで|여기서|"
                   r"\b(?:here|at this point|qui|hier|ici|aquí)\b", re.I)
_PROOF_MARK = re.compile(r"^[\s*_→]*(?:proof|dimostrazione|beweis|preuve|demostración|证明|証明|"
                         r"증명)\s*[.:：。]?[\s*_]*", re.I)
HEAD = 6  # characters (spaces aside) of the statement its sentence must write the same
MAX_BEFORE = 200  # characters of the sentence before it, at most


def _squeezed(text: str) -> str:
    return "".join(c for c in text if not c.isspace())


def with_antecedent(statement: str, lines: Sequence[str]) -> str | None:
    """A statement that restates the end of its sentence word for word and points back to
    what that sentence says before it ("根据 引理 5.1.1, 此处导数为 0." from "研究函数最大最小值,
    … 最大最小值必有至少一者在 (a,b) 中. 根据 引理 5.1.1, 此处导数为 0."), with that part
    before it: "here" is then somewhere. None when it does not point back, or restates no
    sentence's end."""
    body = MARKER.sub(" ", statement).strip()
    if not _HERE.search(body):
        return None
    head = _squeezed(body)[:HEAD]
    for line in lines:
        plain = _PROOF_MARK.sub("", to_unicode(line)).strip()
        at = _squeezed(plain).find(head)
        if at <= 0:
            continue
        letters = [i for i, c in enumerate(plain) if not c.isspace()]
        before = plain[:letters[at]].strip()  # up to where the statement's words begin
        if before and len(before) <= MAX_BEFORE:
            if shouted(before):  # a slide's title: where "here" is
                return f"{_title_cased(before, plain)}: {body}"
            return f"{before} {body}"
    return None


_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def shouted(text: str) -> bool:
    """Is `text` a title in capitals ("NEWTON-RAPHSON VS. GD ON BRANIN FUNCTION"), two words
    or more?"""
    words = _WORD.findall(text)
    return len(words) >= 2 and all(w.isupper() for w in words)


def _title_cased(title: str, line: str) -> str:
    """A title in capitals as a reader writes it: each word as the line writes it elsewhere
    ("Newton-Raphson"), a short word that is no word of prose as it stands ("GD"), the
    others capitalised, small words small ("Newton-Raphson vs. GD on Branin Function"). In
    capitals, the translation took each word for a name and the Chinese reply read
    "牛顿-拉弗森法（NEWTON-RAPHSON）在 VS 和 GD 上对 BRANIN FUNCTION … 进行迭代"."""
    written = {w.casefold(): w for w in _WORD.findall(line) if not w.isupper()}
    out = []
    for n, word in enumerate(title.split()):
        core = word.strip(".,:;()")
        key = core.casefold()
        if key in written:
            cased = written[key]
        elif key in ("vs", "v") or (key in ANY_STOPWORD and n):
            cased = key
        elif len(core) <= 3:
            cased = core
        else:
            cased = core.capitalize()
        out.append(word.replace(core, cased, 1) if core else word)
    return " ".join(out)


# a result a Chinese or Japanese sentence names ("有限覆盖定理", "Cauchy 收敛原理")
_CJK_RESULT = re.compile(r"(?:[\u4e00-\u9fff]{2,8}|[A-Z][a-z]+\s?)(?:定理|原理|引理|准则|判别法)")
_LABEL_START = re.compile(r"^\s*\*\*[^*]{1,60}\*\*\s*")  # "**定理 2.4.2 (区间套)** "


def items(sentence: str) -> list[str]:
    """The results a Chinese or Japanese sentence names ("区间套定理, 有限覆盖定理,
    Weierstrass 定理, 聚点定理 …; … Dedekind 定理 …, 而 Cauchy 收敛原理 …"), its label aside.
    (In a Latin-script sentence capitalised words name too many other things.)"""
    body = _unlabelled(sentence)
    return list(dict.fromkeys(m.group(0).replace(" ", "") for m in _CJK_RESULT.finditer(body)))


def _unlabelled(sentence: str) -> str:
    return _LABEL_START.sub("", to_unicode(sentence)).strip()


def every_item(statement: str, lines: Sequence[str]) -> tuple[int, str] | None:
    """For a question that asks which ones: a statement that leaves out some of the results
    its sentence lists ("… 与 Dedekind 定理等价, 而 Cauchy 收敛原理也与它们等价" from a
    sentence that names five) is that sentence as the page gives it, and which one (None
    when it names them all, or its sentences list fewer than three)."""
    said = MARKER.sub(" ", statement).replace(" ", "").casefold()
    for n, line in enumerate(lines):
        listed = items(line)
        if len(listed) >= 3 and any(item.casefold() not in said for item in listed):
            return n, _unlabelled(line)
    return None


def _joined(body: str, found: str, language: str, opened: bool) -> str:
    """A lead-in, or a statement without its formula, followed by the formula."""
    colon = "\uff1a" if language in ("zh", "ja") else ": "
    if opened and body.endswith((":", "\uff1a")):
        return f"{body}{'' if body.endswith(chr(0xFF1A)) else ' '}{found}"
    if opened and not as_follows(body):
        return f"{body} {found}"  # "è definita come" + the formula
    return f"{body.rstrip('.!。！ ')}{colon}{found}"


def _shape(formula: str) -> str:
    """A formula's skeleton (claims.skeleton), without the backticks of a code span."""
    return skeleton(formula.replace("`", " "))


def _covered(shape: str, have: str) -> bool:
    """Does `have` (a statement's skeleton) already hold the formula `shape`, or most of it?"""
    if shape in have:
        return True
    # the longest run of the formula the statement writes the same way
    match = SequenceMatcher(None, shape, have, autojunk=False).find_longest_match(
        0, len(shape), 0, len(have))
    return match.size >= COVERED * len(shape)
