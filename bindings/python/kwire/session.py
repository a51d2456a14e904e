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
"""

import asyncio
import base64
import ctypes
import socket
import ssl as _ssl
import threading
import weakref
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple, TypedDict, Union

from ._api import BytesLike, Kwire, default, dumps, loads
from ._errors import ERR_UNSUPPORTED, KwireError, error_for
from ._runtime import _OUT_SLOTS, _SESSION_EXPORTS, Instance, check_int32

NO_RESPONSE = 1
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
    client_software_name, client_software_version, bootstrap_version (the ApiVersions
    version of the first negotiation request; default kwire's highest).
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
            ("clientSoftwareName", client_software_name),
            ("clientSoftwareVersion", client_software_version),
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
    ) -> None:
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
    ) -> None:
        self.sock = sock
        super().__init__(kwire, client_id, max_frame_size, client_software_name, client_software_version, bootstrap_version)
        self._lock = threading.RLock()
        self._waiting: Set[int] = set()
        self._results: Dict[int, Union[Response, ResponseError]] = {}

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
    ) -> "Session":
        """Connects to host:port (TLS with ssl_context), negotiates (unless negotiate is
        False) and returns the session. timeout applies to every socket operation."""
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
            )
        except BaseException:
            sock.close()
            raise
        if negotiate:
            try:
                s.negotiate()
            except BaseException:
                s.close()
                raise
        return s

    def _write(self, frame: bytes) -> None:
        try:
            self.sock.sendall(frame)
        except OSError as e:
            # Even after a timeout, part of the frame may be on the wire: the stream is
            # no longer framed, so the session ends.
            raise self._close_with(ConnectionClosedError(f"kwire: writing to the connection: {e}")) from e

    def _close_with(self, err: ConnectionClosedError) -> ConnectionClosedError:
        err = self._p.fail(err)
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

    def _wait(self, corr: int) -> Union[Response, ResponseError]:
        with self._lock:
            while True:
                if corr in self._results:
                    self._waiting.discard(corr)
                    return self._results.pop(corr)
                self._p.check()
                self._read_once()

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
        with self._lock:
            self._p.check()
            corr, frame = self._p.core.request(api_key, body, version=version, no_response=no_response)
            if not no_response:
                self._waiting.add(corr)
            self._write(frame)
            return corr

    def receive(self, correlation_id: int) -> Response:
        """The response to the request send() returned correlation_id for; ResponseError
        when the module cannot read it."""
        if correlation_id not in self._waiting and correlation_id not in self._results:
            raise ValueError(f"kwire: no request with correlation id {correlation_id} is pending")
        outcome = self._wait(correlation_id)
        if isinstance(outcome, ResponseError):
            raise outcome
        return outcome

    def request(self, api_key: int, body: Union[Mapping[str, Any], str, bytes], *, version: int = -1, no_response: bool = False) -> Optional[Response]:
        """Sends a request and returns its response (None with no_response)."""
        corr = self.send(api_key, body, version=version, no_response=no_response)
        if no_response:
            return None
        return self.receive(corr)

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
    ) -> None:
        self.reader = reader
        self.writer = writer
        super().__init__(kwire, client_id, max_frame_size, client_software_name, client_software_version, bootstrap_version)
        self._futures: Dict[int, "asyncio.Future[Union[Response, ResponseError]]"] = {}
        self._negotiation: Optional["asyncio.Future[None]"] = None
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
    ) -> "AsyncSession":
        """Opens an asyncio connection (TLS with ssl), negotiates (unless negotiate is
        False; both bounded by timeout) and returns the session."""
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
            )
        except BaseException:
            writer.close()
            raise
        if negotiate:
            try:
                await asyncio.wait_for(s.negotiate(), timeout)
            except BaseException:
                await s.close()
                raise
        return s

    def _close_with(self, err: ConnectionClosedError) -> ConnectionClosedError:
        err = self._p.fail(err)
        futures = list(self._futures.values())
        self._futures.clear()
        for f in futures:
            if not f.done():
                f.set_exception(err)
        if self._negotiation is not None and not self._negotiation.done():
            self._negotiation.set_exception(err)
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
        self, api_key: int, body: Union[Mapping[str, Any], str, bytes], *, version: int = -1, no_response: bool = False
    ) -> Optional[Response]:
        """Sends a request and returns its response (None with no_response)."""
        self._p.check()
        corr, frame = self._p.core.request(api_key, body, version=version, no_response=no_response)
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
        outcome = await f
        if isinstance(outcome, ResponseError):
            raise outcome
        return outcome

    async def close(self) -> None:
        """Closes the connection and the session; pending and later requests raise
        ConnectionClosedError."""
        if self._p.closed is None:
            self._close_with(ConnectionClosedError("kwire: the session was closed"))
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


__all__ = [
    "AsyncSession",
    "ConnectionClosedError",
    "Counters",
    "NO_RESPONSE",
    "Response",
    "ResponseError",
    "Session",
    "SessionCore",
    "SessionError",
]
