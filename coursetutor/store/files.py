"""The original files of a course's documents, kept so citations can open the real page."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from ..types import Document
from .private import private_dir

CONTENT_TYPES = {
    ".pdf": "application/pdf",
    ".md": "text/markdown; charset=utf-8",
    ".markdown": "text/markdown; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".srt": "text/plain; charset=utf-8",
    ".vtt": "text/vtt; charset=utf-8",
    ".json": "application/json",
}


def _name(*parts: str) -> str:
    """A directory name for ids that may hold any character."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


class FileStore:
    """Original files under one directory: <course>/<document>/<content hash><suffix>.

    A new version is written next to the old one before the store commits it, and the old one
    is pruned afterwards, so a failed ingest never leaves a document without its file.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def _course_dir(self, tenant: str, course: str) -> Path:
        return self.root / _name(tenant, course)

    def _doc_dir(self, tenant: str, course: str, document_id: str) -> Path:
        return self._course_dir(tenant, course) / _name(document_id)

    def put(self, tenant: str, course: str, document_id: str, content_hash: str, suffix: str,
            data: bytes) -> Path:
        """Write one version of a document's file atomically (nothing if it is there)."""
        folder = self._doc_dir(tenant, course, document_id)
        target = folder / f"{content_hash}{suffix.lower()}"
        if target.is_file():
            return target
        private_dir(self.root)  # what is under it is then out of other users' reach
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return target

    def prune(self, tenant: str, course: str, document_id: str, keep: str) -> None:
        """Remove the versions of a document's file other than `keep` (a content hash)."""
        folder = self._doc_dir(tenant, course, document_id)
        if folder.is_dir():
            for old in folder.iterdir():
                if not old.name.startswith(keep):
                    old.unlink(missing_ok=True)

    def find(self, document: Document) -> Path | None:
        """The stored file of `document`'s current version, if there is one."""
        suffix = Path(document.source_name).suffix.lower()
        path = (self._doc_dir(document.tenant, document.course, document.id)
                / f"{document.content_hash}{suffix}")
        return path if path.is_file() else None

    def remove_document(self, tenant: str, course: str, document_id: str) -> None:
        shutil.rmtree(self._doc_dir(tenant, course, document_id), ignore_errors=True)

    def remove_course(self, tenant: str, course: str) -> None:
        shutil.rmtree(self._course_dir(tenant, course), ignore_errors=True)


def content_type(document: Document) -> str:
    """The MIME type a browser needs to show the document's file."""
    return CONTENT_TYPES.get(Path(document.source_name).suffix.lower(),
                             "application/octet-stream")
