"""Sessions: the client side of one Kafka connection over kwire's sans-IO session
(kw_session_* in capi/kwire.h, ABI 1.1).

The module hands out correlation ids, writes request frames with the right header
version, cuts what the connection delivers (in any chunking) into response frames,
matches each to its request and negotiates api versions with ApiVersions. This module
adds the transport:

- ``SessionCore``: the session itself, no I/O: frames out, bytes in, responses out;
- ``Session``: over a blocking socket (``Session.connect(host, port)``), with pipelining
  through ``send`` and ``receive``;
- ``AsyncSession``: over asyncio streams (``await AsyncSession.connect(host, port)``);
  concurrent ``await request(...)`` calls are pipelined on the one connection.

Bodies are dicts in kwire's JSON form (int64 as decimal strings or ints, bytes and
records as base64 or bytes-like values). A response the module cannot read raises
``ResponseError`` for that request only; a broken stream (a frame above max_frame_size, a
response nobody asked for, the peer closing, a failed write) closes the session: every
pending request and every later call raises ``ConnectionClosedError``.

SASL: ``connect(..., sasl={"mechanism": "SCRAM-SHA-512", "username": ..., "password": ...})``
or ``sasl={"mechanism": "OAUTHBEARER", "token": callback}`` authenticates after negotiation.
When the broker grants a session lifetime (KIP-368: connections.max.reauth.ms, a token's
expiry) the session re-authenticates at 85-95% of it, at least a second before its end:
new requests wait, the requests on the wire are answered, the exchange runs again (the token callback is called again), and
the waiting requests go out in their order. A failed re-authentication closes the session.
``request_timeout`` (or ``request(..., timeout=)``) bounds each request: it raises
``RequestTimeoutError`` and the late response is dropped when it comes.
``ReconnectingSession`` and ``ReconnectingAsyncSession`` open a new connection (negotiated
and authenticated again, with exponential backoff and jitter) when the old one dies; the
requests that were on it fail and are never sent again.
"""

import asyncio
import base64
import ctypes
import inspect
import random
import socket
import ssl as _ssl
import threading
import time
import weakref
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Set, Tuple, TypedDict, Union, cast

from . import _abi
from ._api import BytesLike, Kwire, default, dumps, loads
from ._errors import ERR_UNSUPPORTED, KwireError, error_for
from ._runtime import _OUT_SLOTS, _SESSION_EXPORTS, Instance, check_int32
from ._version import CLIENT_SOFTWARE_NAME, __version__
from ._sasl import AuthenticationError, Exchange, Sasl, check as _check_sasl, exchange as _sasl_exchange, reauth_delay as _reauth_delay

REAUTH_TIMEOUT = 30.0
"""Seconds a re-authentication may take (the requests on the wire answered, then the exchange)."""

NO_RESPONSE = _abi.KW_SESSION_NO_RESPONSE
"""kw_session_request flag: the broker does not answer (Produce with acks=0)."""

_READ_SIZE = 1 << 16


class Response(TypedDict, total=False):
    """One response as kw_session_next reports it: ``body`` is the decoded response in
    the JSON form (absent when ``error`` is set)."""

    correlationId: int
    apiKey: int
    apiVersion: int
    bodyVersion: int
    headerVersion: int
    negotiation: str
    retry: str
    body: Dict[str, Any]
    error: str


class Counters(TypedDict):
    """A session's counters (kw_session_counters, int64 counts as ints)."""

    bytesSent: int
    bytesReceived: int
    requestsSent: int
    responsesReceived: int
    pending: int
    negotiated: bool
    buffered: bool


class SessionError(Exception):
    """Base of the session errors."""


class ConnectionClosedError(SessionError):
    """The session is over: the peer closed the connection, a write failed, the stream
    carried something that cannot be a response (``__cause__`` holds the KwireError, e.g.
    a TooLargeError for a frame above max_frame_size), or close() was called."""


class RequestTimeoutError(SessionError, TimeoutError):
    """A request got no response within its timeout. The session goes on; the response,
    when it comes, is dropped (``stats()["dropped"]`` counts it)."""


class Stats(TypedDict):
    """What a session counted itself: late responses dropped, SaslAuthenticate requests
    sent (every step of every authentication), re-authentications completed, and the
    session lifetime the broker granted at the last authentication (0: none)."""

    dropped: int
    saslAuthenticates: int
    reauthentications: int
    sessionLifetimeMs: int


