"""Ingestion: load, clean, chunk, embed (once per text) and store each file atomically."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import CoursetutorError, InputError, NoTextLayerError, Param, UnsupportedFileError
from ..retrieval.embed import EmbeddingModel
from ..retrieval.language import majority_language
from ..retrieval.tokenize import tokenize
from ..store import ChunkRow, Store
from ..store.files import FileStore
from ..types import ChunkDraft, Document, FileMeta
from .chunking import ChunkSizes, chunk_prose, chunk_slides, chunk_timed
from .formulas import without_gaps
from .latex import MAX_SOURCE_BYTES
from .latex_files import local_files
from .loaders import check_supported, load
from .ocr import OcrFn, make_ocr
from .parsed import ParsedDocument
from .slide_align import slide_cues
from .sourced import check_source
from .tex_unicode import to_unicode
from .titles import distinct_title, readable_name

# 2: Markdown read by the source reader (macros, $$ blocks, editor HTML); 3: formulas indexed
# and embedded as Unicode maths
PIPELINE_VERSION = "3"



@dataclasses.dataclass
class FileResult:
    """What happened to one file."""

    path: str
    status: str  # added, updated, unchanged, failed, skipped (a type no loader reads)
    document_id: str = ""
    pages: int = 0
    chunks: int = 0
    embedded: int = 0
    no_text_pages: list[int] = dataclasses.field(default_factory=list)
    dropped_pages: list[int] = dataclasses.field(default_factory=list)
    ocr_pages: list[int] = dataclasses.field(default_factory=list)
    formula_pages: list[int] = dataclasses.field(default_factory=list)  # blanks marked
    message: str = ""
    source: str = ""  # the LaTeX or Markdown file the chunks were read from
    source_chunks: int = 0  # chunks read from the source (the others: pages only the PDF has)
    placed: int = 0  # of those, the chunks that found their page in the PDF
    unplaced: list[str] = dataclasses.field(default_factory=list)  # sections that did not
    pdf_only_pages: list[int] = dataclasses.field(default_factory=list)  # no source text
    # what `message` says as a code a page translates, and the values it names (errors.py)
    code: str = ""
    params: dict[str, Param] = dataclasses.field(default_factory=dict)
    notes: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # Note.coded()s


@dataclasses.dataclass
class IngestReport:
    """The outcome of one ingest run."""

    course: str
    files: list[FileResult]
    seconds: float = 0.0

    @property
    def failed(self) -> list[FileResult]:
        return [f for f in self.files if f.status == "failed"]

    @property
    def succeeded(self) -> list[FileResult]:
        return [f for f in self.files if f.status not in ("failed", "skipped")]

    def totals(self) -> dict[str, int]:
        return {
            "files": len(self.files),
            "failed": len(self.failed),
            "pages": sum(f.pages for f in self.files),
            "chunks": sum(f.chunks for f in self.files),
            "embedded": sum(f.embedded for f in self.files),
            "skipped": sum(f.status == "skipped" for f in self.files),
            "no_text_pages": sum(len(f.no_text_pages) for f in self.files),
            "ocr_pages": sum(len(f.ocr_pages) for f in self.files),
            "formula_pages": sum(len(f.formula_pages) for f in self.files),
        }


@dataclasses.dataclass(frozen=True)
class DraftDocument:
    """A document already cut into chunk drafts, ready to embed and store."""

    id: str
    title: str
    source_name: str
    content_hash: str
    pages: int
    drafts: list[ChunkDraft]


@dataclasses.dataclass
class PreparedFile:
    """A file parsed, chunked and embedded: what `Ingestor.write` puts into its course."""

    result: FileResult  # what the file's report says once it is written
    data: bytes
    suffix: str
    content_hash: str
    document: Document | None = None  # None: unchanged, the stored version stays
    rows: list[ChunkRow] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Progress:
    """A progress event: a stage of one file, with counts so far."""

    path: str
    stage: str  # parsed, embedding, stored, skipped, failed
    pages: int = 0
    chunks: int = 0
    embedded: int = 0
    to_embed: int = 0


ProgressFn = Callable[[Progress], None]


def document_id(name: str) -> str:
    """A stable, readable document id from the file's name in the course."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "document"


