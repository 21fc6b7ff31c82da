"""LaTeX mathematics as the Unicode a person reads: `\\nabla^2 f(x)^{-1}` becomes `∇²f(x)⁻¹`,
`\\frac{1}{1-q}` becomes `1/(1−q)`.

One function, `to_unicode`, for two readers. The terminal prints a reply's formulas with it.
The answer check runs every text through it before comparing maths, so a formula a LaTeX
source (or the model) writes in LaTeX and the same formula a PDF gives in Unicode meet.

Maths is read inside `$…$`, `$$…$$`, `\\(…\\)` and `\\[…\\]`. Outside them only the commands
this module knows are rewritten (a model often writes `\\frac{1}{2}` with no delimiter), and
`^`/`_` only where they plainly mark an exponent or index (`x^2`, `x_{t+1}`, not `my_var`).
A command it does not know is left as written. Pure text in, text out; never raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_SPAN = re.compile(
    r"\$\$(?P<dd>.+?)\$\$"
    r"|\\\[(?P<bracket>.+?)\\\]"
    r"|\\\((?P<paren>.+?)\\\)"
    r"|(?<![\\$\w])\$(?P<d>[^\s$](?:[^$\n]*?[^\s$\\])?)\$(?![\w$])",
    re.DOTALL,
)
_TOKEN = re.compile(r"\\[A-Za-z]+\*?|\\.|\s+|.", re.DOTALL)
_LATEXY = re.compile(r"[\\^_$]")

SYMBOLS: dict[str, str] = {
    # Greek
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "varpi": "ϖ", "rho": "ρ",
    "varrho": "ϱ", "sigma": "σ", "varsigma": "ς", "tau": "τ", "upsilon": "υ", "phi": "ϕ",
    "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ",
    "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ",
    "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    # relations
    "leq": "≤", "le": "≤", "leqslant": "≤", "geq": "≥", "ge": "≥", "geqslant": "≥",
    "neq": "≠", "ne": "≠", "approx": "≈", "sim": "∼", "simeq": "≃", "equiv": "≡",
    "cong": "≅", "propto": "∝", "ll": "≪", "gg": "≫", "in": "∈", "notin": "∉", "ni": "∋",
    "subset": "⊂", "subseteq": "⊆", "supset": "⊃", "supseteq": "⊇", "perp": "⊥",
    "parallel": "∥", "mid": "|", "models": "⊨", "vdash": "⊢",
    # arrows
    "to": "→", "rightarrow": "→", "longrightarrow": "⟶", "leftarrow": "←", "gets": "←",
    "Rightarrow": "⇒", "implies": "⇒", "Longrightarrow": "⟹", "Leftarrow": "⇐",
    "Leftrightarrow": "⇔", "iff": "⇔", "leftrightarrow": "↔", "mapsto": "↦",
    "uparrow": "↑", "downarrow": "↓", "nearrow": "↗", "searrow": "↘",
    "longleftarrow": "⟵", "longleftrightarrow": "⟷", "Longleftarrow": "⟸",
    "Longleftrightarrow": "⟺", "longmapsto": "⟼", "hookrightarrow": "↪",
    "rightleftharpoons": "⇌", "nrightarrow": "↛", "triangleq": "≜", "coloneqq": "≔",
    "colon": ":", "backslash": "∖", "lbrack": "[", "rbrack": "]", "sqcup": "⊔",
    "bigcup": "⋃", "bigcap": "⋂", "bigoplus": "⨁", "bigotimes": "⨂", "nsubseteq": "⊈",
    "subsetneq": "⊊", "preceq": "⪯", "succeq": "⪰", "prec": "≺", "succ": "≻",
    "lesssim": "≲", "gtrsim": "≳", "asymp": "≍", "diamond": "⋄", "Box": "□",
    # operators and sets
    "cdot": "⋅", "times": "×", "div": "÷", "pm": "±", "mp": "∓", "ast": "∗", "star": "⋆",
    "circ": "∘", "bullet": "•", "oplus": "⊕", "otimes": "⊗", "cup": "∪", "cap": "∩",
    "setminus": "∖", "emptyset": "∅", "varnothing": "∅", "forall": "∀", "exists": "∃",
    "nexists": "∄", "neg": "¬", "lnot": "¬", "land": "∧", "wedge": "∧", "lor": "∨",
    "vee": "∨", "sum": "∑", "prod": "∏", "coprod": "∐", "int": "∫", "iint": "∬",
    "iiint": "∭", "oint": "∮", "infty": "∞", "partial": "∂", "nabla": "∇", "prime": "′",
    "angle": "∠", "triangle": "△", "top": "ᵀ", "bot": "⊥", "ell": "ℓ", "hbar": "ℏ",
    "Re": "ℜ", "Im": "ℑ", "aleph": "ℵ", "surd": "√",
    "ldots": "…", "dots": "…", "cdots": "…", "dotsc": "…", "dotsb": "…", "vdots": "⋮",
    "ddots": "⋱",
    # delimiters
    "langle": "⟨", "rangle": "⟩", "lceil": "⌈", "rceil": "⌉", "lfloor": "⌊", "rfloor": "⌋",
    "lvert": "|", "rvert": "|", "vert": "|", "lVert": "‖", "rVert": "‖", "Vert": "‖",
    "|": "‖", "{": "{", "}": "}", "%": "%", "$": "$", "&": "&", "#": "#", "_": "_",
    "lbrace": "{", "rbrace": "}", "S": "§",
    # KaTeX's aliases, which notes written for the web use ("$\exist\delta>0$")
    "exist": "∃", "lang": "⟨", "rang": "⟩", "empty": "∅", "isin": "∈", "infin": "∞",
    "larr": "←", "rarr": "→", "Larr": "⇐", "Rarr": "⇒", "harr": "↔", "Harr": "⇔",
    "lrarr": "⇔", "sub": "⊂", "sube": "⊆", "supe": "⊇", "plusmn": "±", "reals": "ℝ",
    "Reals": "ℝ", "natnums": "ℕ", "cnums": "ℂ", "Complex": "ℂ", "R": "ℝ", "N": "ℕ", "Z": "ℤ",
    # spaces
    ",": " ", ";": " ", ":": " ", " ": " ", "quad": " ", "qquad": " ", "!": "",
}
FUNCTIONS = frozenset(
    "sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh coth log ln lg exp lim "
    "liminf limsup max min sup inf det dim ker arg deg gcd lcm Pr mod".split())
# commands whose argument is read as it stands (a font, a box of words)
_ARGUMENT_AS_IS = frozenset(
    "text textrm textbf textit textsf texttt emph mbox mathrm mathbf mathit mathsf mathtt "
    "boldsymbol bm mathcal mathscr mathfrak operatorname operatorname* hbox".split())
# commands that draw nothing of their own
_SILENT = frozenset(
    "left right big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr middle limits nolimits "
    "displaystyle textstyle scriptstyle nonumber notag".split())
_DROP_WITH_ARGUMENT = frozenset({"label", "hspace", "vspace", "phantom", "hphantom",
                                 "vphantom"})
_ACCENTS = {"hat": "\u0302", "widehat": "\u0302", "bar": "\u0304", "overline": "\u0305",
            "tilde": "\u0303", "widetilde": "\u0303", "vec": "\u20d7", "dot": "\u0307",
            "ddot": "\u0308", "check": "\u030c", "breve": "\u0306", "underline": "\u0332"}
_BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "P": "ℙ", "E": "𝔼"}
_MATRICES = frozenset({"matrix", "pmatrix", "bmatrix", "Bmatrix", "vmatrix", "Vmatrix",
                       "smallmatrix", "array"})
_SUPER = dict(zip("0123456789+-−=()nijkmxyabcdefghlopr stuvwzT",
                  "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿⁱʲᵏᵐˣʸᵃᵇᶜᵈᵉᶠᵍʰˡᵒᵖʳ ˢᵗᵘᵛʷᶻᵀ", strict=True))
_SUB = dict(zip("0123456789+-−=()aeoxhklmnpstijruv",
                "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑₒₓₕₖₗₘₙₚₛₜᵢⱼᵣᵤᵥ", strict=True))
_SUPER_KEEP = frozenset("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱʲᵏᵐˣʸᵃᵇᶜᵈᵉᶠᵍʰˡᵒᵖʳˢᵗᵘᵛʷᶻᵀ′*")
_SUB_KEEP = frozenset("₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₒₓₕₖₗₘₙₚₛₜᵢⱼᵣᵤᵥ")
_OPERATOR = re.compile(r"[\s+\-−*/=<>≤≥≠≈→,;:|]")
_SCRIPT_AFTER = re.compile(r"[\w)\]}′|‖]$")
_SPACES = re.compile(r"[ \t]+")
_OPEN_SPACE = re.compile(r"([(\[⟨]) ")
_CLOSE_SPACE = re.compile(r" ([)\]⟩])")


def to_unicode(text: str) -> str:
    """`text` with its LaTeX mathematics written as Unicode maths (see the module's notes)."""
    if not _LATEXY.search(text):
        return text
    out: list[str] = []
    at = 0
    for m in _SPAN.finditer(text):
        out.append(_convert(text[at:m.start()], maths=False))
        body = next(g for g in m.groups() if g is not None)
        out.append(_tidy(_convert(body, maths=True)))
        at = m.end()
    out.append(_convert(text[at:], maths=False))
    return "".join(out)


def _tidy(maths: str) -> str:
    """Converted maths with one space at most, and none inside brackets."""
    maths = _SPACES.sub(" ", maths).strip()
    return _CLOSE_SPACE.sub(r"\1", _OPEN_SPACE.sub(r"\1", maths))


def _convert(text: str, maths: bool) -> str:
    if not text or (not maths and not _LATEXY.search(text)):
        return text
    return _Reader(_TOKEN.findall(text), maths).read_all()


class _Reader:
    """Reads a list of LaTeX tokens left to right, a command with its arguments at a time."""

    def __init__(self, tokens: list[str], maths: bool) -> None:
        self.tokens = tokens
        self.i = 0
        self.maths = maths

    def read_all(self) -> str:
        return self._sequence(stop=None)

    def _sequence(self, stop: str | None) -> str:
        parts: list[str] = []
        while self.i < len(self.tokens):
            tok = self.tokens[self.i]
            if stop == r"\end" and tok == stop:
                self.i += 1
                self._group()
                break
            if stop is not None and tok == stop:
                self.i += 1
                break
            if stop is None and tok == "}" and self.maths:
                self.i += 1  # a stray closing brace
                continue
            self.i += 1
            parts.append(self._token(tok, "".join(parts)))
        return "".join(parts)

    def _token(self, tok: str, before: str) -> str:
        if tok.startswith("\\") and len(tok) > 1:
            out = self._command(tok[1:])
            letter = bool(out) and (out[-1].isalpha() or out[-1] in "∇∂")
            if self.maths and letter and tok[1:] in SYMBOLS and tok[1:].isalpha():
                self._join_word()
            return out
        if tok == "{":
            inner = self._sequence(stop="}")
            return inner if self.maths else "{" + inner + "}"
        if tok in "^_" and (self.maths or self._plain_script(before)):
            arg = self._argument()
            return _script(arg, superscript=tok == "^")
        if self.maths:
            if tok == "&":
                return " "
            if tok == "-":
                return "−"
            if tok == "~":
                return " "
            if tok.isspace():
                return " "
        return tok

    def _plain_script(self, before: str) -> bool:
        """Outside maths: `^`/`_` after a letter, digit or bracket and before a braced group
        or a single character that ends the word (`x^2`, `x_{t+1}`, not `my_var`)."""
        if not _SCRIPT_AFTER.search(before):
            return False
        nxt = self.tokens[self.i] if self.i < len(self.tokens) else ""
        if nxt in ("{", "-") or nxt.startswith("\\"):
            return True
        after = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else ""
        return len(nxt) == 1 and nxt.isalnum() and not after.isalnum()

    def _join_word(self) -> None:
        """TeX reads no space after a control word: `\\alpha x` is `αx` (`\\alpha > 0`
        keeps its space before the relation)."""
        j = self.i
        while j < len(self.tokens) and self.tokens[j].isspace():
            j += 1
        if j < len(self.tokens) and (self.tokens[j].isalnum() or self.tokens[j][0] == "\\"):
            self.i = j

    def _skip_spaces(self) -> None:
        while self.i < len(self.tokens) and self.tokens[self.i].isspace():
            self.i += 1

    def _group(self) -> str:
        """A braced group's tokens as source text (an environment's name)."""
        self._skip_spaces()
        if self.i >= len(self.tokens) or self.tokens[self.i] != "{":
            return ""
        depth, start = 0, self.i
        while self.i < len(self.tokens):
            tok = self.tokens[self.i]
            self.i += 1
            depth += tok == "{"
            depth -= tok == "}"
            if depth == 0:
                break
        return "".join(self.tokens[start + 1:self.i - 1])

    def _argument(self) -> str:
        """The next argument, converted: a braced group or a single token."""
        self._skip_spaces()
        if self.i >= len(self.tokens):
            return ""
        tok = self.tokens[self.i]
        self.i += 1
        if tok == "{":
            was, self.maths = self.maths, True
            try:
                return self._sequence(stop="}")
            finally:
                self.maths = was
        if tok.startswith("\\") and len(tok) > 1:
            return self._command(tok[1:])
        return "−" if tok == "-" else tok

    def _optional(self) -> str | None:
        self._skip_spaces()
        if self.i < len(self.tokens) and self.tokens[self.i] == "[":
            self.i += 1
            return self._sequence(stop="]")
        return None

    def _command(self, name: str) -> str:
        if name in ("(", ")", "[", "]"):
            return ""
        if name == "\\":
            return "; " if self.maths else "\n"
        if name in SYMBOLS:
            return SYMBOLS[name]
        if name in FUNCTIONS:
            return name
        if name in _SILENT:
            return self._delimiter() if name.startswith(("left", "right", "big", "Big",
                                                         "middle")) else ""
        handler = _HANDLERS.get(name)
        if handler is not None:
            return handler(self)
        if name in _ARGUMENT_AS_IS:
            return self._argument()
        if name in _DROP_WITH_ARGUMENT:
            self._argument()
            return ""
        if name in _ACCENTS:
            return self._argument() + _ACCENTS[name]
        if self.i < len(self.tokens) and self.tokens[self.i] == "{":
            return f"\\{name}{{{self._argument()}}}"  # unknown: as written, its argument read
        return "\\" + name

    def _delimiter(self) -> str:
        """After \\left, \\right or \\big: the delimiter itself ('.' is none)."""
        self._skip_spaces()
        if self.i >= len(self.tokens):
            return ""
        tok = self.tokens[self.i]
        self.i += 1
        if tok == ".":
            return ""
        if tok.startswith("\\") and len(tok) > 1:
            return SYMBOLS.get(tok[1:], tok[1:])
        return tok

    def frac(self) -> str:
        top, bottom = self._argument(), self._argument()
        return f"{_atom(top)}/{_atom(bottom)}"

    def sqrt(self) -> str:
        index = self._optional()
        body = self._argument()
        root = {"3": "∛", "4": "∜"}.get(index or "", "√")
        prefix = _script(index, superscript=True) if index and root == "√" else ""
        return f"{prefix}{root}{_atom(body)}"

    def binom(self) -> str:
        n, k = self._argument(), self._argument()
        return f"C({n}, {k})"

    def mathbb(self) -> str:
        arg = self._argument()
        return "".join(_BLACKBOARD.get(c, c) for c in arg)

    def negated(self) -> str:
        nxt = self._argument()
        return {"=": "≠", "∈": "∉", "⊂": "⊄", "≡": "≢", "<": "≮", ">": "≯"}.get(
            nxt, nxt + "\u0338")

    def pmod(self) -> str:
        return f" (mod {self._argument()})"

    def over_under(self) -> str:
        self._argument()  # what is written above or below
        return self._argument()

    def underbrace(self) -> str:
        """What the brace spans, without the note written on it ("punto medio" of
        `\\overbrace{\\frac{f(b)-f(a)}{b-a}}^{\\mbox{punto medio}}` is no exponent)."""
        spanned = self._argument()
        self._skip_spaces()
        if self.i < len(self.tokens) and self.tokens[self.i] in ("^", "_"):
            self.i += 1
            self._argument()
        return spanned

    def begin(self) -> str:
        env = self._group().rstrip("*")
        if env == "array":
            self._group()  # the column spec
        was, self.maths = self.maths, True
        try:
            body = self._sequence(stop=r"\end").strip().rstrip(";").strip()
        finally:
            self.maths = was
        body = " ".join(body.split())
        if env in _MATRICES:
            return "[" + body.replace(" ; ", "; ") + "]"
        if env == "cases":
            return "{ " + body + " }"
        return body


_HANDLERS: dict[str, Callable[[_Reader], str]] = {
    "frac": _Reader.frac, "dfrac": _Reader.frac, "tfrac": _Reader.frac, "cfrac": _Reader.frac,
    "sqrt": _Reader.sqrt, "binom": _Reader.binom, "dbinom": _Reader.binom,
    "tbinom": _Reader.binom, "mathbb": _Reader.mathbb, "not": _Reader.negated,
    "pmod": _Reader.pmod, "overset": _Reader.over_under, "underset": _Reader.over_under,
    "stackrel": _Reader.over_under, "underbrace": _Reader.underbrace,
    "overbrace": _Reader.underbrace, "begin": _Reader.begin,
}


def _atom(text: str) -> str:
    """`text` bracketed when it is more than one term (`1−q` → `(1−q)`, not `n(n+1)`)."""
    text = text.strip()
    if not text or _bracketed(text):
        return text
    depth = 0
    for c in text:
        depth += c in "([{"
        depth -= c in ")]}"
        if depth == 0 and _OPERATOR.match(c):
            return f"({text})"
    return text


def _bracketed(text: str) -> bool:
    """Whether `text` is one bracketed whole: `(a+b)`, not `(a)+(b)`."""
    if text[0] not in "([" or text[-1] not in ")]":
        return False
    depth = 0
    for i, c in enumerate(text):
        depth += c in "(["
        depth -= c in ")]"
        if depth == 0 and i < len(text) - 1:
            return False
    return True


def _script(text: str, superscript: bool) -> str:
    """An exponent or index in Unicode super- or subscripts where every character has one,
    else after '^' or '_' (bracketed when longer than one character)."""
    text = text.strip()
    table, keep, mark = (_SUPER, _SUPER_KEEP, "^") if superscript else (_SUB, _SUB_KEEP, "_")
    if text and all(c in table or c in keep for c in text):
        return "".join(table.get(c, c) for c in text)
    if len(text) <= 1 or _bracketed(text):
        return mark + text
    return f"{mark}({text})"
