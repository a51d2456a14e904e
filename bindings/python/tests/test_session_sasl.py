"""SASL, re-authentication (KIP-368), request timeouts and reconnection against real Apache
Kafka brokers: one 4.4.0 and one 3.9.2, started side by side for this module with
conformance/broker/cmd/kwire-broker -reauth-ms 4000, each scenario run against both:

- PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER on SASL_PLAINTEXT and SASL_SSL with
  Session and AsyncSession; a wrong password for each; an expired token; a failing
  token callback;
- a request to a paused broker (SIGSTOP) times out, the next one works (both sessions);
- 30 s of requests with re-authentication every ~3.6 s, the two brokers at once: an
  AsyncSession (OAUTHBEARER, SASL_PLAINTEXT) producing numbered records beside Metadata
  callers, and a blocking Session (SCRAM-SHA-512, SASL_SSL) in a thread. None fails,
  every record comes back in order, and the SaslHandshake and SaslAuthenticate frames
  written to the connection are counted;
- the broker restarted under ReconnectingAsyncSession and ReconnectingSession: the
  requests in flight fail, later ones go to a new, authenticated connection.

Needs Go, Java 17 and the broker's jars; with KWIRE_REQUIRE_BROKER=1 (set by make) a
missing one fails instead of skipping.
"""

import asyncio
import base64
import json
import os
import select
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

import kwire
from conftest import REPO
from kwire.session import AsyncSession, AuthenticationError, ConnectionClosedError, ReconnectingAsyncSession, ReconnectingSession, RequestTimeoutError, Session

K = kwire.default()
VERSIONS = ["4.4.0", "3.9.2"]
REAUTH_MS = 4000
REAUTH_LOG = "Beginning re-authentication"  # the broker's debug line (conformance/broker ReauthLogLine)
LOAD_S = float(os.environ.get("KWIRE_REAUTH_DURATION_MS", "30000")) / 1000
META: Dict[str, Any] = {"topics": [], "allowAutoTopicCreation": False, "includeTopicAuthorizedOperations": False}
RETRIABLE = {3, 5, 6, 7, 9, 100}


