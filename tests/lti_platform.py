"""An LTI 1.3 platform for the tests: its own RSA key and key set, the OIDC auth endpoint,
an OAuth 2 token endpoint that checks the tool's signed assertion against the tool's key set,
a roster (NRPS) and a grade book (AGS) that records the scores it gets, and LTI Dynamic
Registration the way Moodle 4.x offers it (an OpenID configuration and a registration endpoint
that takes the bearer token of its registration URL).

`handle` answers an `httpx.Request`, so the tool reaches it through an `httpx.MockTransport`;
`serve` puts the same handler on 127.0.0.1 for a browser, with a course page that frames the
tool as an LMS does (and offers its storage to the tool's frame as Moodle 4.3+ and Canvas do:
LTI Client Side postMessages, unless `?storage=none`, or `=silent`: it says it has one but
never answers), and a page that opens a dynamic
registration URL in a frame and listens for the tool's close message.
"""

from __future__ import annotations

import dataclasses
import html
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

DATA = Path(__file__).parent / "data" / "lti"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
ROLES = "https://purl.imsglobal.org/spec/lti/claim/roles"
CUSTOM = "https://purl.imsglobal.org/spec/lti/claim/custom"
MESSAGE = "https://purl.imsglobal.org/spec/lti/claim/message_type"
DEPLOYMENT = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
DEEP = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"


def example(name: str) -> dict[str, Any]:
    """A documented example launch's claims (tests/data/lti/<name>_launch.json)."""
    claims: dict[str, Any] = json.loads((DATA / f"{name}_launch.json").read_text())
    claims.pop("_comment")
    return claims


