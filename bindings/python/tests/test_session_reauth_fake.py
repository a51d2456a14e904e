"""Re-authentication, timeouts and reconnection against a fake asyncio server, where the
order of events on the wire can be checked exactly: no request is on the wire while the
SASL exchange runs, held requests go out in the order they were made (AsyncSession and the
blocking Session's timer thread), a refused re-authentication closes the session, a
timed-out request's late answer is dropped, and a request on a connection that dies fails
and is never sent again."""

import asyncio
import threading
import time
from typing import Any, Callable, Dict, List

import pytest

import kwire
from kwire._sasl import check as check_sasl
from kwire.session import AsyncSession, AuthenticationError, ConnectionClosedError, ReconnectingAsyncSession, RequestTimeoutError, Session

K = kwire.default()
META: Dict[str, Any] = {"topics": [], "allowAutoTopicCreation": False, "includeTopicAuthorizedOperations": False}
PLAIN = {"mechanism": "PLAIN", "username": "u", "password": "secret-pw"}


def table() -> List[Dict[str, int]]:
    return [{"apiKey": a["apiKey"], "minVersion": a["minVersion"], "maxVersion": a["maxVersion"]} for a in K.api_catalogue()["apis"]]


class FakeServer:
    """ApiVersions, SaslHandshake, SaslAuthenticate (PLAIN, granting lifetime_ms; ok(n)
    decides whether the n-th succeeds) and Metadata answered after delay seconds (never
    when delay < 0), on its own thread's event loop. events records what happened."""

    def __init__(self, lifetime_ms: int = 300, delay: float = 0.03, ok: Callable[[int], bool] = lambda n: True) -> None:
        self.lifetime_ms, self.delay, self.ok = lifetime_ms, delay, ok
        self.events: List[Dict[str, Any]] = []
        self.auths = self.metadata = self.outstanding = 0
        self.writers: List[asyncio.StreamWriter] = []
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait(10)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = self.server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    async def _serve(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        self.writers.append(w)
        try:
            while True:
                size = await r.readexactly(4)
                frame = size + await r.readexactly(int.from_bytes(size, "big"))
                h = K.peek_request_header(frame)
                self._handle(w, h, frame)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass

    def _answer(self, h: Any, body: Dict[str, Any]) -> bytes:
        return K.encode_response_frame({"header": {"correlationId": h.correlation_id}, "body": body}, h.api_key, h.api_version)

    def _handle(self, w: asyncio.StreamWriter, h: Any, frame: bytes) -> None:
        if h.api_key == 18:
            w.write(self._answer(h, {"errorCode": 0, "apiKeys": table(), "throttleTimeMs": 0}))
        elif h.api_key == 17:
            self.events.append({"ev": "handshake", "outstanding": self.outstanding})
            w.write(self._answer(h, {"errorCode": 0, "mechanisms": ["PLAIN"]}))
        elif h.api_key == 36:
            self.auths += 1
            self.events.append({"ev": "authenticate", "outstanding": self.outstanding})
            if self.ok(self.auths):
                body = {"errorCode": 0, "errorMessage": None, "authBytes": "", "sessionLifetimeMs": self.lifetime_ms}
            else:
                body = {"errorCode": 58, "errorMessage": "Authentication failed: credentials revoked", "authBytes": "", "sessionLifetimeMs": 0}
            w.write(self._answer(h, body))
        elif h.api_key == 3:
            self.metadata += 1
            self.outstanding += 1
            self.events.append({"ev": "metadata"})
            if self.delay < 0:
                return

            def later() -> None:
                self.outstanding -= 1
                if not w.is_closing():
                    w.write(self._answer(h, {"throttleTimeMs": 0, "brokers": [], "clusterId": "fake", "controllerId": 1, "topics": []}))

            self.loop.call_later(self.delay, later)

    def drop_all(self) -> None:
        def drop() -> None:
            for w in self.writers:
                w.transport.abort()

        self.loop.call_soon_threadsafe(drop)

    def close(self) -> None:
        async def shutdown() -> None:
            for w in self.writers:
                w.transport.abort()
            self.server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def check_quiet_exchanges(self) -> None:
        """No Metadata on the wire at any handshake or authenticate, none between them."""
        for i, e in enumerate(self.events):
            if e["ev"] != "metadata":
                assert e["outstanding"] == 0, f"{e['ev']} with {e['outstanding']} requests on the wire"
            if e["ev"] == "handshake":
                assert self.events[i + 1]["ev"] == "authenticate", "a request came between the handshake and the authenticate"


@pytest.fixture
def server() -> Any:
    servers: List[FakeServer] = []

    def make(**kw: Any) -> FakeServer:
        s = FakeServer(**kw)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def test_async_reauth_order(server: Callable[..., FakeServer]) -> None:
    srv = server(lifetime_ms=300, delay=0.03)

    async def main() -> None:
        s = await AsyncSession.connect("127.0.0.1", srv.port, kwire=K, sasl=PLAIN)
        calls = []
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1.5:
            calls.append(asyncio.ensure_future(s.request(3, META)))
            await asyncio.sleep(0.005)
        responses = await asyncio.gather(*calls)
        corrs = [r["correlationId"] for r in responses if r is not None]
        assert corrs == sorted(corrs) and len(set(corrs)) == len(corrs), "held requests went out of order"
        st = s.stats()
        assert st["reauthentications"] >= 3, st
        assert sum(1 for e in srv.events if e["ev"] == "handshake") == st["reauthentications"] + 1
        srv.check_quiet_exchanges()
        assert not s.closed
        await s.close()

    asyncio.run(main())


def test_sync_reauth_from_timer_thread(server: Callable[..., FakeServer]) -> None:
    srv = server(lifetime_ms=200, delay=0.01)
    with Session.connect("127.0.0.1", srv.port, kwire=K, sasl=PLAIN) as s:
        t0 = time.monotonic()
        n = 0
        while time.monotonic() - t0 < 1.0:
            # Pipelined: two requests on the wire, then their answers.
            a, b = s.send(3, META), s.send(3, META)
            assert s.receive(a)["correlationId"] == a and s.receive(b)["correlationId"] == b
            n += 2
        st = s.stats()
        assert st["reauthentications"] >= 3, st
        srv.check_quiet_exchanges()
        assert not s.closed and n > 10


def test_refused_reauth_closes(server: Callable[..., FakeServer]) -> None:
    srv = server(lifetime_ms=200, delay=0.05, ok=lambda n: n == 1)

    async def main() -> None:
        s = await AsyncSession.connect("127.0.0.1", srv.port, kwire=K, sasl=PLAIN)
        outcomes: List[Any] = []
        for _ in range(30):
            if s.closed:
                break
            try:
                outcomes.append(await s.request(3, META))
            except ConnectionClosedError as e:
                outcomes.append(e)
            await asyncio.sleep(0.01)
        assert s.closed
        err = s.error
        assert err is not None and "re-authentication failed" in str(err) and "credentials revoked" in str(err)
        assert "secret-pw" not in str(err)
        with pytest.raises(ConnectionClosedError):
            await s.request(3, META)
        await s.close()

    asyncio.run(main())


def test_timeout_then_next_works(server: Callable[..., FakeServer]) -> None:
    srv = server(lifetime_ms=0, delay=0.3)

    async def main() -> None:
        s = await AsyncSession.connect("127.0.0.1", srv.port, kwire=K)
        with pytest.raises(RequestTimeoutError):
            await s.request(3, META, timeout=0.05)
        r = await s.request(3, META, timeout=5)
        assert r is not None and r["apiKey"] == 3 and s.stats()["dropped"] == 1
        await s.close()

    asyncio.run(main())
    with Session.connect("127.0.0.1", srv.port, kwire=K) as s:
        with pytest.raises(RequestTimeoutError):
            s.request(3, META, timeout=0.05)
        r = s.request(3, META, timeout=5)
        assert r is not None and s.stats()["dropped"] == 1


def test_reconnect_does_not_resend(server: Callable[..., FakeServer]) -> None:
    srv = server(lifetime_ms=0, delay=-1)  # Metadata never answered

    async def main() -> None:
        r = await ReconnectingAsyncSession.connect("127.0.0.1", srv.port, kwire=K, sasl=PLAIN, reconnect={"initial": 0.01, "maximum": 0.05})
        first = r.session
        pending = asyncio.ensure_future(r.request(3, META))
        while srv.metadata < 1:
            await asyncio.sleep(0.005)
        srv.drop_all()
        with pytest.raises(ConnectionClosedError):
            await pending
        with pytest.raises(RequestTimeoutError):
            await r.request(3, META, timeout=0.3)
        await asyncio.sleep(0.05)
        assert srv.metadata == 2, f"{srv.metadata} Metadata requests received: the failed one was sent again"
        assert r.session is not first and r.reconnects == 1 and srv.auths == 2
        await r.close()

    asyncio.run(main())


def test_wrong_mechanism_type() -> None:
    with pytest.raises(AuthenticationError, match="kwire supports"):
        check_sasl({"mechanism": "SCRAM-SHA-1", "username": "u", "password": "p"})
    with pytest.raises(TypeError):
        check_sasl({"mechanism": "OAUTHBEARER"})


def test_reauth_delay_margin() -> None:
    """85-95% of a long lifetime; at least a second before the end of a short one, and
    never before its middle."""
    from kwire._sasl import reauth_delay

    for life_ms, lo, hi in [(3_600_000, 3060.0, 3420.0), (20_000, 17.0, 19.0), (4000, 3.0, 3.0), (1500, 0.75, 0.75)]:
        for _ in range(200):
            d = reauth_delay(life_ms)
            assert lo <= d <= hi, f"reauth_delay({life_ms}) = {d}, want {lo}..{hi}"
