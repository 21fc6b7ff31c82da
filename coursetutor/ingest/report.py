"""An ingest report as the JSON an ingest job keeps (what GET /v1/jobs/{id} shows)."""

from __future__ import annotations

import json
from pathlib import Path

from .pipeline import FileResult, IngestReport


def report_json(report: IngestReport, folder: Path) -> str:
    """The report as JSON, its messages without the upload folder."""
    files = [{"name": Path(f.path).name, "status": f.status, "document": f.document_id,
              "pages": f.pages, "chunks": f.chunks, "embedded": f.embedded,
              "no_text_pages": f.no_text_pages, "ocr_pages": f.ocr_pages,
              "formula_pages": f.formula_pages, "dropped_pages": f.dropped_pages,
              "message": short(f.message, folder), "code": f.code, "params": f.params,
              "notes": f.notes, **source_fields(f)}
             for f in report.files]
    return json.dumps({"files": files, "totals": report.totals(),
                       "seconds": round(report.seconds, 2)})


def source_fields(f: FileResult) -> dict[str, object]:
    """A PDF read with its source: the source, its chunks on their page, what was not."""
    if not f.source:
        return {}
    return {"source": f.source, "source_chunks": f.source_chunks, "placed": f.placed,
            "unplaced": f.unplaced, "pdf_only_pages": f.pdf_only_pages}


def short(message: str, folder: Path) -> str:
    """The message without the server-side folder of the upload."""
    return message.replace(f"{folder}/", "").replace(str(folder), "upload")


NO_FILE = "no file could be ingested"  # a failed job's error


def outcome(report: IngestReport, folder: Path) -> dict[str, object]:
    """The job fields of a finished ingest: status, counts, the report and an error."""
    status = "done" if report.succeeded else "failed"
    embedded = report.totals()["embedded"]
    return {"status": status, "stage": status, "files_done": len(report.files),
            "embedded": embedded, "to_embed": embedded, "report": report_json(report, folder),
            "error": NO_FILE if status == "failed" else ""}
