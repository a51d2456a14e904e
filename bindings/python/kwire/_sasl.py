"""SASL for sessions, sans I/O: PLAIN, SCRAM-SHA-256/512 (RFC 5802/7677 with hashlib and
hmac) and OAUTHBEARER (RFC 7628's client response). ``exchange`` is a generator that
yields the requests to send (api key, body) and is sent each response body; the sync and
async sessions drive it over their own connection. The password never appears in an
error."""

import base64
import hashlib
import hmac
import os
import random
from typing import Any, Awaitable, Callable, Dict, Generator, Mapping, Optional, Tuple, Union

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
"""The mechanisms kwire speaks."""

_CODE_NAMES = {33: "UNSUPPORTED_SASL_MECHANISM", 34: "ILLEGAL_SASL_STATE", 58: "SASL_AUTHENTICATION_FAILED"}
_SCRAM_MIN_ITERATIONS = 4096

TokenCallback = Callable[[], Union[str, Awaitable[str]]]
Sasl = Mapping[str, Any]
"""A sasl option: {"mechanism": "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512", "username",
"password"} or {"mechanism": "OAUTHBEARER", "token": callable returning the token (a coroutine
function for AsyncSession, or a plain one), "extensions": optional dict}."""

Exchange = Generator[Tuple[int, Dict[str, Any]], Dict[str, Any], int]


class AuthenticationError(Exception):
    """The broker refused the mechanism or the credentials, or the exchange broke the
    mechanism's rules. ``mechanism``, ``error_code`` (Kafka's code; 0 when kwire found
    the fault), ``broker_message`` (the broker's message, or None)."""

    def __init__(self, mechanism: str, error_code: int, message: str, broker_message: Optional[str] = None) -> None:
        text = f"kwire: SASL {mechanism} authentication failed"
        if error_code:
            text += f" (error {error_code}{' ' + _CODE_NAMES[error_code] if error_code in _CODE_NAMES else ''})"
        if message:
            text += f": {message}"
        super().__init__(text)
        self.mechanism = mechanism
        self.error_code = error_code
        self.broker_message = broker_message


def check(sasl: Sasl) -> Dict[str, Any]:
    """The sasl option checked, its mechanism upper-cased (TypeError or
    AuthenticationError when it cannot work)."""
    if not isinstance(sasl, Mapping):
        raise TypeError('kwire: sasl must be {"mechanism", "username", "password"} or {"mechanism": "OAUTHBEARER", "token"}')
    mech = str(sasl.get("mechanism", "")).upper()
    if mech not in MECHANISMS:
        raise AuthenticationError(str(sasl.get("mechanism")), 0, "kwire supports " + ", ".join(MECHANISMS))
    if mech == "OAUTHBEARER":
        if not callable(sasl.get("token")):
            raise TypeError("kwire: sasl OAUTHBEARER needs token: a callable returning the token")
    elif not isinstance(sasl.get("username"), str) or not isinstance(sasl.get("password"), str):
        raise TypeError(f"kwire: sasl {mech} needs username and password strings")
    out = dict(sasl)
    out["mechanism"] = mech
    return out


def reauth_delay(lifetime_ms: int) -> float:
    """Seconds until re-authentication of a session of lifetime_ms: 85-95% of it, as
    Kafka's Java client does, but at least a second before it ends (and not before its
    middle). The requests on the wire are answered before the exchange starts, and a
    broker closes a connection whose session has expired on its next request, the
    re-authentication's own included: 5-15% of a lifetime of a few seconds is too little
    margin on a busy host or a slow network."""
    life = lifetime_ms / 1000.0
    return min(life * (0.85 + 0.10 * random.random()), max(life - 1.0, life / 2))


def _auth_bytes(body: Dict[str, Any]) -> bytes:
    b = body.get("authBytes") or ""
    return base64.b64decode(b) if isinstance(b, str) else bytes(b)


