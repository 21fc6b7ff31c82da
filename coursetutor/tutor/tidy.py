"""Small-model failure modes taken out of a reply: the question echoed back, the list of
sources copied, one sentence said over and over, or said again in other words, one phrase
stuttered ("금융의 금융의 금융의 ...")."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from ..retrieval.language import ANY_STOPWORD
from ..retrieval.tokenize import has_cjk, tokenize
from .citations import MARKER, cited_numbers
from .rungs import asks

ENDS = ".!?\u3002\uff01\uff1f"  # what ends a sentence
# a sentence: up to . ! ? followed by a space (not "5.2" or "e.g") or a CJK full stop
_SPAN = re.compile(
    r"(?:[^.!?\u3002\uff01\uff1f\n]|[.!?](?![\s)]|$))+[.!?\u3002\uff01\uff1f]*\s*|\n+")
# what a sentence's key leaves out: punctuation and spaces, not the signs of a formula
# ("< epsilon" and ">= epsilon" are two statements)
_NOISE = re.compile(r"(?:[^\w=<>≤≥≠∑∫√^]|_)+", re.UNICODE)
MIN_SENTENCE = 6  # shorter sentences ("Yes.", "1.") may well repeat
MIN_LETTERS = 6  # a tidied reply with fewer letters says nothing
REPEATS = 3  # the same sentence this many times: the model is looping
ECHO_RATIO = 0.8  # a sentence this similar to the question repeats it
MIN_COPY = 20  # a sentence this long found in the student's message or the task is parroted
COPY_RUN = 8  # characters in a row that count as copied
PARROTED = 0.9  # share of a sentence copied in such runs that makes it parroted
RECITED = 60  # characters in a row of the instructions that make a sentence recited
# a sentence of at least RESTATED_TERMS content terms, this share of them already in the
# reply, says again what the reply said (the small model's second paragraph restating its
# first, or a list that keeps growing the same item)
RESTATED = 0.9
RESTATED_TERMS = 8
_MATH = frozenset("=<>≤≥≠∑∫√^\\")  # a formula may differ by a sign the words do not show


def _norm(text: str) -> str:
    return _NOISE.sub("", MARKER.sub("", text)).lower()


def _sentences(text: str) -> list[str]:
    return [m.group(0) for m in _SPAN.finditer(text)]


# one phrase (a word or a few, with a letter in it) said STUTTERS times in a row
STUTTERS = 6
_STUTTER = re.compile(r"(\S[^\n]{0,30}?)(?:[\s,，、]*\1){" + str(STUTTERS - 1) + ",}")


def _stutter_runs(text: str) -> list[re.Match[str]]:
    return [m for m in _STUTTER.finditer(text) if any(c.isalpha() for c in m.group(1))]


def stuttering(text: str) -> bool:
    """True when `text` ends in one phrase said STUTTERS times in a row: a model stuck on a
    phrase never ends its sentence, so `looping` cannot see it."""
    tail = text[-400:].rstrip()  # six units of up to 31 characters: the end is enough
    for size in range(1, 32):
        unit = tail[-size:]
        if any(c.isalpha() for c in unit) and tail.endswith(unit * STUTTERS):
            return True
    return False


def unstutter(text: str) -> str:
    """`text` with every phrase said STUTTERS or more times in a row said once."""
    for m in reversed(_stutter_runs(text)):
        text = text[: m.start()] + m.group(1) + text[m.end():]
    return text


def looping(text: str) -> bool:
    """True when the last complete sentence of `text` has come REPEATS times already."""
    done = [s for s in _sentences(text) if s.rstrip().endswith(tuple(ENDS))]
    if len(done) < REPEATS:
        return False
    last = _norm(done[-1])
    return len(last) >= MIN_SENTENCE and sum(_norm(s) == last for s in done) >= REPEATS


def _copies_header(line: str, headers: Sequence[str]) -> bool:
    """The line is mostly a source header of the prompt ("[2] Lecture 2 > 2.3 ..., p. 2")."""
    key = _norm(line)
    if len(key) < 15 or not ("> " in line or MARKER.match(line.strip())):
        return False
    for h in headers:
        match = difflib.SequenceMatcher(None, key, h, autojunk=False).find_longest_match(
            0, len(key), 0, len(h))
        if match.size >= 0.8 * len(key):
            return True
    return False


def _echoes(span: str, sentence: str, question: str) -> bool:
    """The sentence is the question again: word for word, or a question nearly the same."""
    if not question:
        return False
    asks = MARKER.sub("", span).rstrip().endswith(("?", "\uff1f"))
    return sentence == question or (asks and len(sentence) >= MIN_SENTENCE and difflib.
                                    SequenceMatcher(None, sentence, question).ratio() >= ECHO_RATIO)


def _parrots(key: str, text: str) -> bool:
    """The sentence (`key`, normalised) is `text`'s words again, perhaps with a phrase left
    out ("the exercise and the method are in the sources above" from the task's "the exercise
    and the method the course teaches for it are in the sources above"): at least
    PARROTED of it in runs of COPY_RUN characters or more found in `text` in order."""
    if key in text:
        return True
    blocks = difflib.SequenceMatcher(None, key, text, autojunk=False).get_matching_blocks()
    return sum(b.size for b in blocks if b.size >= COPY_RUN) >= PARROTED * len(key)


def _recites(key: str, instructions: str) -> bool:
    """Does the sentence carry a long stretch of the instructions word for word ("Here are
    the steps the student should follow, one per line, speaking to them directly, in their
    own terms and formulas, …"), whatever it adds around it? Instructions only: a reply may
    quote the student's own working at length."""
    match = difflib.SequenceMatcher(None, key, instructions, autojunk=False).find_longest_match()
    return match.size >= RECITED


# words that say nothing of their own in a sentence said again: "Specifically, we will show
# that there exists a set of …" after "… we need to demonstrate that there exists a set of …"
_FILLER = frozenset(tokenize("a we will there here let us specifically particular "
                             "also so then thus therefore", "en"))


def _terms(text: str, language: str) -> set[str]:
    """The content terms of a sentence: stemmed words, CJK bigrams (single characters say
    little), no stop words, fillers or bare numbers."""
    return {t for t in tokenize(MARKER.sub(" ", text), language)
            if t not in ANY_STOPWORD and t not in _FILLER and not t.isdigit()
            and not (len(t) < 2 and has_cjk(t))}


def _restates(span: str, terms: set[str], said: set[str]) -> bool:
    """The sentence (its content `terms`) says nothing the reply has not said: at least
    RESTATED of RESTATED_TERMS or more terms already there, and no formula to tell apart."""
    return (len(terms) >= RESTATED_TERMS and not any(c in _MATH for c in span)
            and len(terms & said) >= RESTATED * len(terms))


def drop_stray(text: str) -> str:
    """`text` without lines of nothing but markers that an earlier line already cites (left
    behind when the last statement above came to cite the same source itself)."""
    lines: list[str] = []
    for line in text.split("\n"):
        if MARKER.search(line) and _stray(line, "\n".join(lines) + "\n"):
            continue
        lines.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


# what a chat model says before its reply: a courtesy, or the reply announced ("Certainly!
# Here's a hint from the sources that points to the idea or method from the exercise they
# need:", its task's words turned back on it)
_COURTESY = re.compile(r"^(?:certainly|sure|of course|absolutely|certo|certamente|claro|"
                       r"bien sûr|natürlich|gerne|当然|好的|물론입니다|물론이죠)\s*[!！.。,，]?$",
                       re.I)
_ANNOUNCED = re.compile(r"^(?:here's|here is|here are|ecco|voici|hier ist|hier sind)\s.{0,120}"
                        r"\b(?:hints?|tips?|clues?|suggeriment[oi]|indizi[o]?|indices?|tipps?|"
                        r"hinweise?)\b.*[:：]$", re.I)


def _preamble(span: str) -> bool:
    """A courtesy ("Certainly!") or an announcement of the hint that follows ("Here's a hint
    …:") before anything of the reply itself."""
    bare = MARKER.sub("", span).strip()
    return bool(_COURTESY.match(bare) or _ANNOUNCED.match(bare))


def _opener(span: str) -> bool:
    """A bare rhetorical question ("Why?", "为什么？", "Perché?") that ends the reply."""
    bare = MARKER.sub("", span).strip()
    return bare.endswith(("?", "\uff1f")) and sum(c.isalpha() for c in bare) < 8


def _cut_short(span: str) -> bool:
    """A last span that begins a sentence and stops (the answer ran out of tokens): "The [1]"."""
    bare = MARKER.sub("", span).strip()
    return bare.isalpha() and len(bare) < MIN_SENTENCE and not has_cjk(bare)


def _stray(span: str, before: str) -> bool:
    """A line of nothing but markers the reply has already cited ("...[1].\n\n[1]"): it
    cites no statement of its own."""
    if not before.endswith("\n") or MARKER.sub("", span).strip(" ,;"):
        return False
    cited = set(cited_numbers(before))
    return bool(cited) and set(cited_numbers(span)) <= cited


def tidy(text: str, question: str, headers: Sequence[str], prompt: Sequence[str] = (),
         language: str = "en") -> str:
    """`text` without an echo of `question`, lines copying a source header (`headers`),
    sentences copied from the student's message or the `prompt`'s instructions, sentences
    said before, word for word or in other words (`language` stems them), and a last
    sentence cut off after its first word; "" when what is left says nothing."""
    text = unstutter(text)
    asked = _norm(question)
    copied = [_norm(h) for h in headers]
    instructions = [_norm(p) for p in prompt]
    parroted = [asked, *instructions]
    text = "\n".join(line for line in text.split("\n") if not _copies_header(line, copied))
    seen: set[str] = set()
    said: set[str] = set()  # the content terms of the sentences kept
    kept: list[str] = []
    dropped = False  # the last sentence was dropped: so are the markers that trail it
    for span in _sentences(text):
        key = _norm(span)
        if not key:
            if not (dropped and MARKER.search(span)) and not _stray(span, "".join(kept)):
                kept.append(span)
            continue
        terms = _terms(span, language)
        dropped = (
            (not "".join(kept).strip() and _preamble(span))
            or _echoes(span, key, asked)
            or (len(key) >= MIN_SENTENCE and key in seen)
            or (len(key) >= MIN_COPY and any(_parrots(key, p) for p in parroted))
            or any(_recites(key, p) for p in instructions)
            or _restates(span, terms, said))
        if not dropped:
            seen.add(key)
            said |= terms
            kept.append(span)
    if kept and _cut_short(kept[-1]):
        kept.pop()
    while kept and _opener(kept[-1]):  # "Why?" whose answer was the sentence said again
        kept.pop()
    out = "".join(kept).strip()
    letters = sum(c.isalpha() for c in MARKER.sub("", out))
    return out if letters >= MIN_LETTERS else ""


_END = re.compile(r"[.!?\u3002\uff01\uff1f](?:\s*\[\d+\])*")
_TRAILING = re.compile(r"(?:\s*\[\d+\])+\s*$")
_LIST_NUMBER = re.compile(r"\n\s*\d+[.)]?(?:\s*\[\d+\])*\s*$")  # a list's next item, cut: "\n2."


def whole_sentences(text: str) -> str:
    """`text` without a last sentence the token limit cut off ("… because it can
    iterate to"), when a whole sentence comes before it; its markers kept."""
    body = _LIST_NUMBER.sub("", _TRAILING.sub("", text)).rstrip()
    if not body or _END.fullmatch(body[-1]) or body[-1] == "*":  # "**bold.**"
        return text if body == _TRAILING.sub("", text).rstrip() else body
    ends = [m for m in _END.finditer(body) if m.end() >= MIN_KEPT
            and not _ABBREVIATION.search(body[:m.start()])]
    if not ends:
        return text
    cut = body[:ends[-1].end()]
    markers = " ".join(m.group(0) for m in MARKER.finditer(text[ends[-1].end():])
                       if m.group(0) not in cut)
    return f"{cut} {markers}" if markers else cut


_ABBREVIATION = re.compile(r"(?:^|\s)(?:[A-Za-z]\.)*[A-Za-z]$")  # "e.g", "i.e", "x"
MIN_KEPT = 20  # characters a reply keeps when its cut-off last sentence goes


_LEAD_IN = re.compile(r"[:\uff1a]\**(?:\s*\[\d+\])*\s*$")  # "… is given by:", "步骤如下："
# a sentence of a line: to its end mark (not the one of "e.g." or "x."), and its markers
_SENTENCE = re.compile(r".+?(?:(?<![\s.(][A-Za-z])[.!?](?:\s*\[\d+\])*(?=\s|$)"
                       r"|[\u3002\uff01\uff1f](?:\s*\[\d+\])*|$)")
_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*\u2022])\s+")
# a list item in bold as a whole, with its citation markers after it
_BOLD = re.compile(r"^\*\*(.+?)\*\*((?:\s*\[\d+\])*)$")


