"""The reply's language: held back until its script shows, translated when it is wrong.

A small model given English sources and a Korean question often answers in English however
the prompt asks. For the languages with a script of their own (Chinese, Japanese, Korean) the
first words of the stream tell: the tutor holds them back until `CHECK_LETTERS` letters have
come, lets the stream through when they are in the student's script, and otherwise lets the
model finish unseen and translates its reply, citation markers kept.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import tomllib
from collections.abc import Iterator
from importlib import resources
from typing import Any

from ..llm import GenParams, Message
from ..llm.router import CallRecord, Router
from ..retrieval.language import LANGUAGE_NAMES, UNKNOWN, detect_language, language_code
from . import glossary, prompts
from .citations import MARKER, cited_numbers
from .claims import claim_numbers, mask_formulas, names, unmask
from .tidy import unstutter

CHECK_LETTERS = 24  # letters held back before the script is judged
MIN_SHARE = 0.2  # share of the letters that must be in the student's script
MAX_TRANSLATION_TOKENS = 600
_SCRIPTS = {
    "zh": re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"),
    "ja": re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]"),
    "ko": re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]"),
}


def checked(language: str) -> bool:
    """Is a reply in `language` checked (a language with a script of its own)?"""
    return language in _SCRIPTS


def in_script(text: str, language: str) -> bool:
    """True when enough of the letters of `text` are in `language`'s script (or it has none)."""
    pattern = _SCRIPTS.get(language)
    letters = [c for c in MARKER.sub("", text) if c.isalpha()]
    if pattern is None or not letters:
        return True
    return sum(1 for c in letters if pattern.match(c)) >= MIN_SHARE * len(letters)


@dataclasses.dataclass
class Gate:
    """What the language gate decided: None until enough letters came."""

    right: bool | None = None


def gated(pieces: Iterator[str], language: str, gate: Gate) -> Iterator[str]:
    """Pass `pieces` through once their start is in `language`'s script; swallow them if not
    (the caller translates the finished reply)."""
    held = ""
    for piece in pieces:
        if gate.right is None:
            held += piece
            if sum(c.isalpha() for c in MARKER.sub("", held)) < CHECK_LETTERS:
                continue
            gate.right = in_script(held, language)
            piece, held = held, ""
        if gate.right:
            yield piece
    if gate.right is None:  # a reply too short to judge: judge what there is
        gate.right = in_script(held, language)
        if gate.right and held:
            yield held


def translate_reply(router: Router, text: str, language_name: str,
                    log: list[CallRecord], wait: bool = True, source: str = "") -> str:
    """`text` translated into the named language with its [n] markers ("" when the model
    gives nothing, or gets stuck on a phrase). Formulas go through as placeholders and come
    back as written; the textbook terms of the language are given for the glossary's terms
    the text holds (glossary.py; `source`: the text's language, guessed when ""). A
    translation that dropped every marker gets the original's at its end. `wait`: False
    raises ModelBusyError where the in-process model has no free context."""
    # each formula goes through as a placeholder, put back after: the small model rewrote
    # them ("lim_(n→∞)aₙ=sup aₙ" as "n → ∞에 aₙ = sup aₙ"); a translation that loses one is
    # asked for once more with the formulas in the text
    masked, found = mask_names(*mask_formulas(text))
    target = language_code(language_name)
    source = source or detect_language(text, "")
    # (into Chinese, Japanese and Korean, whose terms the model gets wrong; told a noun in
    # Italian, it wrote "un solo iterazione" where it had written "un solo passo")
    def told(said: str) -> str:
        return glossary.instruction(glossary.renderings(
            said, "" if source == UNKNOWN else source, target)) if checked(target) else ""

    out = _translated(router, masked, language_name, log, wait, told(masked))
    # (asked once more with the text as written, the names it holds are told too: the
    # Chinese translation of a Gauss-Newton hint, its name no placeholder, named gradient
    # descent)
    if found:
        out = unmask(out, found) or ""
        # (with placeholders in it, the model now and then leaves a word as it is: "… 的情况下
        # diverge。"; asked once more with the text as written, it translates it)
        if not out or untranslated(text, out, target):
            out = _translated(router, text, language_name, log, wait, told(text))
    if out and foreign_script(text, out, target):  # asked once more, as written
        out = _translated(router, text, language_name, log, wait, told(text))
    if runaway(text, out) or foreign_script(text, out, target):
        out = ""  # "금융의 금융의 금융의 ...", "определire": the reply as written is better
    if checked(target) and source not in ("en", UNKNOWN) and target != "en":
        lost = glossary.dropped(out, text, source, target) if out else []
        if not out or lost:
            out = _through_english(router, text, language_name, log, wait, source, out, lost)
    if not out:
        return ""
    cited = cited_numbers(text)
    if out and cited and not cited_numbers(out):
        out = f"{out} {' '.join(f'[{n}]' for n in cited)}"
    return out


