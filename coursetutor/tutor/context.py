"""The numbered course context, built under a token budget counted by the model's tokenizer."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from ..ingest.tex_unicode import to_unicode
from ..retrieval.tokenize import tokenize
from ..types import Hit, Turn
from .refine import refine

Counter = Callable[[str], int]
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n{2,}")


@dataclasses.dataclass(frozen=True)
class Budget:
    """Token budgets per part of the prompt."""

    material: int
    transcripts: int
    history: int
    rest: int

    @property
    def total(self) -> int:
        return self.material + self.transcripts + self.history + self.rest

    @classmethod
    def split(cls, total: int) -> Budget:
        """Split `total` as 1,000 / 1,000 / 400 / 200 of 2,600 (material, transcripts, ...)."""
        material = total * 1000 // 2600
        history = total * 400 // 2600
        return cls(material, material, history, total - 2 * material - history)


@dataclasses.dataclass(frozen=True)
class Source:
    """One numbered source in the prompt."""

    number: int
    hit: Hit
    text: str  # the chunk trimmed to the sentences that matter
    tokens: int


@dataclasses.dataclass(frozen=True)
class Context:
    sources: tuple[Source, ...]
    history: str
    tokens: int
    over_budget: bool  # some retrieved material did not fit
    notes: str = ""  # what the tutor remembers of the student (the "rest" of the budget)


def source_header(number: int, hit: Hit) -> str:
    """'[2] Lecture 2: Convergence > Secant method, p. 3': the document, its innermost
    section and the page or time span. The sections between and a heading's anchor say
    nothing the passage needs and every prompt token after the cached prefix delays the first
    token (about 11 ms each on 2 cores)."""
    chunk = hit.chunk
    where = "" if hit.locator.page is None and hit.locator.start is None else hit.locator.label()
    inner = next((p for p in reversed(chunk.section_path) if p and p != chunk.document_title), "")
    title = f"{chunk.document_title} > {inner}" if inner else chunk.document_title
    return f"[{number}] {title}" + (f", {where}" if where else "")


def trim_to_question(text: str, question: str, language: str, limit: int,
                     count: Counter) -> str:
    """Keep the sentences that share words with the question (and their neighbours)."""
    if count(text) <= limit:
        return text
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    wanted = set(tokenize(question, language))
    overlap = [len(wanted & set(tokenize(s, language))) for s in sentences]
    order = sorted(range(len(sentences)), key=lambda i: (-overlap[i], i))
    keep: set[int] = set()
    used = 0
    for i in order:
        for j in (i, i + 1, i - 1) if overlap[i] else (i,):
            if 0 <= j < len(sentences) and j not in keep:
                cost = count(sentences[j])
                if used + cost > limit:
                    continue
                keep.add(j)
                used += cost
    if not keep:  # one very long sentence: cut it by characters
        return sentences[0][: limit * 3]
    return " ".join(sentences[i] for i in sorted(keep))


def format_history(turns: Sequence[Turn], limit: int, count: Counter,
                   summary: str = "") -> str:
    """The summary of the conversation's start, then the recent turns, newest kept first
    when the budget runs out, printed oldest first."""
    lines: list[str] = []
    head = f"Summary of the conversation so far: {summary}" if summary else ""
    used = count(head) if head else 0
    for turn in reversed(turns):
        if turn.grade in ("", "incorrect"):
            continue  # refusals and canned replies teach the model nothing but to refuse
        block = f"Student: {turn.question}\nTutor: {_gist(turn.answer)}"
        cost = count(block)
        if used + cost > limit:
            block = f"Student: {turn.question}"
            cost = count(block)
            if used + cost > limit:
                break
        lines.insert(0, block)
        used += cost
    return "\n".join([head, *lines] if head else lines)


def _gist(answer: str, chars: int = 240) -> str:
    """The start of an earlier answer: enough to resolve a follow-up, too little to copy."""
    answer = " ".join(answer.split())
    return answer if len(answer) <= chars else answer[:chars].rsplit(" ", 1)[0] + " ..."


def build_context(
    hits: Sequence[Hit], question: str, language: str, budget: Budget,
    count: Counter, history: Sequence[Turn] = (), per_source: int = 320, refined: int = 0,
    summary: str = "", notes: str = "", translated: bool = False,
) -> Context:
    """Number the hits that fit the budget, each trimmed to what matters for the question;
    with `refined` > 0, only the sentences that matter, about that many tokens in all. The
    conversation's `summary` and the turns share the history budget; `notes` (the student's
    memory, already fitted to the rest of the budget) are counted in. `translated`: the
    question was translated for the search (refinement keeps the first passages then)."""
    left = {"material": budget.material, "transcripts": budget.transcripts}
    sources: list[Source] = []
    over = False
    kept = refine(hits, question, language, refined, count, translated) if refined else None
    for i, hit in enumerate(hits):
        if kept is not None and not kept[i]:
            continue  # nothing in it bears on the question
        kind = "transcripts" if hit.chunk.doc_type == "transcript" else "material"
        room = min(per_source, left[kind] + _spare(left, kind, hits))
        header = source_header(len(sources) + 1, hit)
        text = trim_to_question(kept[i] if kept is not None else hit.chunk.text, question,
                                language, room - count(header) - 2, count)
        cost = count(header) + count(text) + 2
        if room < 40 or cost > left[kind] + _spare(left, kind, hits):
            over = True
            continue
        sources.append(Source(len(sources) + 1, hit, text, cost))
        _spend(left, kind, cost)
    past = format_history(history, budget.history, count, summary)
    used = (sum(s.tokens for s in sources) + (count(past) if past else 0)
            + (count(notes) if notes else 0))
    return Context(tuple(sources), past, used, over, notes)


def _spare(left: dict[str, int], kind: str, hits: Sequence[Hit]) -> int:
    """Budget of the other kind that no hit of that kind will use."""
    other = "material" if kind == "transcripts" else "transcripts"
    wants_other = any((h.chunk.doc_type == "transcript") == (other == "transcripts") for h in hits)
    return 0 if wants_other else left[other]


def _spend(left: dict[str, int], kind: str, cost: int) -> None:
    own = min(cost, left[kind])
    left[kind] -= own
    other = "material" if kind == "transcripts" else "transcripts"
    left[other] -= cost - own


def render_sources(sources: Sequence[Source], maths: str = "latex") -> str:
    """The sources block of the prompt; `maths="unicode"` gives their LaTeX as Unicode maths
    (`context_maths`)."""
    def text(s: Source) -> str:
        return to_unicode(s.text) if maths == "unicode" else s.text

    return "\n\n".join(f"{source_header(s.number, s.hit)}\n{text(s)}" for s in sources)
