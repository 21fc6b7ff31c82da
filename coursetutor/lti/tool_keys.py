"""The tool's own RSA keys: the newest active one signs, retired ones stay published a while
(platforms cache the tool's key set too), then are dropped."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from ..store.lti import LtiStore, ToolKey

KEY_BITS = 2048
RETIRED_PUBLISHED_SECONDS = 7 * 24 * 3600.0  # a retired key's signatures still verify this long


def new_key(now: float | None = None) -> ToolKey:
    """A fresh RSA key pair as a tool key."""
    private = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
    pem = private.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    return ToolKey(secrets.token_hex(8), pem, time.time() if now is None else now)


def rotate(store: LtiStore, now: float | None = None) -> ToolKey:
    """Make a new signing key; the others are retired now and dropped once past the grace."""
    at = time.time() if now is None else now
    key = store.add_tool_key(new_key(at))
    store.retire_tool_keys(key.kid, at)
    store.remove_tool_keys(at - RETIRED_PUBLISHED_SECONDS)
    return key


def signing_key(store: LtiStore) -> ToolKey:
    """The key that signs now (made on first use)."""
    active = [k for k in store.tool_keys() if k.retired is None]
    return active[0] if active else rotate(store)


def public_jwk(key: ToolKey) -> dict[str, Any]:
    """A key's public half as a JWK."""
    private = serialization.load_pem_private_key(key.private_pem.encode(), password=None)
    assert isinstance(private, rsa.RSAPrivateKey)
    jwk: dict[str, Any] = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
    return {**jwk, "kid": key.kid, "alg": "RS256", "use": "sig"}


def key_set(store: LtiStore, now: float | None = None) -> dict[str, Any]:
    """The tool's JWKS: the signing key and those retired within the grace period."""
    at = time.time() if now is None else now
    signing_key(store)
    kept = [k for k in store.tool_keys()
            if k.retired is None or at - k.retired < RETIRED_PUBLISHED_SECONDS]
    return {"keys": [public_jwk(k) for k in kept]}


def sign(store: LtiStore, claims: dict[str, Any]) -> str:
    """`claims` as a JWT signed with the tool's current key (RS256, its kid in the header)."""
    key = signing_key(store)
    return jwt.encode(claims, key.private_pem, algorithm="RS256", headers={"kid": key.kid})
