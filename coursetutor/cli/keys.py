"""`coursetutor keys` and `enrol`: who may use the API, and which students a course has."""

from __future__ import annotations

import json

import click

from ..api.access import mint_key
from ..types import ROLES
from .group import workspace


@click.group()
def keys() -> None:
    """Create, list and revoke API keys (stored hashed; a key is shown once)."""


@keys.command("create")
@click.option("--role", type=click.Choice(ROLES), required=True)
@click.option("--student", default="", help="Student keys: the student id it asks as.")
@click.option("--name", default="", help="A label for the key.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def keys_create(ctx: click.Context, role: str, student: str, name: str, as_json: bool) -> None:
    """Create a key in the tenant (--tenant before the command; created if new)."""
    ws = workspace(ctx.find_root())
    ws.store.ensure_tenant(ws.tenant)
    key, secret = mint_key(ws.store, ws.tenant, role, student, name)
    if as_json:
        click.echo(json.dumps({"id": key.id, "key": secret, "tenant": key.tenant,
                               "role": key.role, "student": key.student, "name": key.name}))
    else:
        click.echo(f"{key.role} key {key.id} for tenant {key.tenant}: {secret}")
        click.echo("Keep it: it is not stored and cannot be shown again.", err=True)


@keys.command("list")
@click.option("--all-tenants", is_flag=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def keys_list(ctx: click.Context, all_tenants: bool, as_json: bool) -> None:
    """List keys (ids, roles, students; never secrets)."""
    ws = workspace(ctx.find_root())
    found = ws.store.list_keys(None if all_tenants else ws.tenant)
    rows = [{"id": k.id, "tenant": k.tenant, "role": k.role, "student": k.student,
             "name": k.name, "revoked": k.revoked is not None} for k in found]
    if as_json:
        click.echo(json.dumps(rows))
        return
    for r in rows:
        state = "revoked" if r["revoked"] else "active"
        click.echo(f"{r['id']}  {r['tenant']}  {r['role']:<8} {r['student'] or '-':<16} "
                   f"{state:<8} {r['name']}")


@keys.command("revoke")
@click.argument("key_id")
@click.pass_context
def keys_revoke(ctx: click.Context, key_id: str) -> None:
    """Revoke a key: it stops working at once."""
    ws = workspace(ctx.find_root())
    key = ws.store.revoke_key(key_id)
    click.echo(f"Revoked {key.role} key {key.id} of tenant {key.tenant}.")


@click.command()
@click.option("--course", required=True)
@click.option("--student", "students", multiple=True, required=True,
              help="Student id (repeat for several).")
@click.option("--remove", is_flag=True, help="Remove them from the course instead.")
@click.pass_context
def enrol(ctx: click.Context, course: str, students: tuple[str, ...], remove: bool) -> None:
    """Enrol students in a course (students ask only in courses they are enrolled in)."""
    ws = workspace(ctx)
    for student in students:
        if remove:
            ws.store.unenroll(ws.tenant, course, student)
        else:
            ws.store.enroll(ws.tenant, course, student)
    verb = "Removed" if remove else "Enrolled"
    click.echo(f"{verb} {len(students)} student(s) {'from' if remove else 'in'} {course}.")