def first_sentences(text: str, most: int) -> str:
    """The opening of a short reply, at most `most` sentences: up to the first lead-in
    ("Here's a step-by-step breakdown:") and the list or formula it opened, which the
    token limit or the check cut ("1. [1]", "is given by:" and nothing after). A reply
    that opens with its lead-in keeps the list's first item after it."""
    return _opening(text, most)[0]


def fills(text: str, most: int) -> bool:
    """Does `text` go on after `most` whole sentences, before any lead-in: is all that
    `first_sentences(…, most)` keeps of a reply that starts with it written? A model
    writing help of that length may stop there. `text` ends where a word does (`settled`)."""
    return _opening(text, most + 1)[1]  # a sentence that another follows is whole


# the last word or the one before it begins a sentence or a line: what `fills` waits for
# (a sentence's first word alone, "The", is taken for one cut off, `_cut_short`)
_BEGUN = re.compile(r"(?:[.!?:\uff1a](?:\s*\[\d+\])*(?:\s+\S+){1,2}"
                    r"|[\u3002\uff01\uff1f](?:\s*\[\d+\])*\s*\S{1,2}|\n\s*\S+(?:\s+\S+)?)$")


def begins_sentence(text: str) -> bool:
    """Does one of the last two words of `text` begin a sentence or a line (a cheap test
    before `fills`, which tidies the draft first)?"""
    return bool(_BEGUN.search(text))


