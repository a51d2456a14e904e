"""Sessions against fake servers and in-memory streams: the failures a real broker does not
produce on demand (a 200 MiB frame, a malformed response, an unknown correlation id, a
stream cut mid-frame), the negotiation retry and refusal, and any chunking; sync and
asyncio."""

import asyncio
import socket
import struct
import threading
from typing import Callable, Dict, Iterator, List

import pytest

import kwire
from kwire.session import SessionCore

K = kwire.default()
AV_MAX = K.api(18)["maxVersion"]
META = {"topics": [], "allowAutoTopicCreation": False, "includeTopicAuthorizedOperations": False}


def table() -> List[Dict[str, int]]:
    return [{"apiKey": a["apiKey"], "minVersion": a["minVersion"], "maxVersion": a["maxVersion"]} for a in K.api_catalogue()["apis"]]


def api_versions_answer(corr: int, version: int) -> bytes:
    body = {"errorCode": 0, "apiKeys": table(), "throttleTimeMs": 0}
    return K.encode_response_frame({"header": {"correlationId": corr}, "body": body}, 18, version)


def metadata_answer(corr: int, version: int) -> bytes:
    body = {"throttleTimeMs": 0, "brokers": [], "clusterId": "fake", "controllerId": 1, "topics": []}
    return K.encode_response_frame({"header": {"correlationId": corr}, "body": body}, 3, version)


def corr_of(frame: bytes) -> int:
    return int(struct.unpack(">i", frame[8:12])[0])


Handler = Callable[[socket.socket, "kwire.PeekedHeader", bytes], None]