def _through_english(router: Router, text: str, language_name: str, log: list[CallRecord],
                     wait: bool, source: str, out: str, lost: list[str]) -> str:
    """The translation of `text` from `source` into the named language made through English,
    when the direct one (`out`) failed ("") or left out textbook terms the text holds
    (`lost`), and this one leaves out no more; else `out`. The bundled model translates
    from English best: "Il teorema di Rolle è un teorema … se la funzione ha gli estremi
    f(a) e f(b) uguali, allora esiste almeno un punto c … tale che la derivata della
    funzione in c sia zero" came out in Korean as "… 이 함수의 최소값이 존재하는 점 c가 …" (a
    minimum, and no f(a) = f(b)), and through English whole."""
    english = translate_reply(router, text, LANGUAGE_NAMES["en"], log, wait, source=source)
    if not english:
        return out
    target = language_code(language_name)
    via = translate_reply(router, english, language_name, log, wait, source="en")
    if not via or not out:
        return via or out
    return via if len(glossary.dropped(via, text, source, target)) <= len(lost) else out


_JOINED_NAME = re.compile(r"(?<![\w-])[A-Z][a-z]+(?:-[A-Z][a-z]+)+(?![\w-])")


def mask_names(text: str, found: list[str]) -> tuple[str, list[str]]:
    """`text` (masked by `mask_formulas`) with its names too as placeholders, numbered on
    after the formulas': the bundled model wrote "Newton-Raphson" as "뉴턴-라프슨" and
    "Hessian" as "허스턴", which a Korean student cannot look up; kept, they read as in the
    worked example ("Armijo 규칙"). Language names ("English") are translated."""
    languages = {n.split(" (")[0] for n in LANGUAGE_NAMES.values()}
    out = list(found)
    # a name of two capitalised names is one wherever it stands, first word or not
    single = [n for n in dict.fromkeys([*names(text), *_JOINED_NAME.findall(text)])
              if n not in languages]
    # and names side by side are one placeholder ("Damped Newton-Raphson"): as two, the
    # translation dropped both ("… in the ⟨F3⟩ ⟨F4⟩ method" lost), then read them as sounds
    either = "|".join(re.escape(n) for n in sorted(single, key=len, reverse=True))
    runs = re.findall(rf"(?<![\w⟨-])(?:{either})(?: +(?:{either}))+(?![\w⟩-])",
                      text) if single else []
    for name in dict.fromkeys([*runs, *single]):

        def placeholder(match: re.Match[str]) -> str:
            out.append(match.group(0))
            return f"⟨F{len(out)}⟩"

        text = re.sub(rf"(?<![\w⟨-]){re.escape(name)}(?![\w⟩-])", placeholder, text)
    # the names numbered in the order the text gives them, after the formulas
    order = [int(n) for n in re.findall(r"⟨F(\d+)⟩", text) if int(n) > len(found)]
    number = {old: len(found) + k for k, old in enumerate(dict.fromkeys(order), start=1)}
    text = re.sub(r"⟨F(\d+)⟩", lambda m: f"⟨F{number.get(int(m.group(1)), int(m.group(1)))}⟩",
                  text)
    return text, [*found, *(out[old - 1] for old in sorted(number, key=number.__getitem__))]


_LATIN_WORD = re.compile(r"(?<![\w-])[a-z]{4,}(?![\w-])")
_ASIDE = re.compile(r"\([^()]*\)|（[^（）]*）|“[^“”]*”|\"[^\"]*\"")