_WORD_END = re.compile(r"\s|[\u3000-\u303f\u3040-\u30ff\u4e00-\u9fff\uff00-\uffef]")


def settled(text: str) -> str:
    """`text` up to the end of its last whole word ("x_1." may yet be "x_1.618"): its last
    space, or its last Chinese or Japanese character, each a word of its own."""
    ends = [m.start() if m.group(0).isspace() else m.end() for m in _WORD_END.finditer(text)]
    return text[:ends[-1]] if ends else ""


def _opening(text: str, most: int) -> tuple[str, bool]:
    """`first_sentences`' opening, and whether it is `most` sentences long."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    kept: list[str] = []
    for n, line in enumerate(lines):
        if _ITEM.match(line):
            # a list after the opening is cut, unless it goes on asking: guiding questions
            # numbered one per line ("1. What is the formula …?\n2. How do you …?")
            if kept and not (asks(kept[-1]) and asks(line)):
                break
            line = _BOLD.sub(r"\1\2", _ITEM.sub("", line))  # a bold item, now in a paragraph
        for m in _SENTENCE.finditer(line):
            sentence = m.group(0).strip()
            if not sentence:
                continue
            if _LEAD_IN.search(sentence):
                after = lines[n + 1] if n + 1 < len(lines) else ""
                if not kept and _ITEM.match(after) and asks(after):
                    continue  # "Here are two short questions …:" and the questions
                if not kept and _ITEM.match(after):
                    kept.append(f"{sentence} {_ITEM.sub('', after)}")
                elif not kept and after:  # "Here is a hint:" and the hint on the next line
                    continue
                return _joined(kept) or text, False
            kept.append(sentence)
            if len(kept) >= most:
                return _joined(kept), True
    return _joined(kept) or text, False


def _joined(sentences: list[str]) -> str:
    """Sentences as one paragraph: a space after a Latin one, none after a CJK one."""
    out = ""
    for sentence in sentences:
        cjk = bool(out) and re.search(r"[\u3002\uff01\uff1f](?:\s*\[\d+\])*$", out)
        out += ("" if not out or cjk else " ") + sentence
    return out
