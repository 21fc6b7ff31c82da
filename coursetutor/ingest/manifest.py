"""Course manifests (`course.toml` or YAML) listing files with their metadata."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

from ..errors import CoursetutorError, ManifestError
from ..retrieval.language import check_language
from ..types import FileMeta, check_difficulty, check_doc_type, check_media_url


@dataclasses.dataclass(frozen=True)
class Manifest:
    course_id: str | None
    title: str
    language: str
    files: list[tuple[Path, FileMeta]]
    allow_solutions: bool | None = None  # None: leave the course's policy as it is
    language_set: bool = False  # [course] language given: the course keeps it


def _file_entry(entry: Any, base: Path, n: int, source: str) -> tuple[Path, FileMeta]:
    if not isinstance(entry, dict) or "path" not in entry:
        raise ManifestError(f"{source}: files[{n}] needs a 'path'")
    unknown = set(entry) - {"path", "type", "topic", "difficulty", "title", "language",
                            "media_url", "slides", "source"}
    if unknown:
        raise ManifestError(f"{source}: files[{n}] has unknown key(s) {', '.join(sorted(unknown))}")
    try:
        meta = FileMeta(
            doc_type=check_doc_type(str(entry.get("type", "lecture"))),
            topic=str(entry.get("topic", "")),
            difficulty=check_difficulty(int(entry.get("difficulty", 2))),
            title=entry.get("title"),
            language=check_language(str(entry["language"])) if entry.get("language") else None,
            source_name=str(entry["path"]),
            media_url=check_media_url(str(entry.get("media_url", ""))),
            slides=str((base / str(entry["slides"])).resolve()) if entry.get("slides") else "",
            source=str((base / str(entry["source"])).resolve()) if entry.get("source") else "",
        )
    except (CoursetutorError, ValueError, TypeError) as exc:
        raise ManifestError(f"{source}: files[{n}]: {exc}") from exc
    return (base / str(entry["path"])).resolve(), meta


def load_manifest(path: Path) -> Manifest:
    """Read a course manifest; file paths are relative to the manifest's folder."""
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read manifest ({exc.strerror})") from exc
    try:
        if path.suffix.lower() in {".yaml", ".yml"}:
            import yaml

            data = yaml.safe_load(raw)
        else:
            data = tomllib.loads(raw)
    except Exception as exc:  # both parsers raise their own error types
        raise ManifestError(f"{path}: invalid manifest ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        raise ManifestError(f"{path}: a manifest needs a 'files' list")
    course = data.get("course") or {}
    if not isinstance(course, dict):
        raise ManifestError(f"{path}: 'course' must be a table with id, title and language")
    files = [_file_entry(e, path.parent, i, str(path)) for i, e in enumerate(data["files"])]
    language = course.get("language")
    try:
        code = check_language(str(language)) if language else "en"
    except CoursetutorError as exc:
        raise ManifestError(f"{path}: course.language: {exc}") from exc
    return Manifest(
        course_id=course.get("id"),
        title=str(course.get("title", "")),
        language=code,
        files=files,
        allow_solutions=_policy(course.get("allow_solutions"), str(path)),
        language_set=bool(language),
    )


def _policy(value: Any, source: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise ManifestError(f"{source}: course.allow_solutions must be true or false")