# scripts a translation may slip into that the text and the language do not use: the
# bundled model, translating a hint into Italian, wrote "nell'определire l'intervallo"
_FOREIGN = {
    "cyrillic": (re.compile(r"[\u0400-\u04ff]"), {"ru", "uk", "bg", "sr", "mk", "be", "kk"}),
    "hangul": (_SCRIPTS["ko"], {"ko"}),
    "kana": (re.compile(r"[\u3040-\u30ff]"), {"ja"}),
    "han": (re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]"), {"zh", "ja", "ko"}),
}


def foreign_script(original: str, translated: str, language: str) -> bool:
    """Does the translation into `language` hold letters of a script that neither the
    language nor the original text uses (a Cyrillic word in an Italian sentence)?"""
    return any(pattern.search(translated) and not pattern.search(original)
               for pattern, own in _FOREIGN.values() if language not in own)


def untranslated(original: str, translated: str, language: str) -> list[str]:
    """The words of `original` a translation into Chinese, Japanese or Korean left in
    English (not in parentheses after a term, nor quoted): "diverge" in "… 的情况下
    diverge。". Empty for the languages written in Latin letters, where a word left as it is
    cannot be told from a word the two languages share."""
    if not checked(language):
        return []
    said = {w.casefold() for w in _LATIN_WORD.findall(original)}
    return [w for w in _LATIN_WORD.findall(_ASIDE.sub(" ", translated)) if w in said]


def _translated(router: Router, text: str, language_name: str, log: list[CallRecord],
                wait: bool, terms: str = "") -> str:
    # a system message: asked in one user message, the small model returns the text as it is
    system = prompts.render("translate_reply", language=language_name)
    # room for a translation twice the text's length, not for a model stuck on a phrase
    budget = min(MAX_TRANSLATION_TOKENS, 64 + len(text))
    params = GenParams(temperature=0.0, max_tokens=budget, wait=wait)
    # the text's terms last, after the fixed start (instructions and worked example) that
    # the model has evaluated before
    told = [Message("system", terms)] if terms else []
    return router.complete("answer", [Message("system", system),
                                      *_worked_example(language_name), *told,
                                      Message("user", text)], params, log).text.strip()


def runaway(text: str, out: str) -> bool:
    """Did the translation run away from `text`: a phrase said over and over, numbers aside
    ("롤레의 정리는 [1]에서 설명됩니다. [2]에서 설명됩니다. [3]에서 설명됩니다. …" for a statement
    with no marker at all), or a citation marker the text does not have?"""
    plain = re.sub(r"\d+", "0", out)
    return unstutter(plain) != plain or bool(set(cited_numbers(out)) - set(cited_numbers(text)))


@functools.cache
def _examples() -> dict[str, Any]:
    return tomllib.loads((resources.files("coursetutor.tutor") / "translate_examples.toml")
                         .read_text(encoding="utf-8"))


def _worked_example(language_name: str) -> list[Message]:
    """One sentence and its translation into the language, as an earlier exchange."""
    table = _examples()
    translation = table["translations"].get(language_code(language_name))
    if not translation:
        return []
    return [Message("user", table["source"]), Message("assistant", translation)]


def keeps_terms(original: str, translated: str) -> bool:
    """Does the translation keep the original's names (Hessian, Wikipedia, BFGS) and
    numbers? The bundled model, translating into Korean, turned "Hessian" into "허스턴" and
    "the English Wikipedia" into "영어 웹사이트": a translation that lost one may have lost
    what the sentence says. A name the glossary spells in the translation's language is kept
    when that spelling is there ("Gauss-Newton" as 高斯-牛顿法)."""
    kept = translated.casefold()
    languages = {n.split(" (")[0] for n in LANGUAGE_NAMES.values()}  # "English": 영어
    # a name is kept as written, or as the glossary's term for it ("高斯-牛顿法")
    return all(name.casefold() in kept or glossary.written_in(name, translated)
               for name in names(original) if name not in languages) and (
        claim_numbers(original) <= claim_numbers(translated))