@dataclasses.dataclass
class FakePlatform:
    """One LMS: its registration data, keys, roster, and what the tool sent it."""

    flavor: str  # "moodle" or "canvas": whose example launch it signs
    issuer: str
    client_id: str
    deployment: str
    jwks_url: str
    auth_url: str
    token_url: str
    tool_jwks: Callable[[], dict[str, Any]] = lambda: {"keys": []}
    key: rsa.RSAPrivateKey = dataclasses.field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048))
    kid: str = dataclasses.field(default_factory=lambda: secrets.token_hex(4))
    jwks_up: bool = True
    scores_up: bool = True  # False: the grade book answers 500
    members: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    scores: list[tuple[str, dict[str, Any]]] = dataclasses.field(default_factory=list)
    assertions: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    deep_link_answers: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    jwks_fetches: int = 0
    launch_url: str = "http://testserver/lti/launch"
    # LTI Dynamic Registration, as Moodle 4.x serves it
    registration_token: str = dataclasses.field(default_factory=lambda: secrets.token_hex(8))
    configuration_issuer: str = ""  # the issuer its OpenID configuration names ("": its own)
    configuration_up: bool = True
    registration_expired: bool = False  # its registration token timed out: it answers 401
    registrations: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    _tokens: dict[str, str] = dataclasses.field(default_factory=dict)

    @classmethod
    def moodle(cls, host: str = "https://moodle.example.edu") -> FakePlatform:
        return cls("moodle", host, "tool-client-1", "1", f"{host}/mod/lti/certs.php",
                   f"{host}/mod/lti/auth.php", f"{host}/mod/lti/token.php")

    @classmethod
    def canvas(cls) -> FakePlatform:
        sso = "https://sso.canvaslms.com"
        return cls("canvas", "https://canvas.instructure.com", "10000000000042",
                   "6:8865aa05b4b79b64a91a86042e43af5ea8ae79eb",
                   f"{sso}/api/lti/security/jwks", f"{sso}/api/lti/authorize_redirect",
                   f"{sso}/login/oauth2/token")

    @property
    def registration(self) -> dict[str, Any]:
        """The body of `POST /v1/lti/platforms` for this platform."""
        return {"issuer": self.issuer, "client_id": self.client_id,
                "deployment_ids": [self.deployment], "jwks_url": self.jwks_url,
                "auth_login_url": self.auth_url, "token_url": self.token_url}

    # -- launches ---------------------------------------------------------------------------
    def claims(self, nonce: str, role: str = LEARNER, sub: str | None = None,
               **changes: Any) -> dict[str, Any]:
        """The example launch of this platform for a user of `role`, with `changes`."""
        claims = example(self.flavor)
        if self.flavor == "moodle":  # its services on this platform's host
            claims = json.loads(json.dumps(claims).replace("https://moodle.example.edu",
                                                           self.issuer))
        now = int(time.time())
        claims.update({"iss": self.issuer, "aud": self.client_id, "iat": now,
                       "exp": now + 300, "nonce": nonce, ROLES: [role],
                       DEPLOYMENT: self.deployment})
        if self.flavor == "canvas":
            claims["azp"] = self.client_id
        if sub is not None:
            claims["sub"] = sub
        claims.update(changes)
        return claims

    def sign(self, claims: dict[str, Any], key: rsa.RSAPrivateKey | None = None) -> str:
        return jwt.encode(claims, key or self.key, algorithm="RS256",
                          headers={"kid": self.kid})

    def login_params(self, hint: str = "user-hint") -> dict[str, str]:
        """The third-party login initiation the platform sends the tool."""
        return {"iss": self.issuer, "login_hint": hint, "target_link_uri": self.launch_url,
                "client_id": self.client_id, "lti_message_hint": "msg-hint",
                "lti_deployment_id": self.deployment}

    @property
    def configuration_url(self) -> str:
        return f"{self.issuer}/mod/lti/openid-configuration.php"

    def configuration(self) -> dict[str, Any]:
        """Its OpenID configuration (Moodle 4.x's `mod/lti/openid-configuration.php`)."""
        host = self.issuer
        return {
            "issuer": self.configuration_issuer or host, "token_endpoint": self.token_url,
            "token_endpoint_auth_methods_supported": ["private_key_jwt"],
            "token_endpoint_auth_signing_alg_values_supported": ["RS256"],
            "jwks_uri": self.jwks_url, "authorization_endpoint": self.auth_url,
            "registration_endpoint": f"{host}/mod/lti/openid-registration.php",
            "scopes_supported": [
                "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
                "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
                "https://purl.imsglobal.org/spec/lti-ags/scope/score",
                "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
                "openid"],
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public", "pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": ["sub", "iss", "name", "given_name", "family_name", "email"],
            "https://purl.imsglobal.org/spec/lti-platform-configuration": {
                "product_family_code": "moodle", "version": "4.1",
                "messages_supported": [{"type": "LtiResourceLinkRequest"},
                                       {"type": "LtiDeepLinkingRequest"}],
                "variables": ["Context.id", "ResourceLink.id", "User.id"]}}

    def _register(self, request: httpx.Request) -> httpx.Response:
        """Moodle's `openid-registration.php`: the bearer token it put in the registration
        URL, the registration's required fields, every URL on the tool's domain."""
        if (self.registration_expired
                or request.headers.get("authorization") != f"Bearer {self.registration_token}"):
            return httpx.Response(401, text="Unauthorized")
        body = json.loads(request.content)
        tool = body.get("https://purl.imsglobal.org/spec/lti-tool-configuration", {})
        domain = tool.get("domain", "")
        urls = [body.get("initiate_login_uri", ""), body.get("jwks_uri", ""),
                tool.get("target_link_uri", ""), *body.get("redirect_uris", [])]
        if (body.get("application_type") != "web"
                or "id_token" not in body.get("response_types", [])
                or not {"implicit", "client_credentials"} <= set(body.get("grant_types", []))
                or body.get("token_endpoint_auth_method") != "private_key_jwt"
                or not domain or not all(urlsplit(u).netloc == domain for u in urls)):
            return httpx.Response(400, text="Bad request")
        self.registrations.append(body)
        answer = {**body, "client_id": self.client_id,
                  "https://purl.imsglobal.org/spec/lti-tool-configuration": {
                      **tool, "deployment_id": self.deployment}}
        return httpx.Response(200, json=answer)

    def public_jwks(self) -> dict[str, Any]:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**jwk, "kid": self.kid, "alg": "RS256", "use": "sig"}]}

    # -- its HTTP endpoints -----------------------------------------------------------------
    def handle(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        path = request.url.path
        if url.startswith(self.jwks_url):
            self.jwks_fetches += 1
            if not self.jwks_up:
                raise httpx.ConnectError("platform down", request=request)
            return httpx.Response(200, json=self.public_jwks())
        if url.startswith(self.token_url):
            return self._token(request)
        if path.endswith("/contentitem_return.php"):  # deep linking's answer comes back
            form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
            self.deep_link_answers.append(jwt.decode(form["JWT"],
                                                     options={"verify_signature": False}))
            items = self.deep_link_answers[-1].get(
                "https://purl.imsglobal.org/spec/lti-dl/claim/content_items", [])
            titles = ", ".join(str(i.get("title")) for i in items)
            return httpx.Response(200, headers={"content-type": "text/html"},
                                  text=f"<!doctype html><p id='added'>Link added: {titles}</p>")
        if path.endswith("/memberships") or path.endswith("/names_and_roles"):
            return self._roster(request)
        if path.endswith("/scores"):
            if not self.scores_up:
                return httpx.Response(500, json={"error": "grade book down"})
            if not self._authorized(request, "score"):
                return httpx.Response(401, json={"error": "no token"})
            self.scores.append((url, json.loads(request.content)))
            return httpx.Response(200, json={})
        if path.endswith("/openid-configuration.php"):
            if not self.configuration_up:
                raise httpx.ConnectError("platform down", request=request)
            return httpx.Response(200, json=self.configuration())
        if path.endswith("/openid-registration.php"):
            return self._register(request)
        return httpx.Response(404, json={"error": f"no route {path}"})

    def _token(self, request: httpx.Request) -> httpx.Response:
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
        assertion = form.get("client_assertion", "")
        try:
            header = jwt.get_unverified_header(assertion)
            keys = {k["kid"]: k for k in self.tool_jwks()["keys"]}
            key = jwt.PyJWK(keys[header["kid"]], algorithm="RS256")
            claims = jwt.decode(assertion, key, algorithms=["RS256"], audience=self.token_url,
                                issuer=self.client_id)
        except (jwt.PyJWTError, KeyError) as exc:
            return httpx.Response(401, json={"error": "invalid_client", "detail": str(exc)})
        if form.get("grant_type") != "client_credentials":
            return httpx.Response(400, json={"error": "unsupported_grant_type"})
        self.assertions.append(claims)
        token = secrets.token_hex(8)
        self._tokens[token] = form.get("scope", "")
        return httpx.Response(200, json={"access_token": token, "token_type": "Bearer",
                                         "expires_in": 3600, "scope": form.get("scope", "")})

    def _authorized(self, request: httpx.Request, scope_part: str) -> bool:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        return scope_part in self._tokens.get(token, "")

    def _roster(self, request: httpx.Request) -> httpx.Response:
        if not self._authorized(request, "contextmembership"):
            return httpx.Response(401, json={"error": "no token"})
        page = int(request.url.params.get("page", "1"))
        rows = self.members[(page - 1) * 2: page * 2]  # two a page: the tool follows `next`
        headers = {}
        if page * 2 < len(self.members):
            following = request.url.copy_set_param("page", str(page + 1))
            headers["Link"] = f'<{following}>; rel="next"'
        return httpx.Response(200, headers=headers, json={
            "id": str(request.url), "context": {"id": "2", "title": "Numerical methods"},
            "members": rows})


# -- on 127.0.0.1 for a browser -------------------------------------------------------------

COURSE_PAGE = """<!doctype html><html><head><title>LMS course</title></head>
<body style="margin:0;font-family:sans-serif">
<header style="padding:8px;background:#f98012;color:#fff">Example LMS: Numerical methods</header>
<iframe id="tool" name="tool" src="{login}" style="width:100%;height:820px;border:0"
 allow="clipboard-write"></iframe>{more}</body></html>"""
# The platform's side of LTI Client Side postMessages: it answers lti.capabilities,
# lti.put_data and lti.get_data from the tool's frame only, keeps each value under the
# sender's origin and key (in this page: a reload of the frame keeps it; with `?storage=forgets`
# it answers but keeps nothing), and notes every request in `lmsMessages` for the tests.
PLATFORM_STORAGE = """<script>
const lmsStore = new Map();
const lmsForgets = new URLSearchParams(location.search).get("storage") === "forgets";
window.lmsMessages = [];
addEventListener("message", (event) => {
  const data = event.data;
  const tool = document.getElementById("tool").contentWindow;
  if (event.source !== tool || !data || typeof data.subject !== "string") return;
  lmsMessages.push({subject: data.subject, key: data.key || "", id: data.message_id,
                    origin: event.origin});
  const answer = (fields) => event.source.postMessage(
    {subject: data.subject + ".response", message_id: data.message_id, ...fields}, event.origin);
  const name = event.origin + " " + data.key;
  if (data.subject === "lti.capabilities") {
    answer({supported_messages: [{subject: "lti.capabilities"},
      {subject: "lti.put_data", frame: "_parent"}, {subject: "lti.get_data", frame: "_parent"}]});
  } else if (data.subject === "lti.put_data") {
    if (!lmsForgets) lmsStore.set(name, data.value);
    answer({key: data.key, value: data.value});
  } else if (data.subject === "lti.get_data") {
    answer({key: data.key, value: lmsStore.has(name) ? lmsStore.get(name) : null});
  }
});
</script>"""
# a frame of another site (the platform's port on 127.0.0.1) in the course page, from which a
# test sends the tool messages the tool must ignore
OTHER_SITE_FRAME = """<iframe name="other" src="{url}" style="width:1px;height:1px;border:0">
</iframe>"""
REGISTER_PAGE = """<!doctype html><html><head><title>LMS: add a tool</title></head>
<body style="margin:0;font-family:sans-serif">
<header style="padding:8px;background:#f98012;color:#fff">Example LMS: Manage tools</header>
<p id="closed" style="padding:0 8px"></p>
<iframe id="tool" name="tool" src="{url}" style="width:100%;height:520px;border:0"></iframe>
<script>addEventListener("message", (event) => {{
  if (event.data && event.data.subject === "org.imsglobal.lti.close")
    document.getElementById("closed").textContent = "The tool is registered: window closed";
}});</script></body></html>"""
AUTO_POST = """<!doctype html><html><body><form id="f" method="post" action="{action}">
<input type="hidden" name="id_token" value="{token}"><input type="hidden" name="state"
 value="{state}"></form><script>document.getElementById("f").submit()</script></body></html>"""


@contextmanager
def serve(platform: FakePlatform, port: int, tool_url: str,
          id_token: Callable[[str], str]) -> Iterator[str]:
    """The platform's endpoints on localhost:`port` (a site other than the tool's
    127.0.0.1), plus `/course` (a page framing the tool's login) and its OIDC auth endpoint,
    which form-posts `id_token(nonce)` to the tool."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/course":
                params = platform.login_params("ana")
                more = OTHER_SITE_FRAME.format(url=f"http://127.0.0.1:{port}/blank")
                storage = parse_qs(parts.query).get("storage", [""])[0]
                if storage != "none":  # "silent": it names a storage that never answers
                    params["lti_storage_target"] = "_parent"
                if storage not in ("none", "silent"):
                    more += PLATFORM_STORAGE
                login = f"{tool_url}/lti/login?{urlencode(params)}"
                page = COURSE_PAGE.format(login=html.escape(login), more=more)
                self._send(200, page.encode(), "text/html")
                return
            if parts.path == "/blank":
                self._send(200, b"<!doctype html><title>other site</title>", "text/html")
                return
            if parts.path == "/register-tool":  # the LMS opens a registration URL
                target = parse_qs(parts.query)["url"][0]
                full = f"{target}&" + urlencode({
                    "openid_configuration": platform.configuration_url,
                    "registration_token": platform.registration_token})
                self._send(200, REGISTER_PAGE.format(url=html.escape(full)).encode(),
                           "text/html")
                return
            if parts.path == urlsplit(platform.auth_url).path:
                params = {k: v[0] for k, v in parse_qs(parts.query).items()}
                token = id_token(params["nonce"])
                page = AUTO_POST.format(action=params["redirect_uri"], token=token,
                                        state=params["state"])
                self._send(200, page.encode(), "text/html")
                return
            self._forward("GET", b"")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            self._forward("POST", self.rfile.read(length))

        def _forward(self, method: str, body: bytes) -> None:
            request = httpx.Request(method, f"{platform.issuer}{self.path}",
                                    headers=dict(self.headers), content=body)
            reply = platform.handle(request)
            self._send(reply.status_code, reply.content,
                       reply.headers.get("content-type", "application/json"))

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, name="lti-platform", daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
