"""Stage: select. The evidence sentences of the graded passages (sentences.py): the few
whole sentences that answer the question, numbered S1..Sk, which the compose stage writes
from. When what answers is garbled (formulas lost, glyph soup), the student is sent to the
page instead of being shown its glyphs."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from ...types import Hit, MetaEvent, SearchFilters
from ..citations import hit_citation
from ..pipeline import Reply
from ..replies import reply
from ..sentences import (
    PASSAGES,
    Selection,
    defining_passage,
    ends_in_label,
    ends_in_lead_in,
    garbled,
    opens_on_proof,
    readable_head,
    select,
    units,
)
from .find import Found
from .tools import Tools


@dataclasses.dataclass(frozen=True)
class Selected:
    """The question's evidence sentences."""

    found: Found
    selection: Selection
    laps: dict[str, float] = dataclasses.field(default_factory=dict)


def applies(tools: Tools, f: Found) -> bool:
    """Questions about the material are answered from sentences; exercise help keeps its
    rungs (stages/write.py), and a course set to prose answers keeps the prose path. With
    `answer_style = "auto"` a question is answered from sentences when its best passage is
    LaTeX maths (a teacher's source): the small model writes wrong maths from whole LaTeX
    passages, and statements keep each formula as the page writes it."""
    if f.cat.intent == "exercise":
        return False
    style = tools.settings.answer_style
    return style == "statements" or (style == "auto" and bool(f.evidence.hits) and bool(
        _LATEX.search(f.evidence.hits[0].chunk.text)))


_LATEX = re.compile(r"\\[(\[]|\$[^$\n]*\\[A-Za-z]+[^$\n]*\$")  # \( \[ or $…\cmd…$


def select_evidence(tools: Tools, f: Found) -> Selected | Reply:
    u = f.understood
    hits = continued(tools, u.recalled.opened.course,
                     with_definition(tools, f, list(f.evidence.hits)))
    selection = select(u.recalled.opened.question, u.translated, hits,
                       f.cat.language, f.cat.intent, tools.ws.embedder, tools.ws.sentences)
    hit = selection.garbled_only
    if hit is None:
        return Selected(f, selection)
    cited = (hit_citation(1, hit, ""),)
    text = reply("garbled_page", f.cat.language, page=hit.locator.label()) + " [1]"
    meta = MetaEvent(u.recalled.opened.session_id, f.cat.category, f.cat.intent, "",
                     f.evidence.grade, f.cat.language)
    return Reply(f.cat, f.evidence, text, cited, meta=meta, tier=f.tier, context=(hit.chunk.id,),
                 note="the answering page is garbled")


DEEPER = 15  # the passages a what-is question's search reads for the one that defines it


def with_definition(tools: Tools, f: Found, hits: list[Hit]) -> list[Hit]:
    """The passages, led by the one that defines what a what-is question asks about when
    none of the first passages does: "Che cos'è una funzione continua?" found examples of
    continuous functions first, and the definition ("Si dice che F è continua in x₀ se:
    lim f(x) = f(x₀)") eleventh; the reply quoted the examples. The question's own search,
    read deeper, gives it."""
    u, o = f.understood, f.understood.recalled.opened
    question, search = o.question, u.translated
    if not hits or defining_passage(question, search, hits, f.cat.language, f.cat.intent):
        return hits
    seen = {h.chunk.id for h in hits}
    deeper = tools.ws.search(f.query, o.course, k=DEEPER, doc_types=o.allowed_types,
                             state=o.state.search)
    more = [h for h in deeper if h.chunk.id not in seen]
    found = next((h for h in more if defining_passage(question, search, [h], f.cat.language,
                                                      f.cat.intent)), None)
    return [found, *hits] if found else hits


def continued(tools: Tools, course: str, hits: Sequence[Hit]) -> list[Hit]:
    """The passages read, each that ends on a bare label ("Teorema 56 (della media
    integrale).") or a lead-in ("… we want to estimate a model π :") with the first
    sentence of the next passage of its document added (the statement the label names, what
    the lead-in introduces: up to the clause a flattened formula garbles), and each that
    opens on a proof with the last sentence of the passage before it (the statement it
    proves)."""
    out = list(hits)
    filters = SearchFilters(tools.ws.tenant, course)
    for n, hit in enumerate(out[:PASSAGES]):
        chunk = hit.chunk
        found = units(chunk.text, chunk.language)  # cut once for both questions below
        label = ends_in_label(chunk.text, chunk.language, found)
        if label or ends_in_lead_in(found):
            after = tools.ws.store.chunk_at(filters, chunk.document_id, chunk.ordinal + 1)
            first = units(after.text, after.language)[:1] if after else []
            # what a lead-in introduces joins it only when it can be read: garbled, it would
            # take the lead-in out of the evidence with it; a sentence that reads up to a
            # formula the PDF ran flat joins up to there
            if first and not label and garbled(first[0]):
                first = [head] if (head := readable_head(first[0])) else []
            if first:
                chunk = dataclasses.replace(chunk, text=_continued(chunk.text, found[-1],
                                                                   first[0]))
        if chunk.ordinal > 0 and opens_on_proof(chunk.text, chunk.language, found):
            # a proof with what it proves: "定理 3.2.4 (介值定理) …" before "Proof. 区间套 …"
            before = tools.ws.store.chunk_at(filters, chunk.document_id, chunk.ordinal - 1)
            last = units(before.text, before.language)[-1:] if before else []
            if last:
                chunk = dataclasses.replace(chunk, text=f"{last[0]}\n\n{chunk.text}")
        if chunk is not hit.chunk:
            out[n] = dataclasses.replace(hit, chunk=chunk)
    return out


def _continued(text: str, label: str, first: str) -> str:
    """A passage that ends on `label`, with `first`, the next passage's first sentence; when
    the passages overlap and that sentence opens with the label again ("**定理 2.4.2
    (区间套)**" twice), the passage's own copy of the label gives way to it."""
    core = label.strip("*_ →")
    at = text.rfind(core)
    if core and at >= 0 and core in first:
        return f"{text[:at].rstrip(' *_→')} {first}".strip()
    return f"{text} {first}"
