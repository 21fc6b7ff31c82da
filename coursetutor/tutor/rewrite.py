"""Follow-ups ("and the other one?") rewritten into a standalone search query."""

from __future__ import annotations

from collections.abc import Sequence

from ..llm import GenParams, Message
from ..llm.router import CallRecord, Router
from ..retrieval.language import UNKNOWN, detect_language, language_code
from ..retrieval.names import other_spellings
from ..types import Turn
from . import glossary, prompts
from .claims import is_acronym, names, unmask
from .reply_language import mask_names

MAX_REWRITE_CHARS = 300
_QUESTION_MARKS = ("?", "\uff1f", "\u037e", "\u061f")


def concatenated(message: str, history: Sequence[Turn]) -> str:
    """The previous question followed by the follow-up: a query that needs no model."""
    previous = next((t.question for t in reversed(history) if t.question), "")
    return f"{previous} {message}".strip()


def rewrite_followup(router: Router, message: str, history: Sequence[Turn],
                     log: list[CallRecord]) -> str:
    """A standalone question from the model, or the concatenated query when it cannot help."""
    fallback = concatenated(message, history)
    if not router.enabled or not history:
        return fallback
    lines = "\n".join(f"Student: {t.question}\nTutor: {t.answer[:300]}" for t in history[-2:])
    text = _one_line(router, prompts.render("rewrite", history=lines, message=message), 60, log)
    if not text:
        return fallback
    # the model's question plus the earlier one: the search keeps the conversation's topic
    return f"{text} {fallback}"


def translate_query(router: Router, question: str, language_name: str,
                    log: list[CallRecord], keep_original: bool = False,
                    terms: Sequence[str] = ()) -> str:
    """The question in the course's language, searched instead of the original (which stays
    when the model gives no usable line).

    e5 matches across languages, but its cosines to passages in another language sit lower,
    which would make the evidence grade refuse questions the course does cover; the original
    appended to the translation lowers them too (an Italian question on an English video:
    evidence 0.27 with it, 0.60 without), and on German questions against English sentences
    the translation alone ranked as well or better (docs/evaluation.md). `keep_original`
    appends it where a keyword dictionary reads it (Chinese in an English course: its
    dictionary keywords make up for the small model's mistranslated names). `terms` are the
    course's own spellings of the names its passages use (terms.py).
    """
    text = translation(router, question, language_name, log, terms)
    if not text:
        return question
    return f"{text} {question}" if keep_original else text


def translation(router: Router, question: str, language_name: str,
                log: list[CallRecord], terms: Sequence[str] = ()) -> str:
    """The question in `language_name` alone, or "" when the model gave no usable line;
    `terms`: the course's spellings of its names, for the model to write them so."""
    if not router.enabled:
        return ""
    vocabulary = (f"\nThe course writes its terms like this: {', '.join(terms)}. When the "
                  "question names one of them in another script, write it this way."
                  if terms else "")
    source = detect_language(question, "")
    if told := glossary.instruction(glossary.renderings(
            question, "" if source == UNKNOWN else source, language_code(language_name)),
            glossary.FOR_QUESTION):
        # the words before the course's names, on a line of their own: after them, the
        # model answered "리만 적분에서 상합은 어떻게 정의되나요?" instead of translating it
        vocabulary = f"\n{told}{vocabulary}"
    prompt = prompts.render("translate", language=language_name, question=question,
                            terms=vocabulary)
    text = _one_line(router, prompt, 80, log)
    if lost_names(question, text, source):
        # "What is a Cauchy sequence?" became "什么是可数序列？", a countable sequence, and
        # so again when told to keep "Cauchy": the search and the statements answered that.
        # Asked once more with its names as placeholders ("What is a ⟨F1⟩ sequence?"), put
        # back after; a translation that loses one again is not used (the original is
        # searched)
        masked, found = mask_names(question, [])
        told = f"{vocabulary}\nCopy each placeholder such as ⟨F1⟩ as it is."
        again = _one_line(router, prompts.render("translate", language=language_name,
                                                 question=masked, terms=told), 80, log)
        text = unmask(again, found) or ""
        if not text or lost_names(question, text, source):
            return ""
    if asks(question) and not asks(text):
        return ""  # an answer in place of the translation ("Il concetto di roll è …")
    return text


def lost_names(question: str, translated: str, language: str = "") -> list[str]:
    """The names of `question` (Latin script: "Cauchy", "BFGS") that `translated` writes
    neither as they are, nor as another spelling of the same name (names.toml: "柯西"), nor
    as the glossary's term for them. German capitalises every noun: there only acronyms."""
    if not translated:
        return []
    folded = translated.casefold()
    asked = [n for n in names(question) if language != "de" or is_acronym(n)]
    return [n for n in dict.fromkeys(asked)
            if n.casefold() not in folded and not glossary.written_in(n, translated)
            and not any(s.casefold() in folded for s in other_spellings(n))]


def asks(text: str) -> bool:
    """Whether `text` is put as a question (it ends on a question mark)."""
    return text.rstrip().endswith(_QUESTION_MARKS)


def _one_line(router: Router, prompt: str, max_tokens: int, log: list[CallRecord]) -> str:
    """The first line of the small-task model's reply, or "" when it is empty or too long."""
    text = router.complete("categorize", [Message("user", prompt)],
                           GenParams(temperature=0.0, max_tokens=max_tokens), log).text.strip()
    text = text.strip('"').splitlines()[0].strip() if text else ""
    return text if len(text) <= MAX_REWRITE_CHARS else ""