def content_hash(data: bytes, meta: FileMeta, sizes: ChunkSizes | None = None) -> str:
    """Hash of the file bytes, its metadata, the chunk sizes and the pipeline version.

    Changing any of them makes the next ingest re-chunk the file (embeddings of unchanged
    chunk texts still come from the vector cache).
    """
    h = hashlib.sha256(data)
    fields = dataclasses.asdict(meta)
    if not fields["media_url"]:
        del fields["media_url"]  # documents ingested before media links keep their hash
    if fields.pop("slides"):  # the deck's bytes count, not where it lies
        fields["slides_sha256"] = _file_digest(Path(meta.slides))
    if fields.pop("source"):  # so do the source's and those of the files it inputs
        fields["source_sha256"] = source_digest(Path(meta.source))
    h.update(json.dumps(fields, sort_keys=True).encode())
    if sizes is not None:
        h.update(json.dumps(dataclasses.asdict(sizes), sort_keys=True).encode())
    h.update(PIPELINE_VERSION.encode())
    return h.hexdigest()


def _file_digest(path: Path, what: str = "slides") -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise InputError(f"cannot read the {what} {path.name!r} ({exc.strerror})") from exc


def source_digest(source: Path) -> str:
    """Hash of a source's bytes and of the files of its folder it inputs."""
    files = local_files(source, MAX_SOURCE_BYTES) if source.suffix.lower() == ".tex" else \
        [source]
    return hashlib.sha256("".join(_file_digest(f, "source") for f in files).encode()
                          ).hexdigest()


def with_source(path: Path, meta: FileMeta) -> FileMeta:
    """`meta` with its source, if any, as an absolute path (a relative one is beside `path`)."""
    if not meta.source:
        return meta
    return dataclasses.replace(meta, source=str((path.parent / meta.source).resolve()))


def id_clashes(items: list[tuple[Path, FileMeta]]) -> dict[int, FileResult]:
    """Failed results for the files whose document id an earlier file of the batch has."""
    seen: dict[str, Path] = {}
    clashes: dict[int, FileResult] = {}
    for i, (path, meta) in enumerate(items):
        doc_id = document_id(meta.source_name or path.name)
        if doc_id in seen:
            clashes[i] = FileResult(str(path), "failed", doc_id, message=(
                f"{path}: same document id {doc_id!r} as {seen[doc_id]} in this batch; "
                "rename one of them"), code="same_document_id", params={
                    "file": path.name, "document": doc_id, "other": seen[doc_id].name})
        else:
            seen[doc_id] = path
    return clashes


def failed_result(path: Path, exc: CoursetutorError) -> FileResult:
    """The report line of a file that did not go in: skipped (a type no loader reads) or
    failed, with the pages a scan has when no page has text."""
    status = "skipped" if isinstance(exc, UnsupportedFileError) else "failed"
    result = FileResult(str(path), status, message=str(exc), code=exc.code,
                        params=dict(exc.params))
    if isinstance(exc, NoTextLayerError):
        result.pages, result.no_text_pages = exc.pages, list(exc.no_text_pages)
    return result


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def index_text(title: str, path: tuple[str, ...], text: str, cap: int = 200) -> str:
    """Contextual text for retrieval: document title and section path before the chunk, each
    cut to `cap` characters (metadata is short context, never a text of its own to embed)."""
    heading = " > ".join(p for p in path if p and p != title)
    # formulas as Unicode maths: LaTeX commands (`\\frac`, `\\left`) are no words of the course
    return "\n".join(x for x in (title[:cap], heading[:cap], to_unicode(without_gaps(text)))
                     if x)


def vector_key(tenant: str, context: str) -> str:
    """The vector cache key of a text in a tenant: each tenant has keys of its own, so
    whether a text was embedded before (the job's `embedded` count, its time) says nothing
    about another tenant's documents."""
    return text_hash(f"{tenant}\x1f{context}")