class ResponseError(SessionError):
    """The response to one request could not be used (its header or body does not
    decode, or a negotiation step failed). The session goes on. ``response`` is what the
    module reported (correlationId, apiKey, apiVersion, headerVersion, error)."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.get("error", "kwire: unusable response"))
        self.response = response
        self.correlation_id = response.get("correlationId", -1)
        self.api_key = response.get("apiKey", -1)
        self.api_version = response.get("apiVersion", -1)


def _free_handle(kw: Kwire, inst: Instance, store: object, handle: int) -> None:
    """The safety net of a session dropped without close(): its handle is released,
    unless the instance was replaced since (its handles went with the old one)."""
    try:
        with kw._lock:
            if inst._store is store:
                inst.call("kw_session_free", handle)
    except Exception:  # pragma: no cover - interpreter shutdown
        pass


def _frame_correlation_id(frame: bytes) -> int:
    return int.from_bytes(frame[8:12], "big", signed=True)


def _frame_version(frame: bytes) -> int:
    return int.from_bytes(frame[6:8], "big", signed=True)


class SessionCore:
    """One kw_session handle: the client side of a Kafka connection with no I/O. Write
    the frames it returns, ``feed`` it what the connection delivers and take responses
    with ``next``. Thread-safe (calls hold the instance's lock).

    Configuration: client_id (default "kwire"), max_frame_size (default 100 MiB),
    client_software_name (default "kwire-python") and client_software_version (default
    the package's ``__version__``), which go into every ApiVersions request (v3+) that
    leaves them empty, bootstrap_version (the ApiVersions version of the first
    negotiation request; default kwire's highest). Kafka accepts client software values
    of letters, digits, '-' and '.', beginning and ending with a letter or digit; another
    value raises ``EncodeError`` naming the field before anything is sent.
    """

    def __init__(
        self,
        kwire: Optional[Kwire] = None,
        *,
        client_id: Optional[str] = None,
        max_frame_size: Optional[int] = None,
        client_software_name: Optional[str] = None,
        client_software_version: Optional[str] = None,
        bootstrap_version: Optional[int] = None,
    ) -> None:
        kw = kwire if kwire is not None else default()
        inst = kw._inst
        missing = [n for n in _SESSION_EXPORTS if n not in inst.optional]
        if missing:
            major, minor = inst.abi_version >> 16, inst.abi_version & 0xFFFF
            text = f"kwire: this kwire.wasm (ABI {major}.{minor}) has no sessions (needs ABI 1.1; missing {', '.join(missing)})"
            raise error_for(ERR_UNSUPPORTED, text, {"category": "unsupported"})
        config: Dict[str, Any] = {}
        for key, value in (
            ("clientId", client_id),
            ("maxFrameSize", max_frame_size),
            ("clientSoftwareName", CLIENT_SOFTWARE_NAME if client_software_name in (None, "") else client_software_name),
            ("clientSoftwareVersion", __version__ if client_software_version in (None, "") else client_software_version),
            ("bootstrapVersion", bootstrap_version),
        ):
            if value is not None:
                config[key] = value
        self._kw = kw
        self._inst = inst
        with kw._lock:
            p, n = inst.put(dumps(config))
            s = inst._scratch
            st = inst.call("kw_session_new", p, n, s)
            if st != 0:
                raise inst.last_error()
            self._handle: int = _read_i32(inst, s)
            self._store = inst._store
        self._last: Optional[Counters] = None
        self._finalizer = weakref.finalize(self, _free_handle, kw, inst, self._store, self._handle)

    @property
    def handle(self) -> int:
        """The kw_session handle (0 once freed)."""
        return self._handle

    def _live(self, call: str) -> None:
        if self._handle == 0:
            raise ConnectionClosedError(f"kwire: {call} on a freed session")
        if self._inst._store is not self._store:
            raise ConnectionClosedError("kwire: the instance of this session trapped and was replaced; the session is gone")

    def begin_negotiation(self) -> bytes:
        """The first ApiVersions request frame, to write first."""
        with self._kw._lock:
            self._live("begin_negotiation")
            return self._inst.call_out("kw_session_begin_negotiation", self._handle)

    def request(self, api_key: int, body: Union[Mapping[str, Any], str, bytes], *, version: int = -1, no_response: bool = False) -> Tuple[int, bytes]:
        """The frame of a request and its correlation id. body: the request in the JSON
        form (a dict, or JSON text); version -1 is the negotiated version."""
        check_int32("api_key", api_key)
        check_int32("version", version)
        text = body.encode("utf-8") if isinstance(body, str) else body if isinstance(body, bytes) else dumps(body)
        with self._kw._lock:
            self._live("request")
            inst = self._inst
            p, n = inst.put(text)
            try:
                s = inst._scratch
                flags = NO_RESPONSE if no_response else 0
                st = inst.call("kw_session_request", self._handle, api_key, version, p, n, flags, s, s + 4, s + 8)
            finally:
                inst.release_input()
            if st != 0:
                raise inst.last_error()
            base = inst._base()
            ptr, size = _OUT_SLOTS.unpack(ctypes.string_at(base + s, 8))
            corr = _read_i32(inst, s + 8)
            frame = ctypes.string_at(base + ptr, size)
            inst.free(ptr)
            return corr, frame

    def feed(self, data: BytesLike) -> None:
        """Bytes read from the connection, in any chunking. Raises a KwireError when the
        stream cannot go on (the session is then failed for good)."""
        if not memoryview(data).nbytes:
            return
        with self._kw._lock:
            self._live("feed")
            inst = self._inst
            p, n = inst.put(data)
            try:
                st = inst.call("kw_session_feed", self._handle, p, n)
            finally:
                inst.release_input()
            if st != 0:
                raise inst.last_error()

    def next(self) -> Optional[Response]:
        """The next complete response, or None. Raises a KwireError when the stream cannot
        go on (a response nobody asked for, an unreadable header)."""
        with self._kw._lock:
            self._live("next")
            out = self._inst.call_out("kw_session_next", self._handle)
        if not out:
            return None
        r: Response = loads(out)
        return r

    def counters(self) -> Counters:
        """The session's counters (after free: the last ones read)."""
        with self._kw._lock:
            if self._handle == 0 and self._last is not None:
                return self._last
            self._live("counters")
            raw = loads(self._inst.call_out("kw_session_counters", self._handle))
        c: Counters = {
            "bytesSent": int(raw["bytesSent"]),
            "bytesReceived": int(raw["bytesReceived"]),
            "requestsSent": int(raw["requestsSent"]),
            "responsesReceived": int(raw["responsesReceived"]),
            "pending": int(raw["pending"]),
            "negotiated": bool(raw["negotiated"]),
            "buffered": bool(raw["buffered"]),
        }
        return c

    def version_for(self, api_key: int) -> int:
        """The version request(version=-1) uses for api_key; VersionError before
        negotiation or when kwire and the broker have no version in common."""
        check_int32("api_key", api_key)
        with self._kw._lock:
            self._live("version_for")
            inst = self._inst
            s = inst._scratch
            st = inst.call("kw_session_version_for", self._handle, api_key, s + 8)
            if st != 0:
                raise inst.last_error()
            return _read_i32(inst, s + 8)

    def free(self) -> None:
        """Releases the handle (the counters stay readable). Idempotent."""
        if self._handle == 0:
            return
        try:
            self._last = self.counters()
        except (KwireError, SessionError):
            self._last = None
        self._finalizer()
        self._handle = 0


def _read_i32(inst: Instance, at: int) -> int:
    return int.from_bytes(ctypes.string_at(inst._base() + at, 4), "little", signed=True)


class _Pipeline:
    """What the sync and async sessions share: the core, the negotiation state, and the
    turning of the core's responses into outcomes per correlation id."""

    def __init__(self, core: SessionCore) -> None:
        self.core = core
        self.closed: Optional[ConnectionClosedError] = None
        self.negotiation_corr: Optional[int] = None
        self.negotiation_versions: List[int] = []
        self.negotiated = False

    def check(self) -> None:
        if self.closed is not None:
            raise self.closed

    def fail(self, err: ConnectionClosedError) -> ConnectionClosedError:
        if self.closed is None:
            self.closed = err
            self.core.free()
        return self.closed

    def begin(self) -> bytes:
        frame = self.core.begin_negotiation()
        self.negotiation_corr = _frame_correlation_id(frame)
        self.negotiation_versions.append(_frame_version(frame))
        return frame

    def drain(self, data: BytesLike) -> Tuple[List[Tuple[int, Union[Response, ResponseError]]], List[bytes]]:
        """Feeds data and returns the completed (correlation id, response or error) and
        the frames to write (a negotiation retry). A broken stream raises
        ConnectionClosedError (and closes the session)."""
        done: List[Tuple[int, Union[Response, ResponseError]]] = []
        writes: List[bytes] = []
        try:
            self.core.feed(data)
            while True:
                r = self.core.next()
                if r is None:
                    break
                corr = r["correlationId"]
                if r.get("negotiation") == "retry":
                    frame = base64.b64decode(r["retry"])
                    if corr == self.negotiation_corr:
                        self.negotiation_corr = _frame_correlation_id(frame)
                    self.negotiation_versions.append(_frame_version(frame))
                    writes.append(frame)
                    continue
                if r.get("negotiation") == "done" and "error" not in r:
                    self.negotiated = True
                done.append((corr, ResponseError(r) if "error" in r else r))
        except KwireError as e:
            raise self.fail(ConnectionClosedError(f"kwire: the connection cannot go on: {e}")) from e
        return done, writes

    def end_error(self) -> ConnectionClosedError:
        """The error of a stream that ended."""
        mid = False
        pending = 0
        try:
            c = self.core.counters()
            mid, pending = c["buffered"], c["pending"]
        except (KwireError, SessionError):
            pass
        text = "kwire: the connection was closed by the peer"
        if mid:
            text += " in the middle of a response"
        if pending:
            text += f" with {pending} request{'s' if pending != 1 else ''} pending"
        return ConnectionClosedError(text)


class _SessionBase:
    """What Session and AsyncSession share: the _Pipeline over a SessionCore, the state
    read from it, and the bytes read from the connection turned into outcomes. A
    subclass gives the I/O: _write (a frame to the connection) and _close_with (the
    connection closed and whatever waits failed with err, which it returns)."""

    def __init__(
        self,
        kwire: Optional[Kwire],
        client_id: Optional[str],
        max_frame_size: Optional[int],
        client_software_name: Optional[str],
        client_software_version: Optional[str],
        bootstrap_version: Optional[int],
        request_timeout: Optional[float] = None,
    ) -> None:
        self._request_timeout = request_timeout
        self._abandoned: Set[int] = set()  # correlation ids of timed-out requests on the wire
        self._sasl: Optional[Dict[str, Any]] = None
        self._auth_sent = 0.0  # time.monotonic() of the last SaslAuthenticate sent
        self._stats: Stats = {"dropped": 0, "saslAuthenticates": 0, "reauthentications": 0, "sessionLifetimeMs": 0}
        self._p = _Pipeline(
            SessionCore(
                kwire,
                client_id=client_id,
                max_frame_size=max_frame_size,
                client_software_name=client_software_name,
                client_software_version=client_software_version,
                bootstrap_version=bootstrap_version,
            )
        )

    # ---- state -----------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._p.closed is not None

    @property
    def error(self) -> Optional[ConnectionClosedError]:
        """The error the session closed with, or None."""
        return self._p.closed

    @property
    def negotiated(self) -> bool:
        return self._p.negotiated

    @property
    def negotiation_versions(self) -> List[int]:
        """The ApiVersions versions the negotiation sent, in order."""
        return list(self._p.negotiation_versions)

    def counters(self) -> Counters:
        return self._p.core.counters()

    def stats(self) -> Stats:
        """What the session counted itself (see Stats)."""
        return cast(Stats, dict(self._stats))

    def version_for(self, api_key: int) -> int:
        self._p.check()
        return self._p.core.version_for(api_key)

    # ---- I/O -------------------------------------------------------------------------

    def _write(self, frame: bytes) -> None:
        raise NotImplementedError

    def _close_with(self, err: ConnectionClosedError) -> ConnectionClosedError:
        raise NotImplementedError

    def _received(self, data: bytes) -> Tuple[List[Tuple[int, Union[Response, ResponseError]]], List[bytes]]:
        """What one read from the connection gave (empty: the peer closed it): the
        completed (correlation id, response or error) and the frames to write. The end of
        the stream or a broken one closes the session and raises its
        ConnectionClosedError."""
        if not data:
            raise self._close_with(self._p.end_error())
        try:
            return self._p.drain(data)
        except ConnectionClosedError as e:
            self._close_with(e)
            raise


class Session(_SessionBase):
    """A Kafka connection over a blocking socket (or any object with ``sendall`` and
    ``recv``). ``request`` sends and waits; ``send`` and ``receive`` pipeline: send any
    number of requests, then receive each response by its correlation id (responses read
    while waiting for another are kept). Thread-safe: one thread reads at a time.

    A socket timeout raises ``TimeoutError`` (socket.timeout) from the call that was
    reading and leaves the session usable. Close it with ``close()`` or a ``with`` block.
    """

    def __init__(
        self,
        sock: Any,
        *,
        kwire: Optional[Kwire] = None,
        client_id: Optional[str] = None,
        max_frame_size: Optional[int] = None,
        client_software_name: Optional[str] = None,
        client_software_version: Optional[str] = None,
        bootstrap_version: Optional[int] = None,
        request_timeout: Optional[float] = None,
    ) -> None:
        self.sock = sock
        super().__init__(kwire, client_id, max_frame_size, client_software_name, client_software_version, bootstrap_version, request_timeout)
        self._lock = threading.RLock()
        self._waiting: Set[int] = set()
        self._results: Dict[int, Union[Response, ResponseError]] = {}
        self._reauth_timer: Optional[threading.Timer] = None

    @classmethod
    def connect(
        cls,
        host: str,
        port: int,
        *,
        timeout: Optional[float] = 30.0,
        ssl_context: Optional[_ssl.SSLContext] = None,
        server_hostname: Optional[str] = None,
        negotiate: bool = True,
        kwire: Optional[Kwire] = None,
        client_id: Optional[str] = None,
        max_frame_size: Optional[int] = None,
        client_software_name: Optional[str] = None,
        client_software_version: Optional[str] = None,
        bootstrap_version: Optional[int] = None,
        sasl: Optional[Sasl] = None,
        request_timeout: Optional[float] = None,
    ) -> "Session":
        """Connects to host:port (TLS with ssl_context), negotiates (unless negotiate is
        False), authenticates when sasl is given, and returns the session. timeout applies
        to every socket operation; request_timeout bounds each request (default none)."""
        cfg = _check_sasl(sasl) if sasl is not None else None
        sock: Any = socket.create_connection((host, port), timeout=timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if ssl_context is not None:
                sock = ssl_context.wrap_socket(sock, server_hostname=server_hostname or host)
            s = cls(
                sock,
                kwire=kwire,
                client_id=client_id,
                max_frame_size=max_frame_size,
                client_software_name=client_software_name,
                client_software_version=client_software_version,
                bootstrap_version=bootstrap_version,
                request_timeout=request_timeout,
            )
        except BaseException:
            sock.close()
            raise
        if negotiate or cfg is not None:
            try:
                s.negotiate()
                if cfg is not None:
                    s.authenticate(cfg)
            except BaseException:
                s.close()
                raise
        return s

    # ---- SASL --------------------------------------------------------------------------

    def authenticate(self, sasl: Sasl) -> int:
        """Authenticates with SASL (after negotiate()) and returns the session lifetime in
        ms (0: none). Raises AuthenticationError (the broker's code and message, never the
        password). The OAUTHBEARER token callback must be a plain function here."""
        cfg = _check_sasl(sasl)
        with self._lock:
            self._p.check()
            life = self._run_exchange(cfg)
            self._sasl = cfg
            self._schedule_reauth(life)
            return life

    def _run_exchange(self, cfg: Dict[str, Any]) -> int:
        token = None
        if cfg["mechanism"] == "OAUTHBEARER":
            try:
                token = cfg["token"]()
            except Exception as e:
                raise AuthenticationError("OAUTHBEARER", 0, f"the token callback failed: {e}") from None
            if inspect.isawaitable(token):
                cast(Any, token).close()
                raise AuthenticationError("OAUTHBEARER", 0, "the token callback returned a coroutine: the blocking Session needs a plain function (AsyncSession takes either)")
        gen = _sasl_exchange(cfg, token)
        try:
            api_key, body = next(gen)
            while True:
                if api_key == 36:
                    self._stats["saslAuthenticates"] += 1
                    self._auth_sent = time.monotonic()  # the broker's session starts after this
                corr = self._send_now(api_key, body)
                r = self._receive(corr, REAUTH_TIMEOUT)
                api_key, body = gen.send(r["body"])
        except StopIteration as stop:
            life = int(stop.value)
            self._stats["sessionLifetimeMs"] = life
            return life

    def _schedule_reauth(self, life_ms: int) -> None:
        if life_ms <= 0 or self._p.closed is not None:
            return
        # Counted from when the last SaslAuthenticate went out, not from its answer.
        t = threading.Timer(max(0.0, _reauth_delay(life_ms) - (time.monotonic() - self._auth_sent)), self._reauth)
        t.daemon = True
        self._reauth_timer = t
        t.start()

    def _reauth(self) -> None:
        """Runs on the timer's thread: holds the session (other threads wait at its lock, in
        order), reads until every request on the wire is answered, then runs the exchange."""
        with self._lock:
            if self._p.closed is not None or self._sasl is None:
                return
            try:
                deadline = time.monotonic() + REAUTH_TIMEOUT
                while (self._waiting - self._results.keys()) or self._abandoned:
                    self._read_until(deadline)
                life = self._run_exchange(self._sasl)
            except (SessionError, AuthenticationError, KwireError, OSError) as e:
                self._close_with(ConnectionClosedError(f"kwire: re-authentication failed: {e}"))
                return
            self._stats["reauthentications"] += 1
            self._schedule_reauth(life)

    def _read_until(self, deadline: Optional[float]) -> None:
        """One read, bounded by deadline (raises RequestTimeoutError past it)."""
        if deadline is None:
            self._read_once()
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise RequestTimeoutError("kwire: no response in time")
        base = self.sock.gettimeout()
        self.sock.settimeout(left if base is None else min(base, left))
        try:
            self._read_once()
        except socket.timeout:
            if time.monotonic() >= deadline:
                raise RequestTimeoutError("kwire: no response in time") from None
            raise
        finally:
            if self._p.closed is None:
                self.sock.settimeout(base)

    def _write(self, frame: bytes) -> None:
        try:
            self.sock.sendall(frame)
        except OSError as e:
            # Even after a timeout, part of the frame may be on the wire: the stream is
            # no longer framed, so the session ends.
            raise self._close_with(ConnectionClosedError(f"kwire: writing to the connection: {e}")) from e

    def _close_with(self, err: ConnectionClosedError) -> ConnectionClosedError:
        err = self._p.fail(err)
        t = self._reauth_timer
        if t is not None and t is not threading.current_thread():
            t.cancel()
        try:
            self.sock.close()
        except OSError:
            pass
        return err

    def _read_once(self) -> None:
        """Reads once from the socket and files what completes (raises on end or failure)."""
        try:
            data = self.sock.recv(_READ_SIZE)
        except socket.timeout:
            raise
        except OSError as e:
            raise self._close_with(ConnectionClosedError(f"kwire: reading from the connection: {e}")) from e
        done, writes = self._received(data)
        for frame in writes:
            self._write(frame)
        for corr, outcome in done:
            if corr in self._waiting or corr == self._p.negotiation_corr:
                self._results[corr] = outcome
            elif corr in self._abandoned:
                self._abandoned.discard(corr)
                self._stats["dropped"] += 1

    def _wait(self, corr: int, timeout: Optional[float] = None) -> Union[Response, ResponseError]:
        deadline = None if timeout is None or timeout <= 0 else time.monotonic() + timeout
        with self._lock:
            while True:
                if corr in self._results:
                    self._waiting.discard(corr)
                    return self._results.pop(corr)
                self._p.check()
                try:
                    self._read_until(deadline)
                except RequestTimeoutError:
                    # Given up: the response is read and dropped when it comes.
                    self._waiting.discard(corr)
                    self._abandoned.add(corr)
                    raise RequestTimeoutError(f"kwire: correlation id {corr}: no response within {timeout} s") from None

    def negotiate(self) -> None:
        """Negotiates api versions (ApiVersions, with one retry when the broker does not
        know kwire's version). Raises ResponseError when the broker's answer cannot be
        used."""
        with self._lock:
            self._p.check()
            if self._p.negotiated:
                return
            frame = self._p.begin()
            self._write(frame)
            while True:
                corr = self._p.negotiation_corr
                assert corr is not None
                if corr in self._results:
                    outcome = self._results.pop(corr)
                    if isinstance(outcome, ResponseError):
                        raise outcome
                    return
                self._p.check()
                self._read_once()

    def send(self, api_key: int, body: Union[Mapping[str, Any], str, bytes], *, version: int = -1, no_response: bool = False) -> int:
        """Writes a request and returns its correlation id, for receive()."""
        return self._send_now(api_key, body, version=version, no_response=no_response)

    def _send_now(self, api_key: int, body: Union[Mapping[str, Any], str, bytes], *, version: int = -1, no_response: bool = False) -> int:
        with self._lock:
            self._p.check()
            corr, frame = self._p.core.request(api_key, body, version=version, no_response=no_response)
            if not no_response:
                self._waiting.add(corr)
            self._write(frame)
            return corr

    def receive(self, correlation_id: int, *, timeout: Optional[float] = None) -> Response:
        """The response to the request send() returned correlation_id for; ResponseError
        when the module cannot read it; RequestTimeoutError after timeout seconds (default:
        the session's request_timeout), after which the response is dropped when it comes."""
        if correlation_id not in self._waiting and correlation_id not in self._results:
            raise ValueError(f"kwire: no request with correlation id {correlation_id} is pending")
        return self._receive(correlation_id, timeout if timeout is not None else self._request_timeout)

    def _receive(self, correlation_id: int, timeout: Optional[float]) -> Response:
        outcome = self._wait(correlation_id, timeout)
        if isinstance(outcome, ResponseError):
            raise outcome
        return outcome

    def request(
        self, api_key: int, body: Union[Mapping[str, Any], str, bytes], *, version: int = -1, no_response: bool = False, timeout: Optional[float] = None
    ) -> Optional[Response]:
        """Sends a request and returns its response (None with no_response); timeout as
        receive()'s."""
        corr = self.send(api_key, body, version=version, no_response=no_response)
        if no_response:
            return None
        return self.receive(corr, timeout=timeout)

    def close(self) -> None:
        """Closes the socket and the session; later calls raise ConnectionClosedError."""
        with self._lock:
            self._close_with(ConnectionClosedError("kwire: the session was closed"))

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncSession(_SessionBase):
    """A Kafka connection over asyncio streams. A reader task feeds the session; each
    ``await request(...)`` writes its frame at once and resolves with its response, so
    concurrent requests are pipelined. A cancelled request leaves the session consistent
    (its response is read and dropped)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        kwire: Optional[Kwire] = None,
        client_id: Optional[str] = None,
        max_frame_size: Optional[int] = None,
        client_software_name: Optional[str] = None,
        client_software_version: Optional[str] = None,
        bootstrap_version: Optional[int] = None,
        request_timeout: Optional[float] = None,
    ) -> None:
        self.reader = reader
        self.writer = writer
        super().__init__(kwire, client_id, max_frame_size, client_software_name, client_software_version, bootstrap_version, request_timeout)
        self._futures: Dict[int, "asyncio.Future[Union[Response, ResponseError]]"] = {}
        self._negotiation: Optional["asyncio.Future[None]"] = None
        self._gate: Optional["asyncio.Future[None]"] = None  # set while a re-authentication runs
        # Requests that arrived during a re-authentication, in order: released one at a
        # time, each once it has its correlation id, so that none that came later overtakes.
        self._held: List["asyncio.Future[None]"] = []
        # A held request has been let go and has not yet been numbered: a request arriving
        # now waits in line too, or it would overtake it.
        self._releasing = False
        self._idle: Optional["asyncio.Future[None]"] = None
        self._reauth_handle: Optional[asyncio.TimerHandle] = None
        self._reauth_task: Optional["asyncio.Task[None]"] = None
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    @classmethod
    async def connect(
        cls,
        host: str,
        port: int,
        *,
        timeout: Optional[float] = 30.0,
        ssl: Optional[_ssl.SSLContext] = None,
        server_hostname: Optional[str] = None,
        negotiate: bool = True,
        kwire: Optional[Kwire] = None,
        client_id: Optional[str] = None,
        max_frame_size: Optional[int] = None,
        client_software_name: Optional[str] = None,
        client_software_version: Optional[str] = None,
        bootstrap_version: Optional[int] = None,
        sasl: Optional[Sasl] = None,
        request_timeout: Optional[float] = None,
    ) -> "AsyncSession":
        """Opens an asyncio connection (TLS with ssl), negotiates (unless negotiate is
        False), authenticates when sasl is given (each bounded by timeout) and returns the
        session. request_timeout bounds each request (default none)."""
        cfg = _check_sasl(sasl) if sasl is not None else None
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, ssl=ssl, server_hostname=(server_hostname or host) if ssl else None), timeout
        )
        try:
            s = cls(
                reader,
                writer,
                kwire=kwire,
                client_id=client_id,
                max_frame_size=max_frame_size,
                client_software_name=client_software_name,
                client_software_version=client_software_version,
                bootstrap_version=bootstrap_version,
                request_timeout=request_timeout,
            )
        except BaseException:
            writer.close()
            raise
        if negotiate or cfg is not None:
            try:
                await asyncio.wait_for(s.negotiate(), timeout)
                if cfg is not None:
                    await asyncio.wait_for(s.authenticate(cfg), timeout)
            except BaseException:
                await s.close()
                raise
        return s

    # ---- SASL --------------------------------------------------------------------------

    async def authenticate(self, sasl: Sasl) -> int:
        """Authenticates with SASL (after negotiate()) and returns the session lifetime in
        ms (0: none). Raises AuthenticationError. The OAUTHBEARER token callback may be a
        coroutine function or a plain one."""
        cfg = _check_sasl(sasl)
        self._p.check()
        life = await self._run_exchange(cfg)
        self._sasl = cfg
        self._schedule_reauth(life)
        return life

    async def _run_exchange(self, cfg: Dict[str, Any]) -> int:
        token = None
        if cfg["mechanism"] == "OAUTHBEARER":
            try:
                token = cfg["token"]()
                if inspect.isawaitable(token):
                    token = await token
            except Exception as e:
                raise AuthenticationError("OAUTHBEARER", 0, f"the token callback failed: {e}") from None
        gen = _sasl_exchange(cfg, token)
        try:
            api_key, body = next(gen)
            while True:
                if api_key == 36:
                    self._stats["saslAuthenticates"] += 1
                    self._auth_sent = time.monotonic()  # the broker's session starts after this
                r = await self._request_now(api_key, body, timeout=REAUTH_TIMEOUT)
                assert r is not None
                api_key, body = gen.send(r["body"])
        except StopIteration as stop:
            life = int(stop.value)
            self._stats["sessionLifetimeMs"] = life
            return life

    def _schedule_reauth(self, life_ms: int) -> None:
        if life_ms <= 0 or self._p.closed is not None:
            return
        loop = asyncio.get_running_loop()

        def start() -> None:
            self._reauth_handle = None
            self._reauth_task = loop.create_task(self._reauth())

        # Counted from when the last SaslAuthenticate went out, not from its answer.
        self._reauth_handle = loop.call_later(max(0.0, _reauth_delay(life_ms) - (time.monotonic() - self._auth_sent)), start)

    async def _reauth(self) -> None:
        if self._p.closed is not None or self._sasl is None:
            return
        gate = asyncio.get_running_loop().create_future()
        self._gate = gate
        try:
            if self._futures or self._abandoned:
                self._idle = asyncio.get_running_loop().create_future()
                await asyncio.wait_for(asyncio.shield(self._idle), REAUTH_TIMEOUT)
            life = await self._run_exchange(self._sasl)
        except (SessionError, AuthenticationError, KwireError, OSError, asyncio.TimeoutError) as e:
            self._close_with(ConnectionClosedError(f"kwire: re-authentication failed: {e or type(e).__name__}"))
            return
        finally:
            self._gate = None
            self._idle = None
            gate.set_result(None)
            self._release_held()
        self._stats["reauthentications"] += 1
        self._schedule_reauth(life)

    def _release_held(self) -> None:
        """Lets the first held request go (it releases the next once numbered)."""
        while self._held and self._gate is None and not self._releasing:
            w = self._held.pop(0)
            if not w.done():
                self._releasing = True
                w.set_result(None)
                return

    def _check_idle(self) -> None:
        if self._idle is not None and not self._idle.done() and not self._futures and not self._abandoned:
            self._idle.set_result(None)

    def _close_with(self, err: ConnectionClosedError) -> ConnectionClosedError:
        err = self._p.fail(err)
        if self._reauth_handle is not None:
            self._reauth_handle.cancel()
            self._reauth_handle = None
        futures = list(self._futures.values())
        self._futures.clear()
        self._abandoned.clear()
        if self._idle is not None and not self._idle.done():
            self._idle.set_result(None)
        for f in futures:
            if not f.done():
                f.set_exception(err)
        if self._negotiation is not None and not self._negotiation.done():
            self._negotiation.set_exception(err)
        held, self._held = self._held, []
        self._releasing = False
        for w in held:
            if not w.done():
                w.set_result(None)  # each then fails on the closed session
        self.writer.close()
        return err

    async def _read_loop(self) -> None:
        try:
            while self._p.closed is None:
                try:
                    data = await self.reader.read(_READ_SIZE)
                except (OSError, asyncio.IncompleteReadError) as e:
                    self._close_with(ConnectionClosedError(f"kwire: reading from the connection: {e}"))
                    return
                try:
                    done, writes = self._received(data)
                except ConnectionClosedError:
                    return
                for frame in writes:
                    self._write(frame)
                for corr, outcome in done:
                    if self._negotiation is not None and corr == self._p.negotiation_corr:
                        if not self._negotiation.done():
                            if isinstance(outcome, ResponseError):
                                self._negotiation.set_exception(outcome)
                            else:
                                self._negotiation.set_result(None)
                        continue
                    f = self._futures.pop(corr, None)
                    if f is not None and not f.done():
                        f.set_result(outcome)
                    elif f is None and corr in self._abandoned:
                        self._abandoned.discard(corr)
                        self._stats["dropped"] += 1
                self._check_idle()
        except asyncio.CancelledError:
            self._close_with(ConnectionClosedError("kwire: the session was closed"))
            raise

    def _write(self, frame: bytes) -> None:
        try:
            self.writer.write(frame)
        except (OSError, RuntimeError) as e:
            raise self._close_with(ConnectionClosedError(f"kwire: writing to the connection: {e}")) from e

    async def _drain(self) -> None:
        try:
            await self.writer.drain()
        except (OSError, RuntimeError) as e:
            raise self._close_with(ConnectionClosedError(f"kwire: writing to the connection: {e}")) from e

    async def negotiate(self) -> None:
        """Negotiates api versions; a second call waits for the same negotiation."""
        self._p.check()
        if self._negotiation is None:
            self._negotiation = asyncio.get_running_loop().create_future()
            self._write(self._p.begin())
            await self._drain()
        await asyncio.shield(self._negotiation)

    async def request(
        self, api_key: int, body: Union[Mapping[str, Any], str, bytes], *, version: int = -1, no_response: bool = False, timeout: Optional[float] = None
    ) -> Optional[Response]:
        """Sends a request and returns its response (None with no_response). timeout
        (default: the session's request_timeout) raises RequestTimeoutError after that many
        seconds, the time waiting for a re-authentication included; the late response is
        dropped when it comes."""
        if timeout is None:
            timeout = self._request_timeout
        deadline = None if timeout is None or timeout <= 0 else asyncio.get_running_loop().time() + timeout
        held = False
        if (self._gate is not None or self._held or self._releasing) and self._p.closed is None:
            # A re-authentication runs, or requests it held are still going out: wait in line.
            w = asyncio.get_running_loop().create_future()
            self._held.append(w)
            held = True
            left = None if deadline is None else deadline - asyncio.get_running_loop().time()
            try:
                await asyncio.wait_for(asyncio.shield(w), left)
            except BaseException as e:  # a timeout, or the caller's cancellation
                if w in self._held:
                    self._held.remove(w)
                elif w.done():
                    self._releasing = False
                    self._release_held()  # released, but gone: the next one goes
                if isinstance(e, asyncio.TimeoutError):
                    raise RequestTimeoutError(f"kwire: api key {api_key}: no response within {timeout} s (held by a re-authentication)") from None
                raise
        left = None if deadline is None else max(deadline - asyncio.get_running_loop().time(), 0.001)
        return await self._request_now(api_key, body, version=version, no_response=no_response, timeout=left, release=held)

    async def _request_now(
        self,
        api_key: int,
        body: Union[Mapping[str, Any], str, bytes],
        *,
        version: int = -1,
        no_response: bool = False,
        timeout: Optional[float] = None,
        release: bool = False,
    ) -> Optional[Response]:
        try:
            self._p.check()
            corr, frame = self._p.core.request(api_key, body, version=version, no_response=no_response)
        finally:
            if release:
                self._releasing = False
                self._release_held()  # numbered (or failed): the next held request may go
        f: Optional["asyncio.Future[Union[Response, ResponseError]]"] = None
        if not no_response:
            f = asyncio.get_running_loop().create_future()
            self._futures[corr] = f
        try:
            self._write(frame)
            await self._drain()
        except BaseException:
            if f is not None:
                self._futures.pop(corr, None)
                if f.done() and not f.cancelled():
                    f.exception()  # retrieved: the error is raised here
                else:
                    f.cancel()
            raise
        if f is None:
            return None
        if timeout is not None and timeout > 0:
            try:
                outcome = await asyncio.wait_for(asyncio.shield(f), timeout)
            except asyncio.TimeoutError:
                if self._futures.get(corr) is f:
                    del self._futures[corr]
                    self._abandoned.add(corr)
                    f.cancel()
                    raise RequestTimeoutError(f"kwire: api key {api_key} (correlation id {corr}): no response within {timeout:.3g} s") from None
                outcome = f.result()  # settled meanwhile
        else:
            outcome = await f
        if isinstance(outcome, ResponseError):
            raise outcome
        return outcome

    async def close(self) -> None:
        """Closes the connection and the session; pending and later requests raise
        ConnectionClosedError."""
        if self._p.closed is None:
            self._close_with(ConnectionClosedError("kwire: the session was closed"))
        if self._reauth_task is not None and not self._reauth_task.done():
            self._reauth_task.cancel()
        if not self._task.done():
            self._task.cancel()
        try:
            await self._task
        except (asyncio.CancelledError, Exception):
            pass
        try:
            await self.writer.wait_closed()
        except (OSError, RuntimeError):
            pass

    async def __aenter__(self) -> "AsyncSession":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


def backoff_delay(attempt: int, initial: float = 0.1, maximum: float = 10.0, multiplier: float = 2.0, jitter: float = 0.2) -> float:
    """Seconds before reconnection attempt (0-based): initial * multiplier**attempt, capped
    at maximum, spread by +-jitter."""
    base = min(maximum, initial * multiplier**attempt)
    return max(0.0, base * (1 - jitter + 2 * jitter * random.random()))


class _Reconnector:
    """What the two reconnecting wrappers share: the backoff settings and the counts."""

    def __init__(self, host: str, port: int, reconnect: Optional[Mapping[str, float]], max_attempts: Optional[int], kwargs: Dict[str, Any]) -> None:
        self.host, self.port = host, port
        self._backoff = dict(reconnect or {})
        self._max_attempts = max_attempts
        self._kwargs = kwargs
        self._closed = False
        self.reconnects = 0
        """Connections made after the first."""

    def _delay(self, n: int) -> float:
        return backoff_delay(n, **self._backoff)

    def _give_up(self, n: int, last: Optional[BaseException]) -> None:
        if self._max_attempts is not None and n >= self._max_attempts:
            self._closed = True
            raise ConnectionClosedError(f"kwire: reconnecting to {self.host}:{self.port}: gave up after {n} attempts: {last}") from last

    @property
    def closed(self) -> bool:
        return self._closed


class ReconnectingSession(_Reconnector):
    """A blocking Session that comes back: when its connection has died, the next request
    opens a new one (Session.connect with the same arguments: negotiated and
    authenticated again), retrying with exponential backoff and jitter. The requests that
    were on the dead connection raised ConnectionClosedError; they are never resent.
    reconnect: backoff_delay's settings (initial, maximum, multiplier, jitter);
    max_attempts: per reconnection (default: no limit). A refused authentication is not
    retried: it raises AuthenticationError."""

    def __init__(self, host: str, port: int, *, reconnect: Optional[Mapping[str, float]] = None, max_attempts: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(host, port, reconnect, max_attempts, kwargs)
        self._lock = threading.Lock()
        self.session = Session.connect(host, port, **kwargs)
        """The current session (a new one after each reconnection)."""

    def _current(self) -> Session:
        with self._lock:
            if self._closed:
                raise ConnectionClosedError("kwire: the session was closed")
            if not self.session.closed:
                return self.session
            last: Optional[BaseException] = None
            for n in range(1 << 30):
                self._give_up(n, last)
                time.sleep(self._delay(n))
                try:
                    self.session = Session.connect(self.host, self.port, **self._kwargs)
                except AuthenticationError:
                    raise
                except (OSError, SessionError, KwireError) as e:
                    last = e
                    continue
                self.reconnects += 1
                return self.session
            raise AssertionError("unreachable")

    def request(self, api_key: int, body: Union[Mapping[str, Any], str, bytes], **options: Any) -> Optional[Response]:
        """Session.request on the current connection (a new one if it died)."""
        return self._current().request(api_key, body, **options)

    def close(self) -> None:
        self._closed = True
        self.session.close()

    def __enter__(self) -> "ReconnectingSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class ReconnectingAsyncSession(_Reconnector):
    """ReconnectingSession over AsyncSession: concurrent requests made while the
    connection is replaced wait for the one new connection (within their timeout)."""

    def __init__(self, host: str, port: int, reconnect: Optional[Mapping[str, float]], max_attempts: Optional[int], kwargs: Dict[str, Any]) -> None:
        super().__init__(host, port, reconnect, max_attempts, kwargs)
        self.session: AsyncSession
        """The current session (a new one after each reconnection)."""
        self._connecting: Optional["asyncio.Task[AsyncSession]"] = None

    @classmethod
    async def connect(
        cls, host: str, port: int, *, reconnect: Optional[Mapping[str, float]] = None, max_attempts: Optional[int] = None, **kwargs: Any
    ) -> "ReconnectingAsyncSession":
        """Connects like AsyncSession.connect(host, port, **kwargs); the first connection
        must succeed."""
        r = cls(host, port, reconnect, max_attempts, kwargs)
        r.session = await AsyncSession.connect(host, port, **kwargs)
        return r

    async def _reconnect(self) -> AsyncSession:
        last: Optional[BaseException] = None
        for n in range(1 << 30):
            self._give_up(n, last)
            await asyncio.sleep(self._delay(n))
            if self._closed:
                raise ConnectionClosedError("kwire: the session was closed")
            try:
                s = await AsyncSession.connect(self.host, self.port, **self._kwargs)
            except AuthenticationError:
                raise
            except (OSError, SessionError, KwireError, asyncio.TimeoutError) as e:
                last = e
                continue
            self.session = s
            self.reconnects += 1
            return s
        raise AssertionError("unreachable")

    async def request(self, api_key: int, body: Union[Mapping[str, Any], str, bytes], **options: Any) -> Optional[Response]:
        """AsyncSession.request on the current connection, or on the new one once made.
        options["timeout"] (or the request_timeout given to connect) bounds the wait for it."""
        if self._closed:
            raise ConnectionClosedError("kwire: the session was closed")
        s = self.session
        if s.closed:
            if self._connecting is None or self._connecting.done():
                self._connecting = asyncio.get_running_loop().create_task(self._reconnect())
            timeout = options.get("timeout", self._kwargs.get("request_timeout"))
            t0 = asyncio.get_running_loop().time()
            try:
                s = await asyncio.wait_for(asyncio.shield(self._connecting), timeout)
            except asyncio.TimeoutError:
                raise RequestTimeoutError(f"kwire: api key {api_key}: no connection within {timeout} s (reconnecting)") from None
            if timeout:
                options = dict(options, timeout=max(0.001, timeout - (asyncio.get_running_loop().time() - t0)))
        return await s.request(api_key, body, **options)

    async def close(self) -> None:
        self._closed = True
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
        await self.session.close()

    async def __aenter__(self) -> "ReconnectingAsyncSession":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


__all__ = [
    "AsyncSession",
    "AuthenticationError",
    "ConnectionClosedError",
    "Counters",
    "NO_RESPONSE",
    "ReconnectingAsyncSession",
    "ReconnectingSession",
    "RequestTimeoutError",
    "Response",
    "ResponseError",
    "Session",
    "SessionCore",
    "SessionError",
    "Stats",
    "backoff_delay",
]