def exchange(cfg: Dict[str, Any], token: Optional[str] = None) -> Exchange:
    """The handshake and the mechanism's SaslAuthenticate steps. Yields (api key, body)
    and is sent each response body; returns the session lifetime in ms (0: none). token:
    the OAUTHBEARER token, already fetched."""
    mech = cfg["mechanism"]
    hs = yield 17, {"mechanism": mech}
    if hs.get("errorCode", 0) != 0:
        mechs = hs.get("mechanisms") or []
        msg = "the broker enables " + ", ".join(mechs) if mechs else "the broker enables no SASL mechanism on this listener"
        raise AuthenticationError(mech, hs["errorCode"], msg)

    def step(data: bytes) -> Generator[Tuple[int, Dict[str, Any]], Dict[str, Any], Tuple[bytes, int]]:
        r = yield 36, {"authBytes": base64.b64encode(data).decode("ascii")}
        if r.get("errorCode", 0) != 0:
            m = r.get("errorMessage")
            raise AuthenticationError(mech, r["errorCode"], m or "", m)
        return _auth_bytes(r), int(r.get("sessionLifetimeMs", 0) or 0)

    if mech == "PLAIN":
        _, life = yield from step(b"\0" + cfg["username"].encode() + b"\0" + cfg["password"].encode())
        return life
    if mech == "OAUTHBEARER":
        if not isinstance(token, str):
            raise AuthenticationError(mech, 0, "the token callback returned no string")
        if token.startswith("Bearer "):
            token = token[len("Bearer "):]
        if not token or "\x01" in token or " " in token:
            raise AuthenticationError(mech, 0, "the token callback returned an empty or malformed token")
        msg = "n,,\x01auth=Bearer " + token + "\x01"
        for k in sorted(cfg.get("extensions") or {}):
            msg += f"{k}={cfg['extensions'][k]}\x01"
        msg += "\x01"
        challenge, life = yield from step(msg.encode())
        if not challenge:
            return life
        # A refused token: the broker's JSON error challenge, acknowledged with 0x01.
        text = challenge.decode("utf-8", "replace")
        try:
            yield from step(b"\x01")
        except AuthenticationError as e:
            raise AuthenticationError(mech, e.error_code, f"{e.broker_message or ''} (broker challenge {text})".strip(), e.broker_message) from None
        raise AuthenticationError(mech, 0, "the broker refused the token: " + text)
    # SCRAM
    name = "sha256" if mech == "SCRAM-SHA-256" else "sha512"
    nonce = base64.b64encode(os.urandom(24)).decode().rstrip("=")
    user = cfg["username"].replace("=", "=3D").replace(",", "=2C")
    first_bare = f"n={user},r={nonce}"
    server_first, _ = yield from step(("n,," + first_bare).encode())
    try:
        client_final, server_sig = scram_final(name, first_bare, nonce, cfg["password"], server_first.decode())
    except ValueError as e:
        raise AuthenticationError(mech, 0, str(e)) from None
    server_final, life = yield from step(client_final.encode())
    try:
        attrs = _attrs(server_final.decode(), "server-final message")
    except ValueError as e:
        raise AuthenticationError(mech, 0, str(e)) from None
    if "e" in attrs:
        raise AuthenticationError(mech, 0, "server error " + attrs["e"])
    try:
        got = base64.b64decode(attrs.get("v", ""), validate=True)
    except ValueError:
        got = b""
    if not hmac.compare_digest(got, server_sig):
        raise AuthenticationError(mech, 0, "the server's signature does not verify: it does not know the password")
    return life


def _attrs(msg: str, what: str) -> Dict[str, str]:
    out = {}
    for part in msg.split(","):
        if len(part) < 2 or part[1] != "=":
            raise ValueError(f"{what}: malformed attribute {part!r}")
        if part[0] == "m":
            raise ValueError(f"{what}: mandatory extension not supported")
        out[part[0]] = part[2:]
    return out


def scram_final(name: str, first_bare: str, nonce: str, password: str, server_first: str) -> Tuple[str, bytes]:
    """SCRAM's client-final message and the server signature to expect (ValueError for a
    server-first message that cannot be answered)."""
    attrs = _attrs(server_first, "server-first message")
    if "e" in attrs:
        raise ValueError("server error " + attrs["e"])
    server_nonce = attrs.get("r", "")
    if not server_nonce.startswith(nonce) or len(server_nonce) == len(nonce):
        raise ValueError("the server nonce does not extend the client's")
    try:
        salt = base64.b64decode(attrs.get("s", ""), validate=True)
    except ValueError:
        salt = b""
    if not salt:
        raise ValueError("the server sent no valid salt")
    it = attrs.get("i", "")
    if not it.isdigit() or int(it) < _SCRAM_MIN_ITERATIONS:
        raise ValueError(f"iteration count {it!r} (at least 4096 needed)")
    salted = hashlib.pbkdf2_hmac(name, password.encode(), salt, int(it))
    client_key = hmac.new(salted, b"Client Key", name).digest()
    stored_key = hashlib.new(name, client_key).digest()
    final_no_proof = "c=biws,r=" + server_nonce
    auth_message = f"{first_bare},{server_first},{final_no_proof}".encode()
    signature = hmac.new(stored_key, auth_message, name).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature))
    server_sig = hmac.new(hmac.new(salted, b"Server Key", name).digest(), auth_message, name).digest()
    return final_no_proof + ",p=" + base64.b64encode(proof).decode(), server_sig
