"""Courses, enrolments, documents, uploads and their ingest jobs, and the original files."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field
from starlette.datastructures import UploadFile

from ..access import check_id
from ..errors import (
    ConflictError,
    InputError,
    NotFoundError,
    PayloadTooLargeError,
    UnsupportedFileError,
)
from ..ingest.loaders import LOADERS
from ..store.files import content_type
from ..types import FileMeta, check_difficulty, check_doc_type, check_media_url
from . import encode
from .deps import CallerDep, State, caller_of, require_teacher, visible_course
from .state import AppState

router = APIRouter(prefix="/v1", tags=["courses"])
SUFFIXES = frozenset([*LOADERS, ".pdf"])
_UNSAFE = re.compile(r"[^\w.\- ]+")


class CourseIn(BaseModel):
    id: str = Field(min_length=1, max_length=128)
    title: str = Field("", max_length=300)
    language: str = Field("en", min_length=2, max_length=8)
    allow_solutions: bool = False


class CoursePatch(BaseModel):
    title: str | None = Field(None, max_length=300)
    allow_solutions: bool | None = None


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
        raise InputError("a course id cannot contain ':'")
    try:
        store.get_course(caller.tenant, body.id)
    except NotFoundError:
        pass
    else:
        raise ConflictError(f"course {body.id!r} already exists")
    store.ensure_course(caller.tenant, body.id, body.title, body.language)
    return encode.course(store.set_course_policy(caller.tenant, body.id, body.allow_solutions))


@router.get("/courses/{course}")
def get_course(course: str, caller: CallerDep, state: State) -> dict[str, Any]:
    return encode.course(visible_course(state, caller, course))


@router.patch("/courses/{course}")
def patch_course(course: str, body: CoursePatch, caller: CallerDep,
                 state: State) -> dict[str, Any]:
    require_teacher(caller)
    found = state.workspace.store.get_course(caller.tenant, course)
    if body.title is not None:
        state.workspace.store.ensure_course(caller.tenant, course, body.title, found.language)
    if body.allow_solutions is not None:
        state.workspace.store.set_course_policy(caller.tenant, course, body.allow_solutions)
    return encode.course(state.workspace.store.get_course(caller.tenant, course))


@router.delete("/courses/{course}", status_code=204)
def delete_course(course: str, caller: CallerDep, state: State) -> None:
    require_teacher(caller)
    state.workspace_for(caller.tenant).remove_course(course)


@router.get("/courses/{course}/students")
def list_students(course: str, caller: CallerDep, state: State) -> dict[str, Any]:
    require_teacher(caller)
    return {"students": state.workspace.store.list_students(caller.tenant, course)}


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
    if caller.role == "student" and not info.allow_solutions:
        docs = [d for d in docs if d.doc_type != "solution"]
    return {"documents": [encode.document(d) for d in docs]}


@router.delete("/courses/{course}/documents/{document}", status_code=204)
def delete_document(course: str, document: str, caller: CallerDep, state: State) -> None:
    require_teacher(caller)
    state.workspace_for(caller.tenant).remove_document(course, document)


def _file_name(upload: UploadFile) -> str:
    name = _UNSAFE.sub("_", Path(upload.filename or "").name).strip(" .")
    if not name:
        raise InputError("an uploaded file has no name")
    if Path(name).suffix.lower() not in SUFFIXES:
        raise UnsupportedFileError(
            f"{name}: unsupported file type; supported: {', '.join(sorted(SUFFIXES))}")
    return name


def _meta(form: Any, name: str) -> FileMeta:
    difficulty = str(form.get("difficulty") or "2")
    if not difficulty.isdigit():
        raise InputError(f"difficulty must be a whole number 1-5, got {difficulty!r}")
    return FileMeta(doc_type=check_doc_type(str(form.get("type") or "lecture")),
                    topic=str(form.get("topic") or ""),
                    difficulty=check_difficulty(int(difficulty)),
                    title=str(form.get("title") or "") or None,
                    language=str(form.get("language") or "") or None, source_name=name,
                    media_url=check_media_url(str(form.get("media_url") or "")))


@router.post("/courses/{course}/documents", status_code=202,
             openapi_extra={"requestBody": {"content": {"multipart/form-data": {"schema": {
                 "type": "object", "required": ["files"], "properties": {
                     "files": {"type": "array", "items": {"type": "string",
                                                          "format": "binary"}},
                     "type": {"type": "string"}, "topic": {"type": "string"},
                     "difficulty": {"type": "integer"}, "title": {"type": "string"},
                     "language": {"type": "string"},
                     "media_url": {"type": "string"}}}}}}})
async def upload(course: str, request: Request, caller: CallerDep,
                 state: State) -> dict[str, Any]:
    """Upload files (multipart field `files`) as an ingest job; poll GET /v1/jobs/{id}."""
    require_teacher(caller)
    state.workspace.store.get_course(caller.tenant, course)
    limit = state.settings.api_max_upload_bytes
    declared = int(request.headers.get("content-length") or 0)
    if declared > limit + 64 * 1024:
        raise PayloadTooLargeError(f"upload of {declared} bytes; the limit is {limit} bytes "
                                   "(api_max_upload_bytes)")
    async with request.form(max_files=200) as form:
        uploads = [f for f in form.getlist("files") if isinstance(f, UploadFile)]
        if not uploads:
            raise InputError("no files: send them in the multipart field 'files'")
        names = [_file_name(u) for u in uploads]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InputError(f"two files named {', '.join(twice)} in one upload: rename one")
        metas = [_meta(form, n) for n in names]
        if sum(u.size or 0 for u in uploads) > limit:
            raise PayloadTooLargeError(f"the files are larger than {limit} bytes "
                                       "(api_max_upload_bytes)")
        job_id, folder = state.jobs.folder()
        items = []
        for upload_file, name, meta in zip(uploads, names, metas, strict=True):
            path = folder / name
            with path.open("wb") as out:
                while chunk := await upload_file.read(1 << 20):
                    out.write(chunk)
            items.append((path, meta))
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


def _file_tenant(state: AppState, request: Request, ref: tuple[str, str], tenant: str | None,
                 exp: int | None, sig: str | None, staff: bool) -> str:
    """The tenant a file request acts in: a valid signature's, else the key's. Students
    (by key, or by a URL signed for a student) see solutions only while the course allows."""
    signed = bool(tenant and exp is not None and sig
                  and state.signer.check(str(tenant), *ref, int(exp or 0), str(sig), staff))
    if signed and staff:
        return str(tenant)
    if signed:
        scope, student = str(tenant), ""
    else:
        caller = caller_of(request, state)
        scope, student = caller.tenant, caller.student if caller.role == "student" else ""
        if caller.role != "student":
            return scope
    course = state.workspace.store.course_settings(scope, ref[0])
    if student and not state.workspace.store.is_enrolled(scope, ref[0], student):
        raise NotFoundError(f"document {ref[1]!r} does not exist")
    doc = state.workspace.store.find_document(scope, *ref)
    if doc is not None and doc.doc_type == "solution" and not course.allow_solutions:
        raise NotFoundError(f"document {ref[1]!r} does not exist")
    return scope


@router.get("/documents/{ref}/file", response_class=FileResponse)
def document_file(ref: str, request: Request, state: State,
                  tenant: Annotated[str | None, Query()] = None,
                  exp: Annotated[int | None, Query()] = None,
                  sig: Annotated[str | None, Query()] = None,
                  staff: Annotated[bool, Query()] = False) -> FileResponse:
    """The original file of `course:document`, for a key that may see it or a signed URL."""
    course, _, doc_id = ref.partition(":")
    if not doc_id:
        raise NotFoundError(f"document {ref!r} does not exist; ids look like course:document")
    scope = _file_tenant(state, request, (course, doc_id), tenant, exp, sig, staff)
    doc = state.workspace.store.find_document(scope, course, doc_id)
    path = state.workspace.files.find(doc) if doc else None
    if doc is None or path is None:
        raise NotFoundError(f"document {ref!r} has no stored file")
    return FileResponse(path, media_type=content_type(doc), content_disposition_type="inline",
                        filename=doc.source_name,
                        headers={"Cache-Control": "private, max-age=3600"})

