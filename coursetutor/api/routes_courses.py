"""Courses, enrolments, documents, uploads and their ingest jobs, and the original files."""

from __future__ import annotations

import dataclasses
import shutil
import time
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field
from starlette.datastructures import UploadFile

from ..errors import (
    ConflictError,
    InputError,
    NotFoundError,
    PayloadTooLargeError,
    UnsupportedFileError,
)
from ..ingest.loaders import LOADERS
from ..ingest.sourced import SOURCES
from ..retrieval.language import check_language
from ..store.files import content_type
from ..types import ApiKey, FileMeta, check_doc_type, check_media_url
from . import encode, validate
from .access import check_id
from .deps import (
    CallerDep,
    State,
    caller_of,
    hides_solutions,
    limit_address,
    may_see_course,
    require_teacher,
    visible_course,
)
from .routes_students import students_view
from .state import AppState
from .validate import Id, Line, Name

router = APIRouter(prefix="/v1", tags=["courses"])
SUFFIXES = frozenset([*LOADERS, ".pdf"])
SOURCE_FOLDER = "source"  # a PDF's source and the files it inputs, staged beside the PDF
INPUT_SUFFIXES = frozenset({".tex", ".sty"})


class CourseIn(BaseModel):
    id: Id = Field(min_length=1)
    title: Name = ""
    # given: the course keeps it; else it follows its documents (most of their chunks)
    language: Line | None = Field(None, min_length=2, max_length=16)
    allow_solutions: bool = False


class CoursePatch(BaseModel):
    title: Name | None = None
    allow_solutions: bool | None = None
    language: Line | None = Field(None, min_length=2, max_length=16)  # "auto": follow documents
    retention_days: int | None = Field(None, ge=0, le=36_500)  # keep turns; 0: forever


@router.get("/courses")
def list_courses(caller: CallerDep, state: State) -> dict[str, Any]:
    """Courses of the tenant; a student sees those it is enrolled in."""
    courses = state.workspace.store.list_courses(caller.tenant)
    if caller.role == "student":
        mine = set(state.workspace.store.student_courses(caller.tenant, caller.student))
        courses = [c for c in courses if c.id in mine]
    return {"courses": [encode.course(c) for c in courses]}


@router.post("/courses", status_code=201)
def create_course(body: CourseIn, caller: CallerDep, state: State) -> dict[str, Any]:
    require_teacher(caller)
    store = state.workspace.store
    check_id("course", body.id)
    if ":" in body.id:
        raise InputError("a course id cannot contain ':'", code="course_id_colon")
    try:
        store.get_course(caller.tenant, body.id)
    except NotFoundError:
        pass
    else:
        raise ConflictError(f"course {body.id!r} already exists", code="course_exists",
                            course=body.id)
    language = check_language(body.language) if body.language else None
    store.ensure_course(caller.tenant, body.id, body.title, language or "en")
    if language:
        store.set_course_language(caller.tenant, body.id, language)
    return encode.course(store.set_course_policy(caller.tenant, body.id, body.allow_solutions))


@router.get("/courses/{course}")
def get_course(course: str, caller: CallerDep, state: State) -> dict[str, Any]:
    return encode.course(visible_course(state, caller, course))


@router.patch("/courses/{course}")
def patch_course(course: str, body: CoursePatch, caller: CallerDep,
                 state: State) -> dict[str, Any]:
    require_teacher(caller)
    found = state.workspace.store.get_course(caller.tenant, course)
    # checked before anything is written: a refused patch changes nothing
    language = None if body.language in (None, "auto") else check_language(body.language)
    if body.title is not None:
        state.workspace.store.ensure_course(caller.tenant, course, body.title, found.language)
    if body.allow_solutions is not None:
        state.workspace.store.set_course_policy(caller.tenant, course, body.allow_solutions)
    if body.language is not None:
        state.workspace.store.set_course_language(caller.tenant, course, language)
    if body.retention_days is not None:
        state.workspace.store.profiles.set_retention_days(caller.tenant, course,
                                                          body.retention_days)
    return encode.course(state.workspace.store.get_course(caller.tenant, course))


