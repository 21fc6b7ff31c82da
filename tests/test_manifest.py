"""Course manifests (course.toml or YAML): file paths and per-file metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from coursetutor.errors import ManifestError
from coursetutor.ingest import Manifest, load_manifest
from coursetutor.types import FileMeta

from .support import SAMPLE_DIR, SAMPLE_MANIFEST

TOML = """\
[course]
id = "calc-1"
title = "Calculus I"
language = "de"

[[files]]
path = "notes/week-1.md"
type = "exercise"
topic = "limits"
difficulty = 4
title = "Week 1"
language = "en"

[[files]]
path = "video.srt"
"""

YAML = """\
course:
  id: calc-1
  title: Calculus I
  language: de
files:
  - path: notes/week-1.md
    type: exercise
    topic: limits
    difficulty: 4
    title: Week 1
    language: en
  - path: video.srt
"""


@pytest.mark.parametrize(("name", "text"), [("course.toml", TOML), ("course.yaml", YAML),
                                            ("course.yml", YAML)])
def test_manifest(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert load_manifest(path) == Manifest(
        course_id="calc-1",
        title="Calculus I",
        language="de",
        files=[
            (tmp_path / "notes" / "week-1.md",
             FileMeta(doc_type="exercise", topic="limits", difficulty=4, title="Week 1",
                      language="en", source_name="notes/week-1.md")),
            (tmp_path / "video.srt", FileMeta(source_name="video.srt")),
        ],
        language_set=True,
    )


def test_manifest_language_must_be_a_code(tmp_path: Path) -> None:
    path = tmp_path / "course.toml"
    path.write_text('[course]\nlanguage = "Italiano!"\n[[files]]\npath = "a.md"\n')
    with pytest.raises(ManifestError) as exc:
        load_manifest(path)
    assert str(exc.value) == (f"{path}: course.language: language must be a language code "
                              "such as en, it or zh, got 'Italiano!'")


def test_manifest_without_course_table(tmp_path: Path) -> None:
    path = tmp_path / "course.toml"
    path.write_text('[[files]]\npath = "../shared/a.pdf"\n')
    assert load_manifest(path) == Manifest(
        None, "", "en",
        [((tmp_path / "../shared/a.pdf").resolve(), FileMeta(source_name="../shared/a.pdf"))],
    )


def test_sample_manifest() -> None:
    manifest = load_manifest(SAMPLE_MANIFEST)
    assert (manifest.course_id, manifest.title, manifest.language) == (
        "numerical-methods-101", "Numerical Methods 101", "en"
    )
    assert [(p.name, m.doc_type, m.difficulty) for p, m in manifest.files] == [
        ("lecture-01-root-finding.md", "lecture", 2),
        ("lecture-01-video.srt", "transcript", 2),
        ("lecture-01-riassunto-it.md", "summary", 1),
        ("lecture-02-convergence.pdf", "lecture", 3),
        ("exercises-01.md", "exercise", 2),
        ("solutions-01.md", "solution", 2),
    ]
    assert all(p.parent == SAMPLE_DIR and p.is_file() for p, _ in manifest.files)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[course]\nid = "x"\n', "a manifest needs a 'files' list"),
        ('files = "a.md"\n', "a manifest needs a 'files' list"),
        ('[[files]]\ntype = "lecture"\n', "files[0] needs a 'path'"),
        ('[[files]]\npath = "a.md"\ncolour = "red"\nsize = 1\n',
         "files[0] has unknown key(s) colour, size"),
        ('[[files]]\npath = "a.md"\n[[files]]\npath = "b.md"\ntype = "lab"\n',
         "files[1]: unknown document type 'lab'; valid: lecture, slides, textbook, exercise, "
         "solution, exam, transcript, summary"),
        ('[[files]]\npath = "a.md"\ndifficulty = 7\n', "files[0]: difficulty must be 1-5, got 7"),
        ('[[files]]\npath = "a.md"\ndifficulty = "hard"\n',
         "files[0]: invalid literal for int() with base 10: 'hard'"),
    ],
)
def test_bad_manifest(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "course.toml"
    path.write_text(text)
    with pytest.raises(ManifestError) as exc:
        load_manifest(path)
    assert str(exc.value) == f"{path}: {message}"


@pytest.mark.parametrize(("name", "text"), [("course.toml", "files = [\n"),
                                            ("course.yaml", "files: [a, b\n")])
def test_unparsable_manifest(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ManifestError) as exc:
        load_manifest(path)
    assert str(exc.value).startswith(f"{path}: invalid manifest (")


def test_missing_manifest(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ManifestError) as exc:
        load_manifest(missing)
    assert str(exc.value) == f"{missing}: cannot read manifest (No such file or directory)"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("course.toml", 'course = "calc-1"\n[[files]]\npath = "a.md"\n'),
        ("course.yaml", "files:\n  - path: a.md\n    difficulty:\n"),
    ],
)
def test_malformed_manifest_is_a_manifest_error(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ManifestError):
        load_manifest(path)
