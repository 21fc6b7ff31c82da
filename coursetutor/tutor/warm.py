"""The vectors of a course's evidence sentences, embedded at ingest instead of in a turn.

The evidence stage scores each sentence of the first passages against the question with e5
(sentences.py); embedded in the turn, they held up the first question on a topic before the
model read a word (the latency bench's evidence stage: 44.7 ms median before, 3.0 ms after).
Ingest (the command line, the API's jobs, the workers) embeds them once the document is
stored, into the store's vector table (retrieval/sentence_store.py), for every process to
read. Sentences a turn meets first (a live class's new lines, a passage joined to the next)
are kept once embedded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..workspace import Workspace
from .sentences import readable, uncued, units

BATCH = 64  # sentences embedded and kept at a time


def warm(ws: Workspace, course: str, documents: Sequence[str] = (),
         notify: Callable[[int, int], bool | None] | None = None) -> int:
    """Embed the sentences of the course's passages (those of `documents`, or all) that the
    store does not have yet, cut as the evidence stage cuts them; returns how many were
    embedded. `notify(done, total)` after each batch; when it returns True, the rest waits
    for the turns that need it (a job stopped or cancelled). Nothing with `warm_sentences`
    off."""
    if not ws.settings.warm_sentences:
        return 0
    chosen = set(documents)
    texts: dict[str, None] = {}
    for document in ws.store.list_documents(ws.tenant, course):
        if chosen and document.id not in chosen:
            continue
        for row in ws.store.export_chunks(ws.tenant, course, document.id):
            for sentence in units(row.text, document.language):
                if readable(sentence := uncued(sentence)):
                    texts.setdefault(sentence)
    stored = ws.sentences
    listed = list(texts)
    have = stored.get(listed)
    todo = [text for text in listed if text not in have]
    for i in range(0, len(todo), BATCH):
        ws.embedder.embed_sentences(todo[i:i + BATCH], stored)
        done = min(i + BATCH, len(todo))
        if notify is not None and notify(done, len(todo)):
            return done
    return len(todo)
