"""What LaTeX's text-mode commands print: symbols, accents, the commands whose arguments print
nothing, those wrapping theirs, and the environments' names and shapes."""

from __future__ import annotations

import re
import unicodedata

SYMBOLS = {
    "\\ldots": "…", "\\dots": "…", "\\textellipsis": "…", "\\textunderscore": "_",
    "\\LaTeX": "LaTeX", "\\TeX": "TeX", "\\LaTeXe": "LaTeX2e", "\\S": "§", "\\P": "¶",
    "\\textbackslash": "\\", "\\copyright": "©", "\\textendash": "–", "\\textemdash": "—",
    "\\ss": "ß", "\\ae": "æ", "\\AE": "Æ", "\\oe": "œ", "\\OE": "Œ", "\\o": "ø", "\\O": "Ø",
    "\\aa": "å", "\\AA": "Å", "\\l": "ł", "\\L": "Ł", "\\i": "ı", "\\j": "ȷ",
    "\\textdegree": "°", "\\euro": "€", "\\EUR": "€", "\\pounds": "£", "\\textbar": "|",
    "\\textless": "<", "\\textgreater": ">", "\\textasciitilde": "~", "\\textasciicircum": "^",
    "\\textbullet": "•", "\\dag": "†", "\\ddag": "‡", "\\slash": "/", "\\guillemotleft": "«",
    "\\guillemotright": "»", "\\textquotedblleft": "“", "\\textquotedblright": "”",
    "\\textquoteleft": "‘", "\\textquoteright": "’", "\\quad": " ", "\\qquad": " ",
    "\\enspace": " ", "\\newline": " ", "\\linebreak": " ", "\\today": "", "\\qed": "",
    "\\qedhere": "", "\\checkmark": "✓",
}
CONTROL_SYMBOLS = {
    "\\%": "%", "\\&": "&", "\\_": "_", "\\#": "#", "\\{": "{", "\\}": "}", "\\ ": " ",
    "\\\n": " ", "\\,": " ", "\\;": " ", "\\:": " ", "\\>": " ", "\\!": "", "\\-": "",
    "\\/": "", "\\@": "", "\\$": "\\$",  # an escaped dollar stays escaped: it opens no formula
}
ACCENTS = {
    "\\'": "\u0301", "\\`": "\u0300", "\\^": "\u0302", '\\"': "\u0308", "\\~": "\u0303",
    "\\=": "\u0304", "\\.": "\u0307", "\\u": "\u0306", "\\v": "\u030c", "\\H": "\u030b",
    "\\c": "\u0327", "\\k": "\u0328", "\\r": "\u030a", "\\d": "\u0323", "\\b": "\u0331",
}
# commands whose (braced) arguments print nothing: how many; optional [...] go too
SILENT = {
    "\\vspace": 1, "\\hspace": 1, "\\includegraphics": 1, "\\setlength": 2,
    "\\addtolength": 2, "\\addtocounter": 2, "\\setcounter": 2, "\\addcontentsline": 3,
    "\\pagestyle": 1, "\\thispagestyle": 1, "\\bibliographystyle": 1, "\\bibliography": 1,
    "\\graphicspath": 1, "\\definecolor": 3, "\\colorlet": 2, "\\color": 1, "\\fancyhead": 1,
    "\\fancyfoot": 1, "\\fancyhf": 1, "\\lhead": 1, "\\chead": 1, "\\rhead": 1, "\\lfoot": 1,
    "\\cfoot": 1, "\\rfoot": 1, "\\markboth": 2, "\\markright": 1, "\\hypersetup": 1,
    "\\tikzset": 1, "\\pgfplotsset": 1, "\\usetikzlibrary": 1, "\\usepgfplotslibrary": 1,
    "\\geometry": 1, "\\newgeometry": 1, "\\captionsetup": 1, "\\index": 1, "\\author": 1,
    "\\date": 1, "\\institute": 1, "\\usetheme": 1, "\\usecolortheme": 1, "\\usefonttheme": 1,
    "\\useinnertheme": 1, "\\useoutertheme": 1, "\\setbeamertemplate": 1,
    "\\setbeamercolor": 2, "\\setbeamerfont": 2, "\\newcounter": 1, "\\numberwithin": 2,
    "\\theoremstyle": 1, "\\setmainfont": 1, "\\setsansfont": 1, "\\setmonofont": 1,
    "\\setmainlanguage": 1, "\\setotherlanguage": 1, "\\selectlanguage": 1, "\\rule": 2,
    "\\nocite": 1, "\\newlength": 1, "\\settowidth": 2, "\\cline": 1, "\\logo": 1,
    "\\subtitle": 1, "\\titlegraphic": 1, "\\ProvidesPackage": 1, "\\thanks": 1,
    "\\includepdf": 1,
    "\\pgfmathsetmacro": 2,
}
# commands that print only their last argument: how many arguments before it to drop
LAST_ONLY = {
    "\\textcolor": 1, "\\href": 1, "\\raisebox": 1, "\\colorbox": 1, "\\fcolorbox": 2,
    "\\multicolumn": 2, "\\multirow": 2, "\\resizebox": 2, "\\scalebox": 1, "\\parbox": 1,
    "\\foreignlanguage": 1, "\\hyperlink": 1,
}
WRAPS = {
    "\\enquote": ("“", "”"), "\\textquote": ("“", "”"), "\\footnote": (" (", ")"),
    "\\footnotetext": (" (", ")"), "\\marginpar": (" (", ")"), "\\marginnote": (" (", ")"),
    "\\cite": ("[", "]"), "\\citep": ("[", "]"), "\\citet": ("[", "]"),
}
REFS = frozenset({"\\ref", "\\eqref", "\\autoref", "\\cref", "\\Cref", "\\pageref",
                  "\\nameref"})
