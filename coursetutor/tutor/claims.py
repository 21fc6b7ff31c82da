"""What an answer states: its claims, and the numbers, formulas and names each one carries.

Pure functions over text. The terms of a claim are compared with the sources in a normalised
form, so that maths as a PDF extracts it (`∇2f`, `x [t+1]`, `(…)−1`), maths as a LaTeX source or
the model writes it (`\\nabla^2 f`, `x^{[t+1]}`, `\\frac{1}{1-q}`) and Unicode maths (`∇²f`,
`1/(1−q)`) meet.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from ..ingest.tex_unicode import to_unicode
from ..retrieval.tokenize import has_cjk
from .markers import MARKER

# a sentence: up to . ! ? followed by a space (not "5.2" or "e.g.") or a CJK full stop, or a line
_SENTENCE = re.compile(
    r"(?:[^.!?\u3002\uff01\uff1f\n]|[.!?](?![\s)]|$))+[.!?\u3002\uff01\uff1f]*[ \t]*"
    r"(?:\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\][ \t]*)*")
_QUOTE = re.compile(r"^\s*>\s+")  # a quoted line ("> ...") is not a "greater than"
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_BARE_ENUMERATOR = re.compile(r"^\s*\d{1,2}[.)]$")
_ENUMERATOR = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)]|\(?[a-z][.)])\s+")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?:\s*/\s*\d+)?(?![\d])")
_WORD = re.compile(r"[^\W\d_]+(?:[-'][^\W\d_]+)*", re.UNICODE)
_MATH_CHARS = "=^∇√∑∏∫≤≥≈≠<>±∂"
_OPERATORS = set("+-*/·×")
_JOINING = _OPERATORS | {"=", "<", ">", "≤", "≥", "−"}
# short words that join two clauses, never two halves of one formula
_CONNECTORS = frozenset("e ed o od a ad di da de in is of or to as at by on en et ou y u è "
                        "und im zu if se si so ne ma il lo la le un an it be we".split())
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺"
_DASHES = {"\u2212": "-", "\u2013": "-", "\u2012": "-", "\u2010": "-", "\u2011": "-"}
_DROP_IN_SKELETON = re.compile(r"[\s\\$^_{}\[\]()*·×⋅]|\\left|\\right|\\cdot")
_CAPITALISED = re.compile(r"^[A-Z][a-z]+(?:-[A-Z][a-z]+)*$")
_ACRONYM = re.compile(r"^[A-Z]{2,}[0-9]*$")
_NOT_NAMES = frozenset(
    "i i'm i've i'd i'll let let's yes no note first second third then so this that these "
    "those the a an in on at for if it its we you your our they their there here when where "
    "what which who why how step steps example hint remember consider try think now next "
    "finally also however thus therefore because since both each every all".split())
NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "once": "1", "twice": "2",
    "single": "1", "double": "2", "half": "1/2", "first": "1", "second": "2", "third": "3",
    "zero.": "0", "uno": "1", "una": "1", "due": "2", "tre": "3", "quattro": "4",
    "cinque": "5", "primo": "1", "prima": "1", "secondo": "2", "seconda": "2", "terzo": "3",
    "null": "0", "eins": "1", "ein": "1", "eine": "1", "einen": "1", "zwei": "2", "drei": "3",
    "vier": "4", "erste": "1", "zweite": "2", "un": "1", "deux": "2", "trois": "3",
    "dos": "2", "tres": "3", "一": "1", "二": "2", "两": "2", "三": "3", "四": "4",
    "하나": "1", "한": "1", "둘": "2", "두": "2", "세": "3",
}


_ABBREVIATION = re.compile(
    r"(?:^|\s)(?:e\.g|i\.e|cf|vs|approx|resp|fig|eq|ex|p|pp|ca|bzw|z\.b|d\.h|es)\.$", re.IGNORECASE)


# a LaTeX formula, inline or displayed: a sentence never ends inside one
_FORMULA = re.compile(r"\$\$.+?\$\$|\\\[.+?\\\]|\\\(.+?\\\)|(?<![\\$])\$[^$\n]+?\$", re.DOTALL)
_HIDDEN = re.compile("\x00(\\d+)\x00")


def sentences(text: str) -> list[str]:
    """The sentences of `text`, each with the citation markers that follow it. A LaTeX
    formula stays whole inside its sentence (its lines and full stops end nothing)."""
    formulas: list[str] = []

    def hide(m: re.Match[str]) -> str:
        formulas.append(m.group(0))
        return f"\x00{len(formulas) - 1}\x00"

    masked = _FORMULA.sub(hide, text) if "$" in text or "\\" in text else text
    out: list[str] = []
    for piece in (s.strip() for s in _SENTENCE.findall(masked)):
        if piece and out and (_ABBREVIATION.search(out[-1]) or _BARE_ENUMERATOR.match(out[-1])):
            out[-1] = f"{out[-1]} {piece}"  # "e.g." ends no sentence, nor does a list's "2."
        elif piece:
            out.append(piece)
    if formulas:
        out = [_HIDDEN.sub(lambda m: formulas[int(m.group(1))], piece) for piece in out]
    return out


def is_claim(sentence: str) -> bool:
    """Does the sentence state something? Questions to the student and bare markers do not."""
    bare = MARKER.sub("", sentence).strip()
    if bare.endswith(("?", "\uff1f")):
        return False
    letters = sum(c.isalpha() for c in bare)
    return letters >= 8 or bool(_NUMBER.search(bare)) or any(c in bare for c in _MATH_CHARS)


def claims(text: str) -> list[str]:
    """The sentences of an answer that state something, citation markers kept."""
    return [s for s in sentences(text) if is_claim(s)]


def normalize_math(text: str) -> str:
    """LaTeX read as Unicode maths (`\\frac{1}{1-q}` → `1/(1−q)`), then NFKC (² → 2, ⁻¹ → -1,
    full-width forms), every dash and minus as '-', one space."""
    text = unicodedata.normalize("NFKC", to_unicode(text))  # ⁻ becomes U+2212: dashes after
    for dash, plain in _DASHES.items():
        text = text.replace(dash, plain)
    return " ".join(text.split())


def skeleton(text: str) -> str:
    """Maths without what notation varies on: spaces, brackets, ^ and _, multiplication dots,
    LaTeX braces; case-folded. `x^[t+1]`, `x [t+1]` and `x_{t+1}` all become `xt+1`."""
    return _DROP_IN_SKELETON.sub("", normalize_math(text)).casefold()


def numbers(text: str) -> set[str]:
    """The numbers of `text` (decimal commas read as points; '1 / 2' as '1/2'), and the ones
    written as words."""
    plain = normalize_math(MARKER.sub(" ", text))
    found = {re.sub(r"\s+", "", m.group(0)).replace(",", ".") for m in _NUMBER.finditer(plain)}
    for word in _WORD.findall(plain.casefold()):
        if word in NUMBER_WORDS:
            found.add(NUMBER_WORDS[word])
    return found


def claim_numbers(claim: str) -> set[str]:
    """The numbers a claim states: not its citation markers nor a list enumerator."""
    body = _ENUMERATOR.sub("", MARKER.sub(" ", claim))
    plain = normalize_math(body)
    return {re.sub(r"\s+", "", m.group(0)).replace(",", ".") for m in _NUMBER.finditer(plain)}


def _mathy(token: str) -> bool:
    if any(c in token for c in _MATH_CHARS) or any(c in token for c in _SUPERSCRIPTS):
        return True
    core = token.strip(".,;:")
    if core.startswith("(") and core[1:].isalpha() and core[1:2].isupper() and len(core) >= 4:
        return False  # a parenthesis opens prose: "… ∇f (x [t]) (The update formula …"
    has_digit = any(c.isdigit() for c in core)
    has_letter = any(c.isalpha() for c in core)
    # f(x), x[t], x_t, 2x, H-1: letters and digits or brackets mixed inside one token
    return (has_letter and (has_digit or any(c in core for c in "([_|"))
            and len(core) <= 40) or (has_digit and any(c in core for c in "/*"))


# a Korean particle or a Chinese or Japanese word written against a formula's last sign
_CLINGING = re.compile(r"([A-Za-z0-9)\]}′'’|\u0370-\u03ff\u2200-\u22ff])"
                       r"([\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])")
# ... and prose ends where a formula begins ("零点：∀η∈(f(a),f(b))", "则f(ξ)=η")
_CLUNG = re.compile(r"([\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff1a\uff0c\u3001\u3002])"
                    r"([^\s\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff1a\uff0c\u3001\u3002])")


_TRAILING = " .,;:\u3002\uff0c\u3001\uff1b\uff1a"  # and the CJK full stop, comma, colon


def without_latex(text: str) -> str:
    """`text` with its LaTeX formulas (`$…$`, `$$…$$`, `\\(…\\)`, `\\[…\\]`) blanked out."""
    return _FORMULA.sub(" ", text)


def formulas(claim: str) -> list[str]:
    """The formulas of a claim: runs of maths tokens that hold an operator or relation."""
    tokens = _split(normalize_math(_QUOTE.sub("", MARKER.sub(" ", claim))))
    return [" ".join(tokens[i:j]).strip(_TRAILING) for i, j in _formula_spans(tokens)]


_CODE_SPAN = re.compile(r"(`[^`\n]+`)")


def mask_formulas(text: str) -> tuple[str, list[str]]:
    """`text` with each formula replaced by a placeholder ⟨F1⟩, ⟨F2⟩ … and the formulas as
    written, so that a translation cannot rewrite them ("lim_(n→∞)aₙ=sup aₙ" came back from
    Korean as "n → ∞에 aₙ = sup aₙ"): `unmask` puts them back. A code span is one formula
    with its backticks: read by tokens, "`c = (a + b) / 2`" lost its "`c" to the prose and
    came back as "`c = (a + b) / 2``"."""
    out: list[str] = []
    found: list[str] = []
    for part in _CODE_SPAN.split(text):
        if _CODE_SPAN.fullmatch(part):
            found.append(part)
            out.append(f"⟨F{len(found)}⟩")
            continue
        masked, formulas_found = _mask_plain(part)
        out.append(_renumbered(masked, len(found)))
        found.extend(formulas_found)
    return "".join(out), found


def _renumbered(masked: str, shift: int) -> str:
    return re.sub(r"⟨F(\d+)⟩", lambda m: f"⟨F{int(m.group(1)) + shift}⟩", masked)


def _mask_plain(text: str) -> tuple[str, list[str]]:
    """`mask_formulas` of a text without code spans."""
    tokens = _split(text)
    plain = [normalize_math(token) for token in tokens]
    found: list[str] = []
    for n, (i, j) in reversed(list(enumerate(_whole_spans(plain), start=1))):
        written = " ".join(tokens[i:j])
        core = written.rstrip(_TRAILING)
        found.insert(0, core)
        tokens[i:j] = [f"⟨F{n}⟩{written[len(core):]}"]  # the punctuation after it stays
    return " ".join(tokens), found


def _whole_spans(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """The formulas' token ranges, each as a reader sees it whole: with the variable a
    formula's run leaves out before it (`x` of "x [t+1] = …") and joined to the next where
    only brackets and signs stand between them ("( ∇2f (x [t]) )−1 ∇f (x [t])")."""
    out: list[tuple[int, int]] = []
    for i, j in _formula_spans(tokens):
        if out and j <= out[-1][1]:
            continue  # inside the one before, which ran on to close its brackets
        j = _closed(tokens, i, j)
        while j - i > 1 and _opens_prose(tokens[j - 1]):
            j -= 1  # "(hanno" of "f(a)⋅ f(b)≠ 0 (hanno segno diverso)": the prose's bracket
        before = tokens[i - 1] if i else ""
        if before.isalpha() and len(before) == 1 and before.casefold() not in _CONNECTORS:
            i -= 1
        if out and not any(c.isalpha() for t in tokens[out[-1][1]:i] for c in t):
            i = out.pop()[0]
        out.append((i, j))
    return out


_FUNCTIONS = frozenset({"sin", "cos", "tan", "cot", "sec", "csc", "log", "exp", "lim", "max",
                        "min", "sup", "inf", "det", "arg", "sinh", "cosh", "tanh", "arcsin",
                        "arccos", "arctan", "sgn", "var", "cov", "tr", "rank", "diag"})


def _opens_prose(token: str) -> bool:
    """A bracket opened on a word ("(hanno", "(the"), not on maths ("(x", "(sin"): the
    prose that follows a formula, which the translation must see."""
    word = token.lstrip("([{").rstrip(".,;:")
    return (token[:1] in "([{" and len(word) >= 3 and word.isalpha() and not has_cjk(word)
            and word.casefold() not in _FUNCTIONS)


def _closed(tokens: Sequence[str], i: int, j: int) -> int:
    """The end of a formula that opens a bracket it does not close, run on over the maths
    up to where it closes ("r = (y(1) − π(x(1)), ⋯ , y(n) − π(x(n)))⊤": its ", ⋯ ," is no
    end); `j` itself when prose comes first."""
    depth = sum(t.count("(") - t.count(")") for t in tokens[i:j])
    end = j
    while depth > 0 and end < len(tokens) and _operand(tokens[end]):
        depth += tokens[end].count("(") - tokens[end].count(")")
        end += 1
    return end if depth <= 0 else j


def _operand(token: str) -> bool:
    """A token a formula may run on over: maths, an operator, a sign or a short symbol."""
    core = token.strip(".,;:")
    return (_mathy(token) or token in _OPERATORS or not any(c.isalpha() for c in token)
            or (0 < len(core) <= 2 and not has_cjk(core)))


def unmask(text: str, found: Sequence[str]) -> str | None:
    """The placeholders of `mask_formulas` replaced by their formulas; None when one is
    missing or repeated. Two placeholders the translation ran together ("⟨F1⟩⟨F2⟩", the
    word between them lost) are kept apart by a comma."""
    text = re.sub(r"⟩\s*⟨", "⟩, ⟨", text)
    for n, formula in enumerate(found, start=1):
        if text.count(f"⟨F{n}⟩") != 1:
            return None
        text = text.replace(f"⟨F{n}⟩", formula)
    return None if "⟨F" in text else text


def _split(body: str) -> list[str]:
    # Korean and Japanese particles cling to the formula before them ("f(b)인 경우", "= 0이라는"):
    # the formula ends where the script changes
    return _CLUNG.sub(r"\1 \2", _CLINGING.sub(r"\1 \2", body)).split(" ")


def _formula_spans(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """The [start, end) token ranges of the formulas among `tokens` (maths normalised)."""
    spans: list[tuple[int, int]] = []
    start = -1
    for n, token in enumerate([*tokens, ""]):
        run = start >= 0
        # (a Korean, Japanese or Chinese word is prose, however short: "인", "경우", "则")
        short = len(token.strip(".,;:")) <= 2 and bool(token.strip(".,;:")) and not (
            has_cjk(token))
        # "e", "o", "di", "of" between two formulas is prose ("(a,b) e f(a)=f(b)"), unless
        # an operator before it makes it a term ("b - a")
        prose = token.casefold() in _CONNECTORS and not (run and tokens[n - 1] in _JOINING)
        joins = token in _OPERATORS or token == "=" or (short and run and not prose)
        if token and (_mathy(token) or joins) and not has_cjk(token):  # "(介值定理)" is prose
            start = n if start < 0 else start
            if len(token) > 1 and token.endswith(":"):  # "|q| < 1: A_k = …" ends a clause
                spans.append((start, n + 1))
                start = -1
            continue
        if run:
            spans.append((start, n))
        start = -1
    found = []
    for i, j in spans:
        while j > i and (len(tokens[j - 1].strip(".,;:")) <= 2 and not _mathy(tokens[j - 1])
                         and tokens[j - 1] not in _OPERATORS
                         and not (j - i > 1 and tokens[j - 2] in _JOINING)):
            j -= 1  # a trailing short word ("is", "a") is prose, not an operand
        text = " ".join(tokens[i:j]).strip(_TRAILING)
        relation = any(c in text for c in _MATH_CHARS) or any(c in text for c in _SUPERSCRIPTS)
        if relation and len(skeleton(text)) >= 3:
            found.append((i, j))
    return found


def names(claim: str) -> list[str]:
    """Named terms of a Latin-script claim: capitalised words inside the sentence (Hessian,
    Gauss-Newton) and acronyms (BFGS)."""
    body = _LATEX_COMMAND.sub(" ", _ENUMERATOR.sub("", MARKER.sub(" ", claim)).strip())
    out = []
    for i, match in enumerate(_WORD.finditer(body)):  # \Rightarrow names nothing
        word = match.group(0)
        if word.casefold() in _NOT_NAMES or word.casefold() in NUMBER_WORDS:
            continue
        # a sentence's first word is capitalised whatever it is ("… derivabili. Esiste un
        # punto c …": a statement of two sentences)
        opens = i == 0 or body[:match.start()].rstrip().endswith((".", "!", "?"))
        if _ACRONYM.match(word) or (not opens and _CAPITALISED.match(word) and len(word) >= 3):
            out.append(word)
    return out


class SourceText:
    """The sources (and the question) prepared once for the term checks of many claims."""

    def __init__(self, texts: Iterable[str]) -> None:
        joined = "\n".join(texts)
        self.plain = normalize_math(joined).casefold()
        self.skeleton = skeleton(joined)
        self.numbers = numbers(joined)
        self.words = {w.casefold() for w in _WORD.findall(normalize_math(joined))}

    def has_number(self, number: str) -> bool:
        if number in self.numbers:
            return True
        if "/" in number:  # 1/2 written as 0.5, or spelled out
            a, b = number.split("/")
            return b != "0" and f"{int(a) / int(b):g}" in self.numbers
        return number.rstrip("0").rstrip(".") in {n.rstrip("0").rstrip(".") for n in self.numbers
                                                  if "." in n}

    def has_formula(self, formula: str) -> bool:
        return skeleton(formula) in self.skeleton

    def has_name(self, name: str) -> bool:
        key = name.casefold()
        if key in self.words or key in self.plain:
            return True
        # a plural or other inflection of a named term ("Hessians", "Jacobian's")
        stem = key[: max(5, len(key) - 3)]
        return len(key) >= 6 and any(w.startswith(stem) for w in self.words)


def is_acronym(word: str) -> bool:
    """BFGS, SGD2: a name in any language (German capitalises every noun)."""
    return bool(_ACRONYM.match(word))


def absent_names(question: str, texts: Iterable[str], language: str = "") -> list[str]:
    """The names a question asks about (Stokes, BFGS) that none of `texts` holds: a question
    about a result the course never names is not covered, however close its other words.
    German capitalises every noun, so there only acronyms count as names."""
    asked = [n for n in names(question) if language != "de" or is_acronym(n)]
    if not asked:
        return []
    found = SourceText(texts)
    return [name for name in asked if not found.has_name(name)]


MENTIONS = 2  # of the passages read, at most this many name what is mentioned in passing


def mentioned_names(question: str, texts: Sequence[str], language: str = "") -> list[str]:
    """The names a question asks about (Wolfe, Armijo) that one or two of `texts` hold, and
    no more: a name the course mentions in passing ("… to satisfy Wolfe conditions (or just
    Armijo rule)"), whose line is what the course says of it however far the question's
    other words. A name most passages hold ("Newton") is the course's subject, not a
    mention."""
    asked = [n for n in names(question) if language != "de" or is_acronym(n)]
    held = [SourceText([t]) for t in texts]
    return [n for n in dict.fromkeys(asked)
            if 1 <= sum(h.has_name(n) for h in held) <= MENTIONS]


def missing_terms(claim: str, sources: Sequence[str] | SourceText, question: str = "") -> list[str]:
    """The numbers, formulas and named terms of `claim` found neither in the sources nor in the
    question (maths normalised first)."""
    refs = [sources if isinstance(sources, SourceText) else SourceText(sources)]
    if question:
        refs.append(SourceText([question]))
    missing = [f for f in formulas(claim) if not any(r.has_formula(f) for r in refs)]
    inside = " ".join(missing)
    missing += [n for n in sorted(claim_numbers(claim))
                if n not in inside and not any(r.has_number(n) for r in refs)]
    missing += [n for n in names(claim) if not any(r.has_name(n) for r in refs)]
    return missing