class FakeServer:
    """A loopback server answering each request frame with handle(conn, header, frame)."""

    def __init__(self, handle: Handler) -> None:
        self.handle = handle
        self.ln = socket.create_server(("127.0.0.1", 0))
        self.port = self.ln.getsockname()[1]
        self.conns: List[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                c, _ = self.ln.accept()
            except OSError:
                return
            self.conns.append(c)
            threading.Thread(target=self._conn, args=(c,), daemon=True).start()

    def _conn(self, c: socket.socket) -> None:
        buf = b""
        try:
            while True:
                data = c.recv(65536)
                if not data:
                    return
                buf += data
                while len(buf) >= 4 and len(buf) >= 4 + struct.unpack(">i", buf[:4])[0]:
                    n = 4 + struct.unpack(">i", buf[:4])[0]
                    frame, buf = buf[:n], buf[n:]
                    self.handle(c, K.peek_request_header(frame), frame)
        except OSError:
            return

    def close(self) -> None:
        try:
            self.ln.shutdown(socket.SHUT_RDWR)  # wakes the accept
        except OSError:
            pass
        self.ln.close()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass
        self.thread.join(5)


@pytest.fixture
def server_factory() -> Iterator[Callable[[Handler], FakeServer]]:
    servers: List[FakeServer] = []

    def make(handle: Handler) -> FakeServer:
        s = FakeServer(handle)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def negotiating(other: Handler) -> Handler:
    def handle(c: socket.socket, h: "kwire.PeekedHeader", frame: bytes) -> None:
        if h.api_key == 18:
            c.sendall(api_versions_answer(h.correlation_id, h.api_version))
        else:
            other(c, h, frame)

    return handle


def huge_frame(c: socket.socket, h: "kwire.PeekedHeader", frame: bytes) -> None:
    c.sendall(struct.pack(">i", 200 << 20))


def memory_size() -> int:
    inst = K._inst
    return int(inst._mem.data_len(inst._store))


def test_200_mib_frame_fails_cleanly_sync(server_factory: Callable[[Handler], FakeServer]) -> None:
    srv = server_factory(huge_frame)
    before = memory_size()
    with pytest.raises(kwire.ConnectionClosedError) as ei:
        kwire.Session.connect("127.0.0.1", srv.port, kwire=K, timeout=10)
    assert isinstance(ei.value.__cause__, kwire.TooLargeError)
    assert "209715200" in str(ei.value)
    grown = memory_size() - before
    assert grown < 16 << 20, f"module memory grew by {grown} bytes"


def test_200_mib_frame_fails_cleanly_async(server_factory: Callable[[Handler], FakeServer]) -> None:
    srv = server_factory(huge_frame)

    async def main() -> None:
        with pytest.raises(kwire.ConnectionClosedError) as ei:
            await kwire.AsyncSession.connect("127.0.0.1", srv.port, kwire=K, timeout=10)
        assert isinstance(ei.value.__cause__, kwire.TooLargeError)

    before = memory_size()
    asyncio.run(main())
    assert memory_size() - before < 16 << 20


class Memory:
    """An in-memory transport: what the session writes is collected."""

    def __init__(self) -> None:
        self.written: List[bytes] = []
        self.incoming = bytearray()
        self.closed = False

    def sendall(self, b: bytes) -> None:
        self.written.append(bytes(b))

    def recv(self, n: int) -> bytes:
        if not self.incoming:
            return b""  # end of stream
        out = bytes(self.incoming[:n])
        del self.incoming[:n]
        return out

    def close(self) -> None:
        self.closed = True


def test_after_a_failure_every_call_fails_at_once() -> None:
    m = Memory()
    s = kwire.Session(m, kwire=K)
    m.incoming += struct.pack(">i", 0x7FFFFFFF)
    with pytest.raises(kwire.ConnectionClosedError) as ei:
        s.negotiate()
    assert isinstance(ei.value.__cause__, kwire.TooLargeError)
    assert s.closed and m.closed
    n = len(m.written)
    for call in (lambda: s.request(3, META, version=12), s.negotiate, lambda: s.version_for(3), lambda: s.send(3, META, version=12)):
        with pytest.raises(kwire.ConnectionClosedError) as e2:
            call()
        assert e2.value is s.error
    assert len(m.written) == n, "nothing written after the failure"
    assert s.counters()["requestsSent"] == 1


def test_malformed_response_fails_its_request_only(server_factory: Callable[[Handler], FakeServer]) -> None:
    seen = [0]

    def other(c: socket.socket, h: "kwire.PeekedHeader", frame: bytes) -> None:
        seen[0] += 1
        if seen[0] == 1:
            c.sendall(struct.pack(">iib", 8, h.correlation_id, 0) + b"\x01\x02\x03")  # header v1, 3-byte body
        else:
            c.sendall(metadata_answer(h.correlation_id, h.api_version))

    srv = server_factory(negotiating(other))
    with kwire.Session.connect("127.0.0.1", srv.port, kwire=K, timeout=10) as s:
        bad = s.send(3, META, version=12)
        good = s.send(3, META, version=12)
        # Received out of order: the good one first, the bad one is kept meanwhile.
        assert s.receive(good)["body"]["clusterId"] == "fake"
        with pytest.raises(kwire.ResponseError) as ei:
            s.receive(bad)
        assert ei.value.api_key == 3 and ei.value.api_version == 12 and ei.value.correlation_id == bad
        assert not s.closed
        r = s.request(3, META, version=12)
        assert r is not None and r["body"]["clusterId"] == "fake"


def test_request_the_module_cannot_encode_fails_alone() -> None:
    m = Memory()
    s = kwire.Session(m, kwire=K)
    with pytest.raises(kwire.JSONError):
        s.send(3, {"topics": [], "noSuchField": 1}, version=12)
    with pytest.raises(kwire.VersionError):
        s.send(3, META)  # not negotiated
    with pytest.raises(kwire.UnknownAPIError):
        s.send(9999, {}, version=0)
    assert m.written == []
    corr = s.send(3, META, version=12)
    m.incoming += metadata_answer(corr_of(m.written[0]), 12)
    assert s.receive(corr)["body"]["clusterId"] == "fake"
    with pytest.raises(ValueError):
        s.receive(corr)
    s.close()


def test_response_nobody_asked_for_fails_the_session() -> None:
    m = Memory()
    s = kwire.Session(m, kwire=K)
    corr = s.send(3, META, version=12)
    m.incoming += metadata_answer(4242, 12)
    with pytest.raises(kwire.ConnectionClosedError) as ei:
        s.receive(corr)
    assert isinstance(ei.value.__cause__, kwire.DecodeError)
    assert "correlation id 4242" in str(ei.value)


def test_any_chunking_core() -> None:
    core = SessionCore(K, client_id="chunks")
    first = core.begin_negotiation()
    for b in api_versions_answer(corr_of(first), AV_MAX):
        core.feed(bytes([b]))
    r = core.next()
    assert r is not None and r["negotiation"] == "done" and r["body"]["errorCode"] == 0
    assert core.next() is None
    v = core.version_for(3)
    assert v == K.api(3)["maxVersion"]
    frames = [core.request(3, META) for _ in range(3)]
    core.feed(b"".join(metadata_answer(c, v) for c, _ in frames))
    got = [core.next() for _ in range(3)]
    assert [g["correlationId"] for g in got if g is not None] == [c for c, _ in frames]
    c = core.counters()
    assert c["requestsSent"] == 4 and c["responsesReceived"] == 4 and c["pending"] == 0
    assert c["bytesSent"] == len(first) + sum(len(f) for _, f in frames)
    core.free()
    core.free()
    assert core.counters() == c
    with pytest.raises(kwire.ConnectionClosedError):
        core.next()


def test_unsupported_version_retry(server_factory: Callable[[Handler], FakeServer]) -> None:
    seen: List[int] = []

    def handle(c: socket.socket, h: "kwire.PeekedHeader", frame: bytes) -> None:
        if h.api_key != 18:
            return
        seen.append(h.api_version)
        if h.api_version > 2:
            body = {"errorCode": 35, "apiKeys": [{"apiKey": 18, "minVersion": 0, "maxVersion": 2}]}
            c.sendall(K.encode_response_frame({"header": {"correlationId": h.correlation_id}, "body": body}, 18, 0))
        else:
            c.sendall(api_versions_answer(h.correlation_id, h.api_version))

    srv = server_factory(handle)
    with kwire.Session.connect("127.0.0.1", srv.port, kwire=K, timeout=10) as s:
        assert seen == [AV_MAX, 2]
        assert s.negotiation_versions == [AV_MAX, 2]
        assert s.negotiated and s.version_for(18) == AV_MAX

    seen.clear()

    async def main() -> None:
        a = await kwire.AsyncSession.connect("127.0.0.1", srv.port, kwire=K, timeout=10)
        try:
            assert a.negotiation_versions == [AV_MAX, 2] and a.negotiated
        finally:
            await a.close()

    asyncio.run(main())
    assert seen == [AV_MAX, 2]


def test_refused_negotiation_raises_response_error() -> None:
    m = Memory()
    s = kwire.Session(m, kwire=K)

    def refuse() -> None:
        body = {"errorCode": 35, "apiKeys": [{"apiKey": 18, "minVersion": 90, "maxVersion": 91}]}
        m.incoming += K.encode_response_frame({"header": {"correlationId": 0}, "body": body}, 18, 0)

    refuse()
    with pytest.raises(kwire.ResponseError, match="negotiation"):
        s.negotiate()
    assert not s.negotiated and not s.closed
    assert corr_of(m.written[0]) == 0


def test_peer_closing_mid_frame(server_factory: Callable[[Handler], FakeServer]) -> None:
    def other(c: socket.socket, h: "kwire.PeekedHeader", frame: bytes) -> None:
        f = metadata_answer(h.correlation_id, h.api_version)
        c.sendall(f[:-2])
        c.shutdown(socket.SHUT_WR)

    srv = server_factory(negotiating(other))
    s = kwire.Session.connect("127.0.0.1", srv.port, kwire=K, timeout=10)
    a = s.send(3, META)
    b = s.send(3, META)
    for corr in (a, b):
        with pytest.raises(kwire.ConnectionClosedError, match="closed by the peer in the middle of a response"):
            s.receive(corr)
    with pytest.raises(kwire.ConnectionClosedError):
        s.send(3, META)

    async def main() -> None:
        x = await kwire.AsyncSession.connect("127.0.0.1", srv.port, kwire=K, timeout=10)
        results = await asyncio.gather(x.request(3, META), x.request(3, META), return_exceptions=True)
        for r in results:
            assert isinstance(r, kwire.ConnectionClosedError), r
            assert "in the middle of a response" in str(r)
        with pytest.raises(kwire.ConnectionClosedError):
            await x.request(3, META)
        await x.close()

    asyncio.run(main())


def test_async_cancelled_request_leaves_the_session_consistent(server_factory: Callable[[Handler], FakeServer]) -> None:
    release = threading.Event()
    late_answers: List[threading.Thread] = []

    def other(c: socket.socket, h: "kwire.PeekedHeader", frame: bytes) -> None:
        if h.correlation_id == 1:

            def late() -> None:
                release.wait(10)
                c.sendall(metadata_answer(h.correlation_id, h.api_version))

            t = threading.Thread(target=late, daemon=True)
            late_answers.append(t)
            t.start()
        else:
            # A broker answers in request order: the late answer goes out first.
            for t in late_answers:
                t.join(10)
            c.sendall(metadata_answer(h.correlation_id, h.api_version))

    srv = server_factory(negotiating(other))

    async def main() -> None:
        x = await kwire.AsyncSession.connect("127.0.0.1", srv.port, kwire=K, timeout=10)
        try:
            slow = asyncio.ensure_future(x.request(3, META))
            await asyncio.sleep(0.05)
            slow.cancel()
            with pytest.raises(asyncio.CancelledError):
                await slow
            release.set()
            # The late answer to the cancelled request is read and dropped; the next works.
            r = await x.request(3, META)
            assert r is not None and r["correlationId"] == 2
            assert x.counters()["pending"] == 0 and not x.closed
        finally:
            await x.close()

    asyncio.run(main())


def test_no_response_requests() -> None:
    m = Memory()
    s = kwire.Session(m, kwire=K)
    body: Dict[str, object] = {"transactionalId": None, "acks": 0, "timeoutMs": 1000, "topicData": []}
    assert s.request(0, body, version=9, no_response=True) is None
    assert len(m.written) == 1 and s.counters()["pending"] == 0
    s.close()
    with pytest.raises(kwire.ConnectionClosedError, match="closed"):
        s.request(0, body, version=9, no_response=True)


def _live(handle: int) -> bool:
    inst = K._inst
    s = inst._scratch
    with K._lock:
        st = inst.call("kw_session_counters", handle, s, s + 4)
        if st == 0:
            inst.free(int(struct.unpack("<I", inst._mem.read(inst._store, s, s + 4))[0]))
    return st == 0


def test_handles_are_released() -> None:
    core = SessionCore(K)
    h = core.handle
    assert _live(h)
    core.free()
    assert not _live(h) and core.handle == 0
    # The safety net: a session dropped without free() releases its handle too.
    dropped = SessionCore(K)
    h = dropped.handle
    assert _live(h)
    del dropped
    assert not _live(h)


def test_a_module_without_sessions_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(K._inst, "optional", frozenset())
    with pytest.raises(kwire.UnsupportedError, match=r"has no sessions \(needs ABI 1\.1"):
        SessionCore(K)


def _software(frame: bytes) -> List[str]:
    body = K.decode_request_frame(frame)["body"]
    return [str(body["clientSoftwareName"]), str(body["clientSoftwareVersion"])]


def test_api_versions_software_filled() -> None:
    """request(18, {}) at v3+ carries the session's client software name and version
    (kwire-python and the package's version unless configured), as negotiation does."""
    core = SessionCore(K)
    assert _software(core.request(18, {}, version=3)[1]) == ["kwire-python", kwire.__version__]
    assert _software(core.request(18, {"clientSoftwareName": "mine"}, version=AV_MAX)[1]) == ["mine", kwire.__version__]
    assert _software(core.begin_negotiation()) == ["kwire-python", kwire.__version__]
    core.free()
    for empty in (None, ""):
        core = SessionCore(K, client_software_name=empty, client_software_version=empty)
        assert _software(core.request(18, {}, version=3)[1]) == ["kwire-python", kwire.__version__]
        core.free()
    core = SessionCore(K, client_software_name="my-app", client_software_version="2.0.1")
    assert _software(core.request(18, {}, version=3)[1]) == ["my-app", "2.0.1"]
    core.free()
    # The sessions over a transport use the same core.
    m = Memory()
    s = kwire.Session(m, kwire=K)
    s.send(18, {}, version=AV_MAX)
    assert _software(m.written[0]) == ["kwire-python", kwire.__version__]
    s.close()


def test_api_versions_software_refused() -> None:
    """A client software value Kafka's broker refuses (INVALID_REQUEST) raises EncodeError
    naming the field and the rule, and nothing is written."""
    m = Memory()
    s = kwire.Session(m, kwire=K)
    with pytest.raises(kwire.EncodeError) as ei:
        s.send(18, {"clientSoftwareName": "my app"}, version=3)
    assert ei.value.path == "clientSoftwareName"
    assert 'clientSoftwareName "my app" does not match [a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?' in str(ei.value)
    assert "INVALID_REQUEST" in str(ei.value)
    assert m.written == [] and not s.closed
    s.close()
    core = SessionCore(K, client_software_version="1.0-")
    with pytest.raises(kwire.EncodeError) as ei:
        core.begin_negotiation()
    assert ei.value.path == "clientSoftwareVersion"
    core.free()


def test_version_is_the_package_version() -> None:
    """kwire.__version__ (what sessions report) is the version the package is built with."""
    import re

    from conftest import REPO

    text = (REPO / "bindings" / "python" / "pyproject.toml").read_text()
    m = re.search(r'^version = "([^"]+)"$', text, re.M)
    assert m is not None and kwire.__version__ == m.group(1)
