"""API keys: minting, hashing and checking them, and what each role may do."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time

from ..errors import AuthenticationError, InputError
from ..store import Store
from ..types import ApiKey, Role, check_role

PREFIX = "ct_"
_KEY = re.compile(r"^ct_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$")


def hash_secret(secret: str) -> str:
    """SHA-256 of a key's secret: 256 random bits need no slow hash to resist guessing."""
    return hashlib.sha256(secret.encode()).hexdigest()


def check_id(kind: str, value: str) -> str:
    """Return `value` if it is a usable id for a tenant, course or student."""
    if not _ID.match(value):
        raise InputError(f"{kind} id {value!r} is not valid: use 1-128 letters, digits and "
                         "_ . @ -, starting with a letter or digit", code="invalid_id",
                         kind=kind, value=value)
    return value


def mint_key(store: Store, tenant: str, role: str, student: str = "",
             name: str = "", seconds: float | None = None) -> tuple[ApiKey, str]:
    """Create and store a key (expiring after `seconds`, if given); returns it with its full
    secret text, shown only this once."""
    checked: Role = check_role(role)
    if checked == "student":
        if not student:
            raise InputError("a student key needs the student id it asks as")
        check_id("student", student)
    elif student:
        raise InputError(f"only student keys name a student; this is a {checked} key")
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    now = time.time()
    key = ApiKey(key_id, check_id("tenant", tenant), checked, student, name, hash_secret(secret),
                 now, expires=None if seconds is None else now + seconds)
    store.add_key(key)
    return key, f"{PREFIX}{key_id}_{secret}"


def authenticate(store: Store, text: str | None) -> ApiKey:
    """The stored key `text` names, if its secret matches and it is not revoked."""
    if not text:
        raise AuthenticationError("no API key: send 'Authorization: Bearer ct_...'",
                                  code="no_key")
    match = _KEY.match(text.strip())
    if match is None:
        raise AuthenticationError("malformed API key", code="malformed_key")
    key = store.find_key(match.group(1))
    if key is None or not hmac.compare_digest(key.secret_hash, hash_secret(match.group(2))):
        raise AuthenticationError("unknown API key", code="unknown_key")
    if key.revoked is not None:
        raise AuthenticationError("this API key was revoked", code="key_revoked")
    if key.expired(time.time()):
        raise AuthenticationError("this API key has expired", code="key_expired")
    return key
