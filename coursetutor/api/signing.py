"""Signed, expiring file URLs, so a citation opens in an iframe or a new tab without a key."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path
from urllib.parse import quote, urlencode

from ..config import Settings
from ..store.private import private_dir
from ..types import ApiKey, Locator


def load_secret(settings: Settings) -> bytes:
    """The configured secret, or one generated once and kept (mode 0600) in the data dir."""
    if settings.api_secret:
        return settings.api_secret.encode()
    path = Path(settings.data_dir) / "api-secret"
    if not path.is_file():
        private_dir(path.parent)
        tmp = path.with_name(f".api-secret-{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(32))
        try:  # the first process to link its secret wins; the others read that one
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    return path.read_text().strip().encode()


def fragment(locator: Locator) -> str:
    """Where in the file a citation points: PDF page, media time or heading anchor."""
    if locator.page is not None:
        return f"#page={locator.page}"
    if locator.start is not None:
        return f"#t={int(locator.start)}"
    if locator.anchor:
        return f"#{quote(locator.anchor)}"
    return ""


class Signer:
    """Makes and checks `?tenant=..&exp=..&key=..&sig=..` for document file URLs.

    A URL names the key it was minted for, and the signature covers it: the file route opens
    it only while that key exists, is not revoked and may still see the document, so a URL
    never outlives its key (or the student's enrolment, or the course's solution policy)."""

    def __init__(self, secret: bytes, seconds: int, staff: bool = False,
                 key_id: str = "") -> None:
        self._secret = secret
        self.seconds = seconds
        self.staff = staff  # URLs for teachers and admins open solutions whatever the policy
        self.key_id = key_id

    def bound(self, key: ApiKey) -> Signer:
        """The signer for URLs handed to the caller of `key`."""
        return Signer(self._secret, self.seconds, staff=key.role != "student", key_id=key.id)

    def _sig(self, tenant: str, course: str, document: str, exp: int, staff: bool,
             key_id: str) -> str:
        msg = f"{tenant}\n{course}\n{document}\n{exp}\n{int(staff)}\n{key_id}".encode()
        return hmac.new(self._secret, msg, hashlib.sha256).hexdigest()[:32]

    def url(self, tenant: str, course: str, document: str, locator: Locator | None = None,
            now: float | None = None) -> str:
        # expiry rounded to the hour, so the same citation gets the same URL (browser cache)
        base = int((now or time.time()) + self.seconds)
        exp = base - base % 3600 + 3600
        fields: dict[str, str | int] = {"tenant": tenant, "exp": exp}
        if self.staff:
            fields["staff"] = 1
        fields["key"] = self.key_id
        fields["sig"] = self._sig(tenant, course, document, exp, self.staff, self.key_id)
        query = urlencode(fields)
        path = f"/v1/documents/{quote(course, safe='')}:{quote(document, safe='')}/file"
        return f"{path}?{query}{fragment(locator) if locator else ''}"

    def check(self, tenant: str, course: str, document: str, exp: int, sig: str,
              staff: bool = False, key_id: str = "", now: float | None = None) -> bool:
        """Whether the signature is ours and unexpired (whether its key still may open the
        file is the file route's question)."""
        if exp < (now or time.time()) or not key_id:
            return False
        return hmac.compare_digest(self._sig(tenant, course, document, exp, staff, key_id),
                                   sig)