@router.delete("/courses/{course}", status_code=204)
def delete_course(course: str, caller: CallerDep, state: State) -> None:
    require_teacher(caller)
    state.workspace_for(caller.tenant).remove_course(course)


@router.get("/courses/{course}/students")
def list_students(course: str, caller: CallerDep, state: State,
                  idle_days: Annotated[float, Query(ge=0, le=36_500, allow_inf_nan=False)] = 14
                  ) -> dict[str, Any]:
    """The enrolled students, and every student's profile and when they were last seen."""
    require_teacher(caller)
    return {"students": state.workspace.store.list_students(caller.tenant, course),
            **students_view(state, caller, course, idle_days)}


@router.put("/courses/{course}/students/{student}", status_code=204)
def enroll(course: str, student: str, caller: CallerDep, state: State) -> None:
    require_teacher(caller)
    state.workspace.store.enroll(caller.tenant, course, check_id("student", student))


@router.delete("/courses/{course}/students/{student}", status_code=204)
def unenroll(course: str, student: str, caller: CallerDep, state: State) -> None:
    require_teacher(caller)
    state.workspace.store.unenroll(caller.tenant, course, student)


@router.get("/courses/{course}/documents")
def list_documents(course: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """Documents of a course; students do not see solutions unless the course allows them."""
    info = visible_course(state, caller, course)
    docs = state.workspace.store.list_documents(caller.tenant, course)
    if hides_solutions(caller.key, info):
        docs = [d for d in docs if d.doc_type != "solution"]
    return {"documents": [encode.document(d) for d in docs]}


@router.delete("/courses/{course}/documents/{document}", status_code=204)
def delete_document(course: str, document: str, caller: CallerDep, state: State) -> None:
    require_teacher(caller)
    state.workspace_for(caller.tenant).remove_document(course, document)


def _file_name(upload: UploadFile) -> str:
    name = validate.file_name(upload.filename or "")
    if not name:
        raise InputError("an uploaded file has no name", code="file_without_name")
    if Path(name).suffix.lower() not in SUFFIXES:
        raise UnsupportedFileError(
            f"{name}: unsupported file type; supported: {', '.join(sorted(SUFFIXES))}",
            code="unsupported_file_type", file=name, supported=", ".join(sorted(SUFFIXES)))
    return name


def _meta(form: Any, name: str) -> FileMeta:
    """The metadata form fields of an upload (422 naming the field that is not acceptable)."""
    return FileMeta(doc_type=check_doc_type(validate.form_text(form, "type", 32, "lecture")),
                    topic=validate.form_text(form, "topic", 200),
                    difficulty=validate.form_int(form, "difficulty", 2, 1, 5),
                    title=validate.form_text(form, "title", 300) or None,
                    language=_language(validate.form_text(form, "language", 16)),
                    source_name=name,
                    media_url=check_media_url(validate.form_text(form, "media_url", 2048)))


def _language(value: str) -> str | None:
    """An upload's `language` field as a language code (422 when it is not one)."""
    try:
        return check_language(value) if value else None
    except InputError as exc:
        raise InputError(f"language: {exc}", code="invalid_language",
                         value=str(value)) from exc


def _source_names(sources: list[UploadFile], names: list[str]) -> list[str]:
    """The names of an upload's `source` files: the PDF's LaTeX or Markdown source first,
    then the files it inputs; they go with one PDF alone."""
    if not sources:
        return []
    if len(names) != 1 or Path(names[0]).suffix.lower() != ".pdf":
        raise InputError("source: a source goes with one PDF; send that PDF alone in 'files'",
                         code="source_needs_one_pdf")
    found = [validate.file_name(u.filename or "") for u in sources]
    if not all(found):
        raise InputError("source: an uploaded file has no name", code="file_without_name")
    if Path(found[0]).suffix.lower() not in SOURCES:
        raise UnsupportedFileError(f"{found[0]}: a source is LaTeX or Markdown; supported: "
                                   f"{', '.join(sorted(SOURCES))}", code="source_type",
                                   file=found[0], supported=", ".join(sorted(SOURCES)))
    for name in found[1:]:
        if Path(name).suffix.lower() not in INPUT_SUFFIXES:
            raise UnsupportedFileError(f"{name}: a file a source inputs is LaTeX; supported: "
                                       f"{', '.join(sorted(INPUT_SUFFIXES))}",
                                       code="source_input_type", file=name,
                                       supported=", ".join(sorted(INPUT_SUFFIXES)))
    twice = sorted({n for n in found if found.count(n) > 1})
    if twice:
        raise InputError(f"source: two files named {', '.join(twice)}: rename one",
                         code="same_file_names", files=", ".join(twice))
    return found


async def _stage(uploads: list[UploadFile], names: list[str], folder: Path) -> list[Path]:
    """Write the uploaded files into the job's folder (a name may hold one subfolder); on
    any failure the folder goes."""
    try:
        paths = []
        for upload_file, name in zip(uploads, names, strict=True):
            path = folder / name
            path.parent.mkdir(mode=0o700, exist_ok=True)
            with path.open("wb") as out:
                while chunk := await upload_file.read(1 << 20):
                    out.write(chunk)
            paths.append(path)
        return paths
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


@router.post("/courses/{course}/documents", status_code=202,
             openapi_extra={"requestBody": {"content": {"multipart/form-data": {"schema": {
                 "type": "object", "required": ["files"], "properties": {
                     "files": {"type": "array", "items": {"type": "string",
                                                          "format": "binary"}},
                     "type": {"type": "string"}, "topic": {"type": "string"},
                     "difficulty": {"type": "integer"}, "title": {"type": "string"},
                     "language": {"type": "string"},
                     "media_url": {"type": "string"},
                     "source": {"type": "array", "items": {"type": "string",
                                                           "format": "binary"}}}}}}}})
async def upload(course: str, request: Request, caller: CallerDep,
                 state: State) -> dict[str, Any]:
    """Upload files (multipart field `files`) as an ingest job; poll GET /v1/jobs/{id}. A PDF
    may come with its LaTeX or Markdown source (field `source`: the source first, then the
    files it inputs)."""
    require_teacher(caller)
    state.workspace.store.get_course(caller.tenant, course)
    limit = state.settings.api_max_upload_bytes
    declared = int(request.headers.get("content-length") or 0)
    if declared > limit + 64 * 1024:
        raise PayloadTooLargeError(f"upload of {declared} bytes; the limit is {limit} bytes "
                                   "(api_max_upload_bytes)", code="upload_too_large",
                                   size=declared, limit=limit)
    async with request.form(max_files=200) as form:
        uploads = [f for f in form.getlist("files") if isinstance(f, UploadFile)]
        if not uploads:
            raise InputError("no files: send them in the multipart field 'files'",
                             code="no_files")
        names = [_file_name(u) for u in uploads]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InputError(f"two files named {', '.join(twice)} in one upload: rename one",
                             code="same_file_names", files=", ".join(twice))
        sources = [f for f in form.getlist("source") if isinstance(f, UploadFile)]
        staged = [f"{SOURCE_FOLDER}/{n}" for n in _source_names(sources, names)]
        metas = [_meta(form, n) for n in names]
        if staged:
            metas = [dataclasses.replace(metas[0], source=staged[0])]
        if sum(u.size or 0 for u in [*uploads, *sources]) > limit:
            raise PayloadTooLargeError(f"the files are larger than {limit} bytes "
                                       "(api_max_upload_bytes)", code="upload_too_large",
                                       limit=limit)
        job_id, folder = state.jobs.folder()
        paths = await _stage([*uploads, *sources], [*names, *staged], folder)
        items = list(zip(paths[:len(uploads)], metas, strict=True))
    if metas[0].language:  # an upload's language is its course's too, kept from now on
        state.workspace.store.set_course_language(caller.tenant, course, metas[0].language)
    job = state.jobs.submit(state.workspace_for(caller.tenant), job_id, course, items, folder)
    return encode.job(job)


@router.get("/courses/{course}/jobs")
def list_jobs(course: str, caller: CallerDep, state: State) -> dict[str, Any]:
    require_teacher(caller)
    state.workspace.store.get_course(caller.tenant, course)
    return {"jobs": [encode.job(j) for j in state.workspace.store.list_jobs(caller.tenant,
                                                                            course)]}


@router.get("/jobs/{job}")
def get_job(job: str, caller: CallerDep, state: State) -> dict[str, Any]:
    require_teacher(caller)
    return encode.job(state.workspace.store.get_job(caller.tenant, job))


@router.delete("/jobs/{job}")
def cancel_job(job: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """Cancel a queued or running ingest job (409 once it has finished); files already
    ingested stay, the rest are not ingested."""
    require_teacher(caller)
    return encode.job(state.jobs.cancel(state.workspace_for(caller.tenant), job))


@dataclasses.dataclass(frozen=True)
class Signature:
    """The signature fields of a file URL."""

    tenant: str | None
    exp: int | None
    sig: str | None
    staff: bool
    key: str | None


def _signed_by(state: AppState, ref: tuple[str, str], s: Signature) -> ApiKey | None:
    """The key a valid, unexpired signature was minted for, while that key is still valid
    (not revoked, same tenant unless an admin's, the role the URL was signed for)."""
    if not (s.tenant and s.exp is not None and s.sig and s.key and state.signer.check(
            s.tenant, *ref, s.exp, s.sig, s.staff, s.key)):
        return None
    key = state.workspace.store.find_key(s.key)
    if key is None or key.revoked is not None or key.expired(time.time()) or (
            s.staff != (key.role != "student")):
        return None
    return key if key.role == "admin" or key.tenant == s.tenant else None


def _file_tenant(state: AppState, request: Request, ref: tuple[str, str],
                 signature: Signature) -> str:
    """The tenant a file request acts in: a valid signature's, else the request key's. The
    key behind either must still see the document: a student only while enrolled in the
    course, and a solution only while the course allows them."""
    if signature.sig is not None:  # fetches by URL are paid for by the client address
        limit_address(request, state, "signed_url")
    key = _signed_by(state, ref, signature)
    if key is not None:
        scope = str(signature.tenant)
    else:
        caller = caller_of(request, state)
        key, scope = caller.key, caller.tenant
    if key.role != "student":
        return scope
    course = state.workspace.store.course_settings(scope, ref[0])
    if not may_see_course(state, key, scope, ref[0]):
        raise NotFoundError(f"document {ref[1]!r} does not exist",
                            code="document_not_found", document=ref[1])
    doc = state.workspace.store.find_document(scope, *ref)
    if doc is not None and doc.doc_type == "solution" and hides_solutions(key, course):
        raise NotFoundError(f"document {ref[1]!r} does not exist",
                            code="document_not_found", document=ref[1])
    return scope


@router.get("/documents/{ref}/file", response_class=FileResponse)
def document_file(ref: str, request: Request, state: State,
                  tenant: Annotated[str | None, Query()] = None,
                  exp: Annotated[int | None, Query()] = None,
                  sig: Annotated[str | None, Query(max_length=64, pattern="^[0-9a-f]*$")] = None,
                  staff: Annotated[bool, Query()] = False,
                  key: Annotated[str | None, Query(max_length=64)] = None) -> FileResponse:
    """The original file of `course:document`, for a key that may see it or a signed URL
    (which opens only while the key it was minted for may see the document)."""
    course, _, doc_id = ref.partition(":")
    if not doc_id:
        raise NotFoundError(f"document {ref!r} does not exist; ids look like course:document",
                            code="document_not_found", document=ref)
    scope = _file_tenant(state, request, (course, doc_id),
                         Signature(tenant, exp, sig, staff, key))
    doc = state.workspace.store.find_document(scope, course, doc_id)
    path = state.workspace.files.find(doc) if doc else None
    if doc is None or path is None:
        raise NotFoundError(f"document {ref!r} has no stored file", code="document_no_file",
                            document=ref)
    return FileResponse(path, media_type=content_type(doc), content_disposition_type="inline",
                        filename=doc.source_name,
                        headers={"Cache-Control": "private, max-age=3600"})