class Ingestor:
    """Loads files into one course of one tenant."""

    def __init__(self, store: Store, embedder: EmbeddingModel, settings: Settings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.files = FileStore(settings.files_path)
        self.sizes = ChunkSizes(
            target=settings.chunk_target_tokens,
            maximum=settings.chunk_max_tokens,
            overlap=settings.chunk_overlap,
            window_seconds=settings.transcript_window_seconds,
            max_seconds=settings.transcript_max_seconds,
        )
        # the engine itself is built on the first page that needs it
        self.ocr: OcrFn | None = make_ocr(settings.ocr)

    def ingest(
        self,
        tenant: str,
        course: str,
        items: list[tuple[Path, FileMeta]],
        progress: ProgressFn | None = None,
    ) -> IngestReport:
        """Ingest every file; a failing file is reported and the rest still go in."""
        started = time.perf_counter()
        info = self.store.get_course(tenant, course)
        report = IngestReport(course=course, files=[])
        notify = progress or (lambda _p: None)
        clashes = id_clashes(items)
        for i, (path, meta) in enumerate(items):
            if i in clashes:
                report.files.append(clashes[i])
                notify(Progress(str(path), "failed"))
                continue
            try:
                prepared = self.prepare(tenant, course, info.language, path, meta, notify)
                result = self.write(tenant, course, prepared, notify)
            except CoursetutorError as exc:
                result = failed_result(path, exc)
                notify(Progress(str(path), result.status, result.pages))
            report.files.append(result)
        report.seconds = time.perf_counter() - started
        return report

    def prepare(
        self, tenant: str, course: str, language: str, path: Path, meta: FileMeta,
        notify: ProgressFn,
    ) -> PreparedFile:
        """Read, parse, chunk and embed one file; nothing is written into the course (the
        vectors go to the shared vector cache), so several workers may prepare at once."""
        source_name = meta.source_name or path.name
        check_supported(path)
        meta = with_source(path, meta)
        source = Path(meta.source) if meta.source else None
        if source is not None:
            check_source(path, source)
        data = _read_checked(path, self.settings.max_file_bytes)
        doc_id = document_id(source_name)
        digest = content_hash(data, meta, self.sizes)
        old = self.store.find_document(tenant, course, doc_id)
        suffix = Path(source_name).suffix
        if old is not None and old.content_hash == digest:
            return PreparedFile(FileResult(str(path), "unchanged", doc_id, old.pages,
                                           old.chunks), data, suffix, digest)
        parsed = load(path, self.ocr, source, self.settings.max_file_bytes)
        _check_cap(path, parsed.pages, "pages", self.settings.ingest_max_pages_per_file)
        drafts = self._chunk(parsed, meta)
        _check_cap(path, len(drafts), "chunks", self.settings.ingest_max_chunks_per_file)
        notify(Progress(str(path), "parsed", parsed.pages, len(drafts)))
        doc = DraftDocument(doc_id, meta.title or own_title(parsed, path, source_name),
                            source_name, digest, parsed.pages, drafts)
        document, rows, embedded = self.document(tenant, course, language, doc, meta, notify)
        result = FileResult(
            str(path), "updated" if old else "added", doc_id, parsed.pages, len(rows), embedded,
            parsed.no_text_pages, parsed.dropped_pages, parsed.ocr_pages, parsed.formula_pages,
        )
        if source is not None:
            result = placement_result(result, source, parsed, drafts)
        elif parsed.notes:
            result.message = f"{path.name}: {'; '.join(n.text for n in parsed.notes)}"
            result.notes = [n.coded() for n in parsed.notes]
        return PreparedFile(result, data, suffix, digest, document, rows)

    def write(self, tenant: str, course: str, prepared: PreparedFile,
              notify: ProgressFn) -> FileResult:
        """Put a prepared file into its course: its original file, then its chunks in one
        transaction (run one at a time per course)."""
        result = prepared.result
        # the file goes in first: a crash then leaves an orphan file, never a cited page
        # without its file
        self.files.put(tenant, course, result.document_id, prepared.content_hash,
                       prepared.suffix, prepared.data)
        if prepared.document is None:
            notify(Progress(result.path, "skipped", result.pages, result.chunks))
            return result
        stored = self.store.replace_document(self._titled(prepared.document), prepared.rows)
        self.files.prune(tenant, course, result.document_id, keep=prepared.content_hash)
        notify(Progress(result.path, "stored", result.pages, stored, result.embedded))
        return dataclasses.replace(result, chunks=stored)

    def _titled(self, document: Document) -> Document:
        """`document` with a title no other document of its course has (an exercise sheet
        and its solutions often share their metadata title)."""
        taken = {d.title for d in self.store.list_documents(document.tenant, document.course)
                 if d.id != document.id}
        title = distinct_title(document.title, document.source_name, taken)
        return document if title == document.title else dataclasses.replace(document,
                                                                             title=title)

    def add(
        self, tenant: str, course: str, course_language: str, doc: DraftDocument,
        meta: FileMeta, notify: ProgressFn | None = None,
    ) -> tuple[int, int, str]:
        """Embed and store already chunked text; returns (stored, embedded, language)."""
        document, rows, embedded = self.document(tenant, course, course_language, doc, meta,
                                                 notify or (lambda _p: None))
        return self.store.replace_document(document, rows), embedded, document.language

    def document(
        self, tenant: str, course: str, course_language: str, doc: DraftDocument,
        meta: FileMeta, notify: ProgressFn,
    ) -> tuple[Document, list[ChunkRow], int]:
        """The document and its chunk rows, embedded; returns (document, rows, embedded)."""
        lang = meta.language or majority_language((without_gaps(d.text) for d in doc.drafts),
                                                  default=course_language)
        rows = [self._row(tenant, doc.id, d, doc.title, lang) for d in doc.drafts]
        embedded = self._embed(rows, doc.title, doc.source_name, doc.pages, notify)
        document = Document(
            tenant=tenant, course=course, id=doc.id, title=doc.title, doc_type=meta.doc_type,
            topic=meta.topic, difficulty=meta.difficulty, language=lang,
            source_name=doc.source_name, content_hash=doc.content_hash, pages=doc.pages,
            chunks=len(rows), media_url=meta.media_url,
        )
        return document, rows, embedded

    def _chunk(self, parsed: ParsedDocument, meta: FileMeta) -> list[ChunkDraft]:
        count = self.embedder.token_count
        if parsed.kind == "timed":
            cues = parsed.sections
            if meta.slides:
                cues = slide_cues(cues, Path(meta.slides), self.embedder, self.ocr)
            return chunk_timed(cues, self.sizes, count)
        if meta.doc_type == "slides" and not parsed.aligned:
            return chunk_slides(parsed.sections, self.sizes, count)
        return chunk_prose(parsed.sections, self.sizes, count)

    def _row(self, tenant: str, doc_id: str, d: ChunkDraft, title: str,
             language: str) -> ChunkRow:
        """A storable chunk: its id hashes document and text, so each document keeps its own
        locator for text that also occurs elsewhere; `content_hash` lets search dedupe them."""
        context = index_text(title, d.section_path, d.text, self.settings.index_title_chars)
        return ChunkRow(
            id=text_hash(f"{doc_id}\n{d.text}"), content_hash=text_hash(d.text), text=d.text,
            section_path=d.section_path, locator=d.locator,
            ordinal=d.ordinal, n_tokens=d.n_tokens, terms=tuple(tokenize(context, language)),
            vector_key=vector_key(tenant, context), cues=d.cues,
        )

    def _embed(
        self, rows: list[ChunkRow], title: str, path: str, pages: int, notify: ProgressFn
    ) -> int:
        """Embed the texts not embedded before; returns how many were embedded now."""
        model = self.embedder.model_id
        cap = self.settings.index_title_chars
        texts = {r.vector_key: index_text(title, r.section_path, r.text, cap) for r in rows}
        have = self.store.get_vectors(model, list(texts))
        todo = [k for k in texts if k not in have]
        batch = self.settings.embed_batch_size
        for i in range(0, len(todo), batch):
            keys = todo[i : i + batch]
            vectors = self.embedder.embed_batch([texts[k] for k in keys], is_query=False)
            self.store.put_vectors(model, dict(zip(keys, vectors, strict=True)))
            notify(Progress(path, "embedding", pages, len(rows), i + len(keys), len(todo)))
        return len(todo)


def _check_cap(path: Path, count: int, what: str, cap: int) -> None:
    """Refuse a file with more pages or chunks than one file may have (before embedding)."""
    if count > cap:
        raise InputError(f"{path.name}: {count} {what} is over the limit of {cap} {what} per "
                         f"file (ingest_max_{what}_per_file); split the file",
                         code="file_too_many_pages" if what == "pages" else "file_too_many_chunks",
                         file=path.name, count=count, limit=cap)


def placement_result(result: FileResult, source: Path, parsed: ParsedDocument,
                     drafts: list[ChunkDraft]) -> FileResult:
    """The report of a PDF read with its source: how many chunks found their page, the
    sections that did not, the pages only the PDF had text for, what the source left out."""
    unplaced: list[str] = []
    for d in drafts:
        if d.locator.page is None:
            name = " > ".join(d.section_path) or "(before the first heading)"
            if name not in unplaced:
                unplaced.append(name)
    notes = f"{source.name}: {'; '.join(n.text for n in parsed.notes)}" if parsed.notes else ""
    own = [d for d in drafts if d.locator.page is None or d.locator.page not in
           parsed.pdf_only_pages]
    return dataclasses.replace(
        result, source=source.name, source_chunks=len(own),
        placed=sum(d.locator.page is not None for d in own), unplaced=unplaced,
        pdf_only_pages=parsed.pdf_only_pages, message=notes,
        notes=[n.coded() for n in parsed.notes])


def own_title(parsed: ParsedDocument, path: Path, source_name: str) -> str:
    """The file's own title (PDF metadata, a Markdown file's one top heading, a JSON
    sheet's title), else its name in the course made readable."""
    if parsed.title and parsed.title != path.stem:
        return parsed.title
    return readable_name(source_name)


def _read_checked(path: Path, limit: int) -> bytes:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    if path.is_dir():
        raise InputError(f"{path}: is a directory")
    if size > limit:
        raise InputError(f"{path.name}: {size} bytes is over the {limit}-byte upload limit",
                         code="file_too_large", file=path.name, size=size, limit=limit)
    if size == 0:
        raise InputError(f"{path.name}: the file is empty", code="file_empty", file=path.name)
    return path.read_bytes()
