"""`coursetutor lti`: the LMS platforms of a tenant, the tool's signing keys, LMS course
links and roster syncs."""

from __future__ import annotations

import dataclasses
import json

import click
import httpx

from ..lti import dynamic, enter, registry, roster, tool_keys
from ..lti.services import Services
from ..lti.tool import HTTP_TIMEOUT_SECONDS
from .group import workspace


@click.group("lti")
def lti_group() -> None:
    """LTI 1.3: register LMS platforms (Moodle, Canvas, ...) and manage the tool's keys."""


@lti_group.command("add-platform")
@click.option("--issuer", required=True, help="The platform's issuer (iss), e.g. its URL.")
@click.option("--client-id", required=True, help="The client id the platform gave the tool.")
@click.option("--deployment", "deployments", multiple=True, required=True,
              help="A deployment id (repeat for several).")
@click.option("--jwks-url", required=True, help="The platform's public key set URL.")
@click.option("--auth-url", required=True, help="The platform's OIDC authorization URL.")
@click.option("--token-url", required=True, help="The platform's OAuth 2 token URL.")
@click.option("--frame-origin", "frame_origins", multiple=True,
              help="An origin whose pages frame the tool (default: the issuer's and the "
                   "auth URL's).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def add_platform(ctx: click.Context, issuer: str, client_id: str, deployments: tuple[str, ...],
                 jwks_url: str, auth_url: str, token_url: str, frame_origins: tuple[str, ...],
                 as_json: bool) -> None:
    """Register a platform for the tenant (--tenant before the command)."""
    ws = workspace(ctx.find_root())
    ws.store.ensure_tenant(ws.tenant)
    platform = registry.register(ws.store.lti, ws.tenant, issuer, client_id, list(deployments),
                                 jwks_url, auth_url, token_url, list(frame_origins))
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(platform)))
    else:
        click.echo(f"Registered platform {platform.id} ({platform.issuer}, client id "
                   f"{platform.client_id}) for tenant {platform.tenant}.")


@lti_group.command("registration-url")
@click.option("--url", "tool_url", required=True,
              help="The tool's public URL, as the LMS reaches it (https://tutor.example.edu).")
@click.option("--hours", type=click.IntRange(1, dynamic.MAX_URL_SECONDS // 3600),
              default=dynamic.URL_SECONDS // 3600, show_default=True,
              help="How long the URL works.")
@click.pass_context
def registration_url(ctx: click.Context, tool_url: str, hours: int) -> None:
    """Print the LTI Dynamic Registration URL of the tenant (--tenant before the command)."""
    from ..api.signing import load_secret  # the server's secret; the API loads only here

    registry.check_url("the tool's URL", tool_url)
    ws = workspace(ctx.find_root())
    ws.store.ensure_tenant(ws.tenant)
    click.echo(dynamic.registration_url(tool_url, load_secret(ws.settings), ws.tenant,
                                        hours * 3600))


@lti_group.command("platforms")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def list_platforms(ctx: click.Context, as_json: bool) -> None:
    """List the tenant's platforms."""
    ws = workspace(ctx.find_root())
    found = ws.store.lti.list_platforms(ws.tenant)
    if as_json:
        click.echo(json.dumps([dataclasses.asdict(p) for p in found]))
        return
    for p in found:
        click.echo(f"{p.id}  {p.issuer}  client {p.client_id}  deployments "
                   f"{','.join(p.deployment_ids)}")


@lti_group.command("remove-platform")
@click.argument("platform_id")
@click.pass_context
def remove_platform(ctx: click.Context, platform_id: str) -> None:
    """Remove a platform: its launches are refused from now on."""
    ws = workspace(ctx.find_root())
    ws.store.lti.remove_platform(ws.tenant, platform_id)
    click.echo(f"Removed platform {platform_id}.")


@lti_group.command("link")
@click.option("--platform", "platform_id", required=True)
@click.option("--context", required=True, help="The LMS course's context id.")
@click.option("--course", required=True)
@click.option("--grades/--no-grades", default=None,
              help="Send mastery to the grade book columns of the LMS course's links, or stop "
                   "(default: leave as it is).")
@click.option("--topic", default=None,
              help="Grade the mastery of this topic alone ('' for every topic's).")
@click.pass_context
def link(ctx: click.Context, platform_id: str, context: str, course: str,
         grades: bool | None, topic: str | None) -> None:
    """Link an LMS course to a course (what deep linking does from the LMS)."""
    ws = workspace(ctx.find_root())
    platform = ws.store.lti.get_platform(ws.tenant, platform_id)
    found = enter.link_course(ws.store, platform, context, course, grades, topic)
    columns = enter.grade_columns(ws.store, platform, context, course)
    click.echo(f"LMS course {context} of platform {platform_id} opens {course}; mastery "
               f"{'goes' if found.grades else 'does not go'} to the grade book "
               f"({len(columns)} column(s) now).")


@lti_group.command("roster")
@click.option("--course", required=True)
@click.pass_context
def sync_roster(ctx: click.Context, course: str) -> None:
    """Enrol the Learners of the LMS courses linked to a course (NRPS)."""
    ws = workspace(ctx.find_root())
    with httpx.Client(timeout=HTTP_TIMEOUT_SECONDS) as http:
        report = roster.sync_course(ws.store, Services(ws.store.lti, http), ws.tenant, course)
    click.echo(f"Enrolled {report.enrolled}, removed {report.removed} student(s) of {course}.")


@lti_group.command("rotate-key")
@click.pass_context
def rotate_key(ctx: click.Context) -> None:
    """Make a new tool signing key; the old one stays published for a week."""
    ws = workspace(ctx.find_root())
    key = tool_keys.rotate(ws.store.lti)
    click.echo(f"The tool now signs with key {key.kid}.")


@lti_group.command("keys")
@click.pass_context
def list_tool_keys(ctx: click.Context) -> None:
    """List the tool's signing keys (ids and dates; never the private keys)."""
    ws = workspace(ctx.find_root())
    for key in ws.store.lti.tool_keys():
        state = "signing" if key.retired is None else f"retired {key.retired:.0f}"
        click.echo(f"{key.kid}  created {key.created:.0f}  {state}")
