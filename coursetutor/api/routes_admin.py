"""Who am I, tenants and keys."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from ..errors import NotFoundError, PermissionDeniedError
from ..types import Role
from . import encode
from .access import check_id, mint_key
from .deps import CallerDep, State, require_admin, require_teacher
from .validate import Id, Name

router = APIRouter(prefix="/v1", tags=["access"])


class TenantIn(BaseModel):
    id: Id = Field(min_length=1)
    name: Name = ""


class KeyIn(BaseModel):
    role: Role
    tenant: Id | None = Field(None, description="admins only; default: the caller's tenant")
    student: Id = Field("", description="the student a student key asks as")
    name: Name = Field("", max_length=200)


@router.get("/me")
def me(caller: CallerDep, state: State) -> dict[str, Any]:
    """The calling key: id, role, tenant, student and (students) enrolled courses."""
    courses = (state.workspace.store.student_courses(caller.tenant, caller.student)
               if caller.role == "student" else None)
    return {"key": caller.key.id, "role": caller.role, "tenant": caller.tenant,
            "student": caller.student, "name": caller.key.name, "courses": courses}


@router.get("/tenants")
def list_tenants(caller: CallerDep, state: State) -> dict[str, Any]:
    require_admin(caller)
    return {"tenants": [encode.tenant(t) for t in state.workspace.store.list_tenants()]}


@router.post("/tenants", status_code=201)
def create_tenant(body: TenantIn, caller: CallerDep, state: State) -> dict[str, Any]:
    require_admin(caller)
    tenant = state.workspace.store.create_tenant(check_id("tenant", body.id), body.name)
    return encode.tenant(tenant)


@router.delete("/tenants/{tenant}", status_code=204)
def delete_tenant(tenant: str, caller: CallerDep, state: State) -> None:
    require_admin(caller)
    if tenant == caller.key.tenant:
        raise PermissionDeniedError("an admin key cannot delete its own tenant")
    ws = state.workspace_for(tenant)
    for course in state.workspace.store.list_courses(tenant):
        ws.remove_course(course.id)
    state.workspace.store.remove_tenant(tenant)


@router.get("/keys")
def list_keys(caller: CallerDep, state: State) -> dict[str, Any]:
    """Keys of the caller's tenant (teachers see the student keys only)."""
    require_teacher(caller)
    keys = state.workspace.store.list_keys(caller.tenant)
    if caller.role == "teacher":
        keys = [k for k in keys if k.role == "student"]
    return {"keys": [encode.key(k) for k in keys]}


@router.post("/keys", status_code=201)
def create_key(body: KeyIn, caller: CallerDep, state: State) -> dict[str, Any]:
    """A new key; its secret is in this reply only."""
    require_teacher(caller)
    tenant = body.tenant or caller.tenant
    if caller.role == "teacher" and (body.role != "student" or tenant != caller.tenant):
        raise PermissionDeniedError("teachers create student keys of their own tenant only")
    state.workspace.store.get_tenant(tenant)
    key, secret = mint_key(state.workspace.store, tenant, body.role, body.student, body.name)
    return {**encode.key(key), "key": secret}


@router.delete("/keys/{key_id}")
def revoke_key(key_id: str, caller: CallerDep, state: State) -> dict[str, Any]:
    require_teacher(caller)
    key = state.workspace.store.find_key(key_id)
    visible = key is not None and (caller.role == "admin" or (
        key.tenant == caller.tenant and key.role == "student"))
    if key is None or not visible:
        raise NotFoundError(f"key {key_id!r} does not exist")
    return encode.key(state.workspace.store.revoke_key(key_id))