class Launcher:
    """One kwire-broker process; command() writes a stdin command and returns its answer."""

    def __init__(self, exe: str, version: str, tmp: str) -> None:
        self.version = version
        self.errlog = open(os.path.join(tmp, f"stderr-{version}"), "w+b")
        self.proc = subprocess.Popen([exe, "-version", version, "-reauth-ms", str(REAUTH_MS)], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errlog)
        self.buf = b""
        self.lock = threading.Lock()
        self.info: Dict[str, Any] = {}

    def line(self, timeout: float) -> bytes:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(self.proc.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                code = self.proc.wait(30) if ready else None
                self.errlog.seek(0)
                err = self.errlog.read().decode("utf-8", "replace")
                if code == 3 and os.environ.get("KWIRE_REQUIRE_BROKER") != "1":
                    pytest.skip(f"no Kafka broker (set KWIRE_REQUIRE_BROKER=1 to fail instead): {err}")
                pytest.fail(f"kwire-broker {self.version} (exit {code}):\n{err}")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def start(self) -> None:
        self.info = json.loads(self.line(240))
        assert self.info["version"] == self.version and self.info["reauthMs"] == REAUTH_MS

    def command(self, cmd: str) -> Dict[str, Any]:
        with self.lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(cmd.encode() + b"\n")
            self.proc.stdin.flush()
            r: Dict[str, Any] = json.loads(self.line(240))
        assert "error" not in r, f"kwire-broker {self.version} {cmd}: {r['error']}"
        return r

    def addr(self, listener: str) -> Tuple[str, int]:
        host, port = self.info["listeners"][listener].split(":")
        return host, int(port)

    def ssl(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cadata=self.info["certPEM"])
        return ctx

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            code = self.proc.wait(90)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        if code != 0:
            self.errlog.seek(0)
            print(self.errlog.read().decode("utf-8", "replace"))
        self.errlog.close()


@pytest.fixture(scope="module")
def brokers() -> Iterator[Dict[str, Launcher]]:
    tmp = tempfile.mkdtemp(prefix="kwire-py-sasl-")
    launchers: List[Launcher] = []
    try:
        exe = os.path.join(tmp, "kwire-broker")
        subprocess.run([os.environ.get("GO", "go"), "build", "-o", exe, "./conformance/broker/cmd/kwire-broker"], cwd=REPO, check=True)
        launchers = [Launcher(exe, v, tmp) for v in VERSIONS]
        for b in launchers:
            b.start()  # the two start side by side: both processes run already
        yield {b.version: b for b in launchers}
    finally:
        for b in launchers:
            b.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def both(brokers: Dict[str, Launcher], fn: Callable[[Launcher], None]) -> None:
    """Runs fn against both brokers at once (threads); the first failure is raised."""
    with ThreadPoolExecutor(len(VERSIONS)) as ex:
        futs = [ex.submit(fn, brokers[v]) for v in VERSIONS]
        for v, f in zip(VERSIONS, futs):
            try:
                f.result()
            except BaseException as e:
                raise AssertionError(f"Kafka {v}: {e!r}") from e


def unsigned_jwt(sub: str, ttl: int) -> str:
    def enc(b: bytes) -> str:
        return base64.urlsafe_b64encode(b).rstrip(b"=").decode()

    now = int(time.time())
    return enc(b'{"alg":"none"}') + "." + enc(json.dumps({"sub": sub, "iat": now, "exp": now + ttl}).encode()) + "."


def sasl_for(b: Launcher, mech: str, tokens: Optional[List[int]] = None, use_async: bool = False) -> Dict[str, Any]:
    if mech == "OAUTHBEARER":
        def token() -> str:
            if tokens is not None:
                tokens[0] += 1
            return unsigned_jwt("kwire-py", 3600)

        async def atoken() -> str:
            return token()

        return {"mechanism": mech, "token": atoken if use_async else token}
    user, password = b.info["users"][mech]
    return {"mechanism": mech, "username": user, "password": password}


def connect(b: Launcher, listener: str, sasl: Dict[str, Any], **kw: Any) -> Session:
    host, port = b.addr(listener)
    return Session.connect(host, port, kwire=K, timeout=60, ssl_context=b.ssl() if listener == "SASL_SSL" else None, sasl=sasl, **kw)


async def aconnect(b: Launcher, listener: str, sasl: Dict[str, Any], **kw: Any) -> AsyncSession:
    host, port = b.addr(listener)
    return await AsyncSession.connect(host, port, kwire=K, timeout=60, ssl=b.ssl() if listener == "SASL_SSL" else None, sasl=sasl, **kw)


class CountingSock:
    """A socket whose sendall counts the request frames by api key (the session writes
    whole frames; under TLS this is the plaintext side)."""

    def __init__(self, sock: Any) -> None:
        self._sock = sock
        self.keys: Dict[int, int] = {}

    def sendall(self, data: bytes) -> None:
        if len(data) >= 6:
            k = int.from_bytes(data[4:6], "big")
            self.keys[k] = self.keys.get(k, 0) + 1
        self._sock.sendall(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def count_async_frames(s: AsyncSession) -> Dict[int, int]:
    keys: Dict[int, int] = {}
    write = s.writer.write

    def counting(data: Any) -> None:
        if len(data) >= 6:
            k = int.from_bytes(bytes(data[4:6]), "big")
            keys[k] = keys.get(k, 0) + 1
        write(data)

    s.writer.write = counting  # type: ignore[method-assign]
    return keys


_seq = [0]


def topic_body() -> Tuple[str, Dict[str, Any]]:
    _seq[0] += 1
    name = f"sasl-{os.getpid()}-{_seq[0]}"
    return name, {"topics": [{"name": name, "numPartitions": 1, "replicationFactor": 1, "assignments": [], "configs": []}], "timeoutMs": 30000, "validateOnly": False}


def produce_body(tp: Tuple[str, str], value: bytes) -> Dict[str, Any]:
    batch = K.encode_records([{"value": value, "timestamp": int(time.time() * 1000)}])
    return {"transactionalId": None, "acks": -1, "timeoutMs": 30000, "topicData": [{"name": tp[0], "topicId": tp[1], "partitionData": [{"index": 0, "records": batch}]}]}


def fetch_body(tp: Tuple[str, str], offset: int) -> Dict[str, Any]:
    return {
        "replicaId": -1, "maxWaitMs": 100, "minBytes": 1, "maxBytes": 1 << 20, "isolationLevel": 0, "sessionId": 0, "sessionEpoch": -1,
        "topics": [{"topic": tp[0], "topicId": tp[1], "partitions": [{"partition": 0, "currentLeaderEpoch": -1, "fetchOffset": offset, "lastFetchedEpoch": -1, "logStartOffset": -1, "partitionMaxBytes": 1 << 20}]}],
        "forgottenTopicsData": [], "rackId": "",
    }


def values_of(resp: Any, offset: int) -> List[bytes]:
    p = resp["body"]["responses"][0]["partitions"][0]
    assert p["errorCode"] == 0, f"Fetch: error {p['errorCode']}"
    return [bytes(r.value or b"") for r in K.decode_records(base64.b64decode(p["records"] or "")) if r.offset >= offset and not r.control]


async def acreate(s: Any) -> Tuple[str, str]:
    name, body = topic_body()
    r = await s.request(19, body)
    t = r["body"]["topics"][0]
    assert t["errorCode"] == 0, t
    return name, t["topicId"]


async def aproduce(s: Any, tp: Tuple[str, str], value: bytes) -> None:
    for _ in range(60):
        r = await s.request(0, produce_body(tp, value))
        code = r["body"]["responses"][0]["partitionResponses"][0]["errorCode"]
        if code == 0:
            return
        assert code in RETRIABLE, f"Produce: error {code}"
        await asyncio.sleep(0.1)
    pytest.fail("Produce: the partition never took the batch")


async def afetch_all(s: Any, tp: Tuple[str, str], n: int) -> List[bytes]:
    out: List[bytes] = []
    while len(out) < n:
        got = values_of(await s.request(1, fetch_body(tp, len(out))), len(out))
        if not got:
            break
        out += got
    return out


def test_mechanisms(brokers: Dict[str, Launcher]) -> None:
    def run(b: Launcher) -> None:
        for mech in b.info["mechanisms"]:
            for listener in ("SASL_PLAINTEXT", "SASL_SSL"):
                with connect(b, listener, sasl_for(b, mech)) as s:
                    r = s.request(3, META)
                    assert r is not None and len(r["body"]["brokers"]) == 1
                    assert 0 < s.stats()["sessionLifetimeMs"] <= REAUTH_MS
            if mech != "OAUTHBEARER":
                user, password = b.info["users"][mech]
                with pytest.raises(AuthenticationError) as e:
                    connect(b, "SASL_PLAINTEXT", {"mechanism": mech, "username": user, "password": password + "-wrong"})
                assert e.value.error_code == 58 and password not in str(e.value), str(e.value)

        async def a() -> None:
            for mech in ("SCRAM-SHA-256", "OAUTHBEARER"):
                s = await aconnect(b, "SASL_SSL", sasl_for(b, mech, use_async=True))
                r = await s.request(3, META)
                assert r is not None and len(r["body"]["brokers"]) == 1
                await s.close()
            user, password = b.info["users"]["SCRAM-SHA-512"]
            with pytest.raises(AuthenticationError) as e:
                await aconnect(b, "SASL_PLAINTEXT", {"mechanism": "SCRAM-SHA-512", "username": user, "password": "nope"})
            assert e.value.error_code == 58

        asyncio.run(a())
        with pytest.raises(AuthenticationError, match="invalid_token") as e:
            connect(b, "SASL_PLAINTEXT", {"mechanism": "OAUTHBEARER", "token": lambda: unsigned_jwt("kwire-py", -3600)})
        assert e.value.error_code == 58

        def down() -> str:
            raise RuntimeError("identity provider down")

        with pytest.raises(AuthenticationError, match="token callback failed: identity provider down"):
            connect(b, "SASL_PLAINTEXT", {"mechanism": "OAUTHBEARER", "token": down})
        with pytest.raises(AuthenticationError, match="kwire supports PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER"):
            connect(b, "SASL_PLAINTEXT", {"mechanism": "GSSAPI", "username": "u", "password": "p"})

    both(brokers, run)


def test_paused_broker_times_out(brokers: Dict[str, Launcher]) -> None:
    def run(b: Launcher) -> None:
        s = connect(b, "SASL_PLAINTEXT", sasl_for(b, "PLAIN"))

        async def a() -> AsyncSession:
            return await aconnect(b, "SASL_PLAINTEXT", sasl_for(b, "SCRAM-SHA-256"))

        loop = asyncio.new_event_loop()
        try:
            a_s = loop.run_until_complete(a())
            b.command("pause")
            try:
                t0 = time.monotonic()
                with pytest.raises(RequestTimeoutError):
                    s.request(3, META, timeout=0.5)
                took = time.monotonic() - t0
                assert 0.45 <= took < 3, took
                with pytest.raises(RequestTimeoutError):
                    loop.run_until_complete(a_s.request(3, META, timeout=0.5))
            finally:
                b.command("continue")
            r = s.request(3, META, timeout=10)
            assert r is not None and len(r["body"]["brokers"]) == 1
            assert s.stats()["dropped"] == 1 and not s.closed
            r = loop.run_until_complete(a_s.request(3, META, timeout=10))
            assert r is not None and len(r["body"]["brokers"]) == 1
            assert a_s.stats()["dropped"] == 1 and not a_s.closed
            loop.run_until_complete(a_s.close())
        finally:
            s.close()
            loop.close()

    both(brokers, run)


def test_reauth_under_load(brokers: Dict[str, Launcher], report: List[str]) -> None:
    lines: List[str] = []
    reauths: Dict[str, int] = {v: 0 for v in VERSIONS}
    logged_before = {v: int(brokers[v].command(f"count {REAUTH_LOG}")["count"]) for v in VERSIONS}

    def sync_load(b: Launcher) -> None:
        s = connect(b, "SASL_SSL", sasl_for(b, "SCRAM-SHA-512"), request_timeout=10)
        cs = CountingSock(s.sock)
        s.sock = cs
        stop = time.monotonic() + LOAD_S
        n = 0
        while time.monotonic() < stop:
            r = s.request(3, META)
            assert r is not None
            n += 1
            time.sleep(0.01)
        st = s.stats()
        hs, auth = cs.keys.get(17, 0), cs.keys.get(36, 0)
        lines.append(f"Kafka {b.version} Session SCRAM-SHA-512/SASL_SSL: {LOAD_S:.0f} s, {n} requests, none failed; re-authentications {st['reauthentications']}; "
                     f"written after connecting: {hs} SaslHandshake, {auth} SaslAuthenticate; SaslAuthenticate in all {st['saslAuthenticates']}")
        assert st["reauthentications"] >= (5 if LOAD_S >= 30 else int(LOAD_S * 1000 / REAUTH_MS / 2))
        assert hs == st["reauthentications"] and auth == 2 * hs and st["saslAuthenticates"] == 2 * (hs + 1)
        assert not s.closed
        reauths[b.version] += st["reauthentications"]
        s.close()

    async def async_load(b: Launcher) -> None:
        tokens = [0]
        s = await aconnect(b, "SASL_PLAINTEXT", sasl_for(b, "OAUTHBEARER", tokens), request_timeout=10)
        keys = count_async_frames(s)
        tp = await acreate(s)
        stop = time.monotonic() + LOAD_S
        requests = [0]

        async def meta() -> None:
            while time.monotonic() < stop:
                await s.request(3, META)
                requests[0] += 1
                await asyncio.sleep(0.005)

        loaders = [asyncio.ensure_future(meta()) for _ in range(2)]
        n = 0
        while time.monotonic() < stop:
            await aproduce(s, tp, str(n).encode())
            n += 1
            requests[0] += 1
            await asyncio.sleep(0.02)
        await asyncio.gather(*loaders)
        got = await afetch_all(s, tp, n)
        assert got == [str(i).encode() for i in range(n)], f"fetched {len(got)} of {n} records"
        st = s.stats()
        hs, auth = keys.get(17, 0), keys.get(36, 0)
        lines.append(f"Kafka {b.version} AsyncSession OAUTHBEARER/SASL_PLAINTEXT: {LOAD_S:.0f} s, {requests[0]} requests ({n} records), none failed; "
                     f"re-authentications {st['reauthentications']}; written after connecting: {hs} SaslHandshake, {auth} SaslAuthenticate; tokens fetched {tokens[0]}")
        assert st["reauthentications"] >= (5 if LOAD_S >= 30 else int(LOAD_S * 1000 / REAUTH_MS / 2))
        assert hs == st["reauthentications"] and auth == hs and tokens[0] == hs + 1
        assert not s.closed
        reauths[b.version] += st["reauthentications"]
        await s.close()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(len(VERSIONS)) as ex:
            syncs = [loop.run_in_executor(ex, sync_load, brokers[v]) for v in VERSIONS]
            await asyncio.gather(*syncs, *(async_load(brokers[v]) for v in VERSIONS))

    asyncio.run(main())
    for v in VERSIONS:
        logged = int(brokers[v].command(f"count {REAUTH_LOG}")["count"]) - logged_before[v]
        lines.append(f"Kafka {v}: broker log lines {REAUTH_LOG!r} during the run: {logged}; the sessions counted {reauths[v]}")
        assert logged == reauths[v], lines[-1]
    for line in sorted(lines):
        print(line)
    report.extend(sorted(lines))


def test_restart_reconnects(brokers: Dict[str, Launcher], report: List[str]) -> None:
    lines: List[str] = []

    async def run(b: Launcher) -> None:
        host, port = b.addr("SASL_PLAINTEXT")
        r = await ReconnectingAsyncSession.connect(host, port, kwire=K, timeout=60, sasl=sasl_for(b, "SCRAM-SHA-256"), request_timeout=90, reconnect={"initial": 0.1, "maximum": 1.0})
        rs = ReconnectingSession(host, port, kwire=K, timeout=60, sasl=sasl_for(b, "PLAIN"), request_timeout=90, reconnect={"initial": 0.1, "maximum": 1.0})
        try:
            tp = await acreate(r)
            await aproduce(r, tp, b"before")
            first, first_sync = r.session, rs.session
            loop = asyncio.get_running_loop()
            restart = loop.run_in_executor(None, b.command, "restart")
            failures: List[str] = []
            ok = 0
            while not restart.done() or ok == 0 or r.session is first:
                try:
                    await r.request(3, META)
                    if restart.done():
                        ok += 1
                except (ConnectionClosedError, RequestTimeoutError) as e:
                    failures.append(type(e).__name__)
                await asyncio.sleep(0.02)
            await restart
            assert r.reconnects >= 1 and r.session is not first
            assert r.session.stats()["saslAuthenticates"] == 2, "the new connection authenticated with SCRAM"
            await aproduce(r, tp, b"after")
            assert await afetch_all(r.session, tp, 2) == [b"before", b"after"]
            # The blocking wrapper: its connection died with the restart; the next request
            # reconnects (the first one may fail if it was on the dead connection).
            sync_failures = 0
            for _ in range(3):
                try:
                    res = await loop.run_in_executor(None, lambda: rs.request(3, META))
                    assert res is not None
                    break
                except ConnectionClosedError:
                    sync_failures += 1
            assert rs.reconnects == 1 and rs.session is not first_sync and sync_failures <= 1
            lines.append(f"Kafka {b.version} restart: AsyncSession: {len(failures)} requests failed ({', '.join(sorted(set(failures)))}), reconnects {r.reconnects}; "
                         f"Session: {sync_failures} failed, reconnects {rs.reconnects}")
        finally:
            await r.close()
            rs.close()

    async def main() -> None:
        await asyncio.gather(*(run(brokers[v]) for v in VERSIONS))

    asyncio.run(main())
    for line in sorted(lines):
        print(line)
    report.extend(sorted(lines))