LEVELS = {"\\part": 0, "\\chapter": 1, "\\section": 2, "\\subsection": 3,
          "\\subsubsection": 4, "\\paragraph": 5, "\\subparagraph": 6}
FRAME_LEVEL = 7
# display environments and the aligned form they take inside $$ ... $$
MATH_ENVS = {
    "equation": "", "equation*": "", "displaymath": "", "align": "aligned",
    "align*": "aligned", "flalign": "aligned", "flalign*": "aligned", "eqnarray": "aligned",
    "eqnarray*": "aligned", "gather": "gathered", "gather*": "gathered",
    "multline": "gathered", "multline*": "gathered", "alignat": "alignedat",
    "alignat*": "alignedat", "dmath": "", "dmath*": "",
}
LISTS = frozenset({"itemize", "enumerate", "description", "compactitem", "compactenum",
                   "inparaenum", "asparaenum"})
SKIPPED_ENVS = frozenset({"tikzpicture", "pgfpicture", "picture", "tikzcd", "forest",
                          "comment"})
ENV_ARGS = {"minipage": 1, "tabular": 1, "tabular*": 2, "tabularx": 2, "array": 1,
            "multicols": 1, "multicols*": 1, "wrapfigure": 2, "column": 1, "adjustbox": 1,
            "longtable": 1, "subfigure": 1, "thebibliography": 1}
# amsthm users nearly always \newtheorem these; with the definitions elsewhere (a class
# file), they still print their names
THEOREM_NAMES = {
    "theorem": "Theorem", "thm": "Theorem", "lemma": "Lemma", "lem": "Lemma",
    "proposition": "Proposition", "prop": "Proposition", "corollary": "Corollary",
    "cor": "Corollary", "definition": "Definition", "defn": "Definition", "defi": "Definition",
    "remark": "Remark", "rem": "Remark", "example": "Example", "exercise": "Exercise",
    "conjecture": "Conjecture", "claim": "Claim", "note": "Note", "observation": "Observation",
    "problem": "Problem", "solution": "Solution", "fact": "Fact", "notation": "Notation",
}
PROOF_NAMES = {
    "english": "Proof", "british": "Proof", "american": "Proof", "italian": "Dimostrazione",
    "german": "Beweis", "ngerman": "Beweis", "french": "Démonstration",
    "francais": "Démonstration", "spanish": "Demostración", "portuguese": "Demonstração",
    "brazil": "Demonstração", "brazilian": "Demonstração", "dutch": "Bewijs",
}
_OVERLAY = re.compile(r"^<[-\d,+|a-z ]*>")
_QUOTES = (("---", "—"), ("--", "–"), ("``", "“"), ("''", "”"), ("!`", "¡"), ("?`", "¿"))


def accented(accent: str, letter: str) -> str:
    """A letter with a TeX accent (`\\'e` -> é); an empty letter gives the accent alone."""
    mark = ACCENTS[accent]
    return unicodedata.normalize("NFC", letter[:1] + mark) + letter[1:] if letter else ""


def ligatures(text: str) -> str:
    """Text with TeX's input ligatures as the characters they print (`--` -> –)."""
    for pair, char in _QUOTES:
        text = text.replace(pair, char)
    return text


def overlay(text: str) -> int:
    """The length of a beamer overlay specification (`<2->`) at the start of `text`, or 0."""
    m = _OVERLAY.match(text)
    return m.end() if m else 0


def roman(n: int) -> str:
    """`n` in capital Roman numerals (parts are numbered so)."""
    out = []
    for value, digits in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"),
                          (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"),
                          (4, "IV"), (1, "I")):
        count, n = divmod(n, value)
        out.append(digits * count)
    return "".join(out)
