"""When two questions mean the same: the normalised key and the meaning gate of answer reuse.

Two questions whose embeddings are close can still ask different things: "when did the last
glacial start?" and "... end?", "who founded the office?" and "when was the office founded?",
"what is a prime?" and "what is not a prime?". Before an earlier answer is reused, the gate
compares what embeddings blur: negation ("not", "except", "without"), numbers, named entities
(capitalised words, acronyms, formulas), the scope of the question ("why" against "how"
against "when") and, for two questions in the same language, their content words. Each check
is a small rule over words, in the languages tutor/categorize.py knows (en, it, de, fr, es,
pt, zh, ja, ko), and refuses when it cannot tell.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata

from ..retrieval.language import STOPWORDS, detect_language
from ..retrieval.tokenize import has_cjk, stemmer_for


def _any(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(alternatives), re.IGNORECASE)


# -- negation: "not" (and "without"), "except" ------------------------------------------------
_NOT = _any(
    r"\b(not|no|never|none|nobody|nothing|neither|nor|cannot|without)\b|n't\b",
    r"\b(non|mai|nessun[oa]?|niente|nulla|senza)\b",
    r"\b(nicht|kein|keine|keinen|keinem|keiner|keines|nie|niemals|nichts|niemand|weder|ohne)\b",
    r"\b(ne|pas|jamais|aucun|aucune|rien|sans)\b|\bn'",
    r"\b(nunca|jam[aá]s|ning[uú]n|ninguna|ninguno|nada|nadie|sin|n[aã]o|nenhum|nenhuma|"
    r"ningu[eé]m|sem)\b",
    # 不 and 非 without the words they only begin: 不同 different, 不断 continuously, 非常 very,
    # 非洲 Africa, 未来 future, 无线 wireless
    r"不(?![同断久仅少过论管得])|没|沒|未(?![来來])|非(?![常洲])|无(?![线論论])|無(?![線])|別",
    r"ない|ません|않|못|없|안\s",
)
_EXCEPT = _any(
    r"\b(except|excluding|besides|other than|apart from|aside from)\b",
    r"\b(tranne|eccetto|salvo|a parte|au(ss|ß)er|ausgenommen|abgesehen von|sauf|except[ée]|"
    r"hormis|excepto|aparte de|exceto|al[eé]m de)\b",
    r"除了|除外|以外|之外|を除いて|제외|빼고|외에",
)

# -- the scope of a question --------------------------------------------------------------------
# quantities first, so that "how many" is not also "how"
_SCOPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("quantity", _any(
        r"\bhow (many|much|old|long|far|big|large|tall|high|often|fast|deep|wide)\b",
        r"\bwie ?(viele?|alt|lange?|weit|gro(ß|ss)|hoch|oft|schnell|tief|breit)\b",
        r"\bquant[oaie]\b|\bcombien\b|\bcu[aá]nt[oa]s?\b|\bquant[oa]s?\b",
        r"多少|几|幾|多大|多长|多長|多久|多远|多遠|多高|多重|多快|多深|몇|얼마|いくつ|何人|何個|"
        r"どのくらい|どれくらい")),
    ("why", _any(
        r"\b(why|how come)\b", r"\b(warum|wieso|weshalb|weswegen)\b",
        r"\bperch[eé]\b|\bpourquoi\b|\bpor ?qu[eé]\b|\bpor que\b|\bporque\b",
        r"为什么|為什麼|为何|為何|为啥|왜|なぜ|どうして")),
    ("when", _any(
        r"\bwhen\b|\b(what|which) (year|decade|century|date|day|month|time period)\b",
        r"\bwann\b|\bin welche[mn]? (jahr|jahrzehnt|jahrhundert)\b",
        r"\bquando\b|\bquand\b|\bcu[aá]ndo\b|\bin che anno\b|\ben quelle ann[ée]e\b|"
        r"\ben qu[eé] a[nñ]o\b|\bem que ano\b",
        r"什么时候|什麼時候|何时|何時|哪一年|哪年|哪个世纪|哪個世紀|哪一天|언제|いつ|何年")),
    ("where", _any(
        r"\bwhere\b", r"\b(wo|wohin|woher)\b", r"\bdove\b|\boù\b|\bd[oó]nde\b|\bonde\b",
        r"哪里|哪裡|哪儿|哪兒|在哪|何处|何處|何地|어디|どこ")),
    ("who", _any(
        r"\b(who|whom|whose)\b", r"\b(wer|wen|wem|wessen)\b",
        r"\bchi\b|\bqui\b|\bqui[eé]n(es)?\b|\bquem\b", r"谁|誰|누구|누가|だれ")),
    ("how", _any(
        # "wie heißt", "comment s'appelle", "come si chiama": what it is called
        r"\bhow\b", r"\bwie\b(?! (lautet|lauten|hei(ß|ss)t|hei(ß|ss)en|nennt))",
        r"\bcomment\b(?! s'appell)|\bc[oó]mo\b(?! se llama)|\bcome\b(?! si chiama)",
        r"怎么|怎麼|怎样|怎樣|如何|어떻게|どのように|どうやって")),
    ("what", _any(
        r"\b(what|which)\b", r"\b(was|welche[rsmn]?)\b|\bwie (lautet|lauten|hei(ß|ss)t|nennt)\b",
        r"\b(cosa|quale|quali|che)\b|\b(que|quoi|quel|quelle|quels|quelles)\b|\bqu'",
        r"\bqu[eé]\b|\bcu[aá]l(es)?\b|\b(qual|quais)\b",
        r"什么|什麼|哪|무엇|뭐|어떤|어느|何|なに|どの|どれ")),
)
_STRICT = frozenset({"why", "how", "quantity"})  # a different one of these is another question

# -- numbers and names --------------------------------------------------------------------------
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"^\d{1,3}(?:[.,]\d{3})+$")
_WORD = re.compile(r"[^\W_][\w'’\-^+*/=]*", re.UNICODE)
_FORMULA = re.compile(r"[=^+*/<>]|\d")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]+")
# languages that capitalise every noun: a capital letter names nothing there
_NOUN_CAPITALS = frozenset({"de"})
# function words the retrieval stop lists leave in; they change no meaning
_FUNCTION = frozenset(
    "a an have has had been being will would could should may might many much some any there "
    "their its his her they them he she you your i me my we our about into at if than so also "
    "such s d ll ve re".split())


@dataclasses.dataclass(frozen=True)
class Meaning:
    """What of a question the gate compares."""

    negations: frozenset[str]
    numbers: frozenset[str]
    entities: frozenset[str]  # case-folded
    scopes: frozenset[str]
    language: str
    content: frozenset[str]  # stemmed content words (compared within one language)
    text: str  # the key, to look the other question's entities up in


def question_key(text: str) -> str:
    """The question normalised: NFKC, case-folded, punctuation out (decimal points, signs
    and operators of formulas kept), spaces collapsed. Stop words stay: "not" and "why"
    change the meaning, and the embedder reads sentences better than bags of words."""
    text = unicodedata.normalize("NFKC", text).casefold()
    kept = []
    for i, ch in enumerate(text):
        if unicodedata.category(ch).startswith("P") and not (
                ch in ".," and 0 < i < len(text) - 1 and text[i - 1].isdigit()
                and text[i + 1].isdigit()):
            kept.append(" ")
        else:
            kept.append(ch)
    return " ".join("".join(kept).split())


def meaning(question: str, language: str = "") -> Meaning:
    """The parts of `question` the gate compares (`language`: the question's, if known)."""
    text = unicodedata.normalize("NFKC", question).strip()
    language = language or detect_language(text)
    folded = text.casefold()
    negations = {name for name, pattern in (("not", _NOT), ("except", _EXCEPT))
                 if pattern.search(folded)}
    scopes = set()
    rest = folded
    for name, pattern in _SCOPES:
        if pattern.search(rest):
            scopes.add(name)
            rest = pattern.sub(" ", rest)
    key = question_key(text)
    return Meaning(frozenset(negations), frozenset(_numbers(text)),
                   frozenset(_entities(text, language)), frozenset(scopes), language,
                   frozenset(_content(key, language)), key)


def _numbers(text: str) -> set[str]:
    """The numbers written in digits, as plain decimals ("1,000" and "1.000" -> "1000")."""
    found = set()
    for n in _NUMBER.findall(text):
        n = re.sub(r"[.,]", "", n) if _THOUSANDS.match(n) else n.replace(",", ".")
        found.add(n.lstrip("0") or "0")
    return found


def _entities(text: str, language: str) -> set[str]:
    """Acronyms, words with inner capitals, formulas and (except in languages that
    capitalise nouns) capitalised words after the first."""
    found = set()
    text = _CJK_RUN.sub(" ", text)  # a name runs into the Chinese after it without a space
    for i, match in enumerate(_WORD.finditer(text)):
        word = re.sub(r"['’]s$", "", match.group()).strip("-'’")
        letters = [c for c in word if c.isalpha()]
        if len(word) < 2 or not letters:
            continue
        upper = sum(c.isupper() for c in letters)
        acronym = upper >= 2 or (upper == 1 and not word[0].isupper())  # NFL, DECnet
        formula = _FORMULA.search(word) is not None
        named = i > 0 and word[0].isupper() and language not in _NOUN_CAPITALS
        if acronym or formula or named:
            found.add(word.casefold())
    return found


def _content(key: str, language: str) -> set[str]:
    """The key's stemmed words other than stop, question and negation words."""
    if has_cjk(key):
        return set()
    stop = STOPWORDS.get(language, frozenset()) | _FUNCTION
    words = [w for w in key.split() if w not in stop and not _NUMBER.fullmatch(w)
             and not any(p.fullmatch(w) for p in (_NOT, _EXCEPT, *(p for _, p in _SCOPES)))]
    stemmer = stemmer_for(language)
    return set(stemmer(words) if stemmer else words)


def differs(a: Meaning, b: Meaning) -> str:
    """Why `a` and `b` may mean different things ("" when the gate sees no difference)."""
    if a.negations != b.negations:
        return "negation"
    if a.numbers != b.numbers:
        return "numbers"
    if _missing(a, b) or _missing(b, a):
        return "entities"
    if (a.scopes & _STRICT) != (b.scopes & _STRICT):
        return "scope"
    open_a, open_b = a.scopes - _STRICT, b.scopes - _STRICT
    if open_a and open_b and not open_a & open_b:
        return "scope"
    if a.language == b.language and _other_words(a.content, b.content):
        return "words"
    return ""


def _other_words(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two questions in one language ask different things when their content words differ
    by more than one, or by one when they share fewer than three ("chair" / "vice chair")."""
    different = len(a ^ b)
    return different > 1 or (different == 1 and len(a & b) < 3)


def _missing(a: Meaning, b: Meaning) -> bool:
    """Does `a` name something `b` does not? Judged only where `b` is written in the same
    script, so a Chinese question is not refused for lacking an English name."""
    latin_b = re.search(r"[a-z]", b.text) is not None
    for entity in a.entities:
        if re.search(r"[a-z]", entity) is not None and not latin_b:
            continue
        if re.search(r"(?<!\w)" + re.escape(_stem(question_key(entity))), b.text) is None:
            return True
    return False


def _stem(entity: str) -> str:
    """A long name without its last letters, so "Ctenophores" finds "ctenophora" and
    "Warsaw" "Warschau"; acronyms and formulas must match whole."""
    if len(entity) >= 5 and entity.isalpha():
        return entity[:max(4, len(entity) - 3)]
    return entity
