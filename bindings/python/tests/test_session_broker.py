"""Sessions against a real Apache Kafka broker, started once for this module with
conformance/broker/cmd/kwire-broker and always stopped (the fixture's finally): the round
trip the Go connection's tests make. Negotiation (and a forced UNSUPPORTED_VERSION),
CreateTopics, Produce of batches built with encode_records in every compression, Fetch
and exact contents, five requests in flight, counters equal to the socket's bytes, a dead
socket, TLS; with the blocking Session and with AsyncSession.

The release is Kafka 4.4.0, or the BROKER_VERSION of the test module
(test_session_broker_392.py runs these tests against 3.9.2). Needs Go, Java 17 and the
broker's jars (make broker-deps). Without Java or the jars the
tests are skipped (which the suite's guard counts as a failure unless KWIRE_ALLOW_SKIP=1);
with KWIRE_REQUIRE_BROKER=1 (set by make) they fail at once instead.
"""

import asyncio
import base64
import json
import os
import select
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import kwire
from conftest import REPO

K = kwire.default()
# An ApiVersions body: the session fills clientSoftwareName and clientSoftwareVersion
# (kwire-python and the package's version), which Kafka requires from v3 on.
AV: Dict[str, Any] = {}
META = {"topics": [], "allowAutoTopicCreation": False, "includeTopicAuthorizedOperations": False}
# Kafka's retriable error codes (codec/kerr lists them): a new partition electing its leader,
# a topic id not known yet on the broker's metadata, ...
RETRIABLE = {2, 3, 5, 6, 7, 9, 13, 15, 16, 19, 41, 51, 56, 70, 71, 72, 74, 75, 78, 84, 88, 89, 100, 103, 122, 123, 133}


class Broker:
    def __init__(self, info: Dict[str, Any]) -> None:
        self.info = info
        host, port = info["addr"].split(":")
        self.host, self.port = host, int(port)


@pytest.fixture(scope="module")
def broker(request: pytest.FixtureRequest) -> Iterator[Broker]:
    version = str(getattr(request.module, "BROKER_VERSION", "4.4.0"))
    tmp = tempfile.mkdtemp(prefix="kwire-py-broker-")
    proc: Optional["subprocess.Popen[bytes]"] = None
    errlog = open(os.path.join(tmp, "stderr"), "w+b")
    try:
        exe = os.path.join(tmp, "kwire-broker")
        subprocess.run([os.environ.get("GO", "go"), "build", "-o", exe, "./conformance/broker/cmd/kwire-broker"], cwd=REPO, check=True)
        proc = subprocess.Popen([exe, "-version", version], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog)
        assert proc.stdout is not None
        deadline = time.monotonic() + 240
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            ready, _, _ = select.select([proc.stdout], [], [], max(left, 0))
            chunk = os.read(proc.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                code = proc.poll() if ready else None
                if ready and code is None:
                    code = proc.wait(30)
                errlog.seek(0)
                err = errlog.read().decode("utf-8", "replace")
                if code == 3 and os.environ.get("KWIRE_REQUIRE_BROKER") != "1":
                    pytest.skip(f"no Kafka broker (set KWIRE_REQUIRE_BROKER=1 to fail instead): {err}")
                pytest.fail(f"kwire-broker did not serve (exit {code}):\n{err}")
            line += chunk
        info = json.loads(line)
        assert info["version"] == version
        yield Broker(info)
    finally:
        if proc is not None:
            assert proc.stdin is not None
            proc.stdin.close()  # the launcher stops the broker when stdin closes
            try:
                code = proc.wait(90)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
            if code != 0:
                errlog.seek(0)
                print(errlog.read().decode("utf-8", "replace"))
        errlog.close()
        shutil.rmtree(tmp, ignore_errors=True)


_seq = [0]


def create_topic(s: kwire.Session, prefix: str) -> Tuple[str, str]:
    _seq[0] += 1
    name = f"{prefix}-{os.getpid()}-{_seq[0]}"
    r = s.request(19, {"topics": [{"name": name, "numPartitions": 1, "replicationFactor": 1, "assignments": [], "configs": []}], "timeoutMs": 30000, "validateOnly": False})
    assert r is not None
    t = r["body"]["topics"][0]
    assert t["errorCode"] == 0, f"CreateTopics {name}: {t['errorCode']} {t['errorMessage']}"
    assert t["topicId"] and t["topicId"] != "AAAAAAAAAAAAAAAAAAAAAA"
    return name, t["topicId"]


def produce_body(name: str, topic_id: str, batch: bytes) -> Dict[str, Any]:
    return {"transactionalId": None, "acks": -1, "timeoutMs": 30000, "topicData": [{"name": name, "topicId": topic_id, "partitionData": [{"index": 0, "records": batch}]}]}


def produce(s: kwire.Session, tp: Tuple[str, str], records: List[Dict[str, Any]], compression: str) -> int:
    batch = K.encode_records(records, compression=compression)
    for attempt in range(60):
        r = s.request(0, produce_body(tp[0], tp[1], batch))
        assert r is not None
        p = r["body"]["responses"][0]["partitionResponses"][0]
        if p["errorCode"] == 0:
            return int(p["baseOffset"])
        assert p["errorCode"] in RETRIABLE, f"Produce v{r['apiVersion']}: error {p['errorCode']}"
        time.sleep(0.1)
    pytest.fail("Produce: the partition never took the batch")


def fetch_body(tp: Tuple[str, str], offset: int, max_wait_ms: int = 500) -> Dict[str, Any]:
    return {
        "replicaId": -1, "maxWaitMs": max_wait_ms, "minBytes": 1, "maxBytes": 1 << 20, "isolationLevel": 0, "sessionId": 0, "sessionEpoch": -1,
        "topics": [{"topic": tp[0], "topicId": tp[1], "partitions": [{"partition": 0, "currentLeaderEpoch": -1, "fetchOffset": offset, "lastFetchedEpoch": -1, "logStartOffset": -1, "partitionMaxBytes": 1 << 20}]}],
        "forgottenTopicsData": [], "rackId": "",
    }


def records_of(resp: kwire.session.Response, offset: int) -> List[Dict[str, Any]]:
    out = []
    assert resp["body"]["errorCode"] == 0
    for t in resp["body"]["responses"]:
        for p in t["partitions"]:
            assert p["errorCode"] == 0, f"Fetch: error {p['errorCode']}"
            for r in K.decode_records(base64.b64decode(p["records"] or "")):
                if r.offset >= offset and not r.control:
                    out.append({
                        "offset": r.offset, "timestamp": r.timestamp, "compression": r.compression,
                        "key": None if r.key is None else bytes(r.key), "value": None if r.value is None else bytes(r.value),
                        "headers": [(k, None if v is None else bytes(v)) for k, v in r.headers],
                    })
    return out


def fetch(s: kwire.Session, tp: Tuple[str, str], offset: int) -> List[Dict[str, Any]]:
    r = s.request(1, fetch_body(tp, offset))
    assert r is not None
    return records_of(r, offset)


def connect(b: Broker, **kw: Any) -> kwire.Session:
    return kwire.Session.connect(b.host, b.port, kwire=K, timeout=60, **kw)


def kw_max(key: int) -> int:
    return int(K.api(key)["maxVersion"])


def expected_negotiation(av: kwire.session.Response) -> List[int]:
    """ApiVersions at kwire's highest, then at the broker's highest when that is lower."""
    broker_max = next(a["maxVersion"] for a in av["body"]["apiKeys"] if a["apiKey"] == 18)
    return [kw_max(18), broker_max] if broker_max < kw_max(18) else [kw_max(18)]


def test_negotiation(broker: Broker) -> None:
    with connect(broker, client_id="kwire-python-test") as s:
        av = s.request(18, {})  # without the filled fields: INVALID_REQUEST and no apis
        assert av is not None and av["body"]["errorCode"] == 0 and av["apiVersion"] >= 3
        assert len(av["body"]["apiKeys"]) >= 20
        assert s.negotiated and s.negotiation_versions == expected_negotiation(av)
        checked = 0
        for b in av["body"]["apiKeys"]:
            try:
                api = K.api(b["apiKey"])
            except kwire.UnknownAPIError:
                continue
            lo, hi = max(api["minVersion"], b["minVersion"]), min(api["maxVersion"], b["maxVersion"])
            if hi < lo:
                with pytest.raises(kwire.VersionError):
                    s.version_for(b["apiKey"])
                continue
            assert s.version_for(b["apiKey"]) == hi, api["name"]
            checked += 1
        assert checked >= 20
        md = s.request(3, META)
        assert md is not None and md["apiVersion"] == s.version_for(3)
        brokers = md["body"]["brokers"]
        assert [f"{x['host']}:{x['port']}" for x in brokers] == [broker.info["addr"]]


def test_metadata_null_lists_every_topic(broker: Broker) -> None:
    """{"topics": None} asks for every topic, {"topics": []} for none (as the README says)."""
    with connect(broker) as s:
        name, _ = create_topic(s, "py-metadata")
        names: List[str] = []
        for _ in range(50):  # the broker's metadata cache learns the new topic soon after CreateTopics
            every = s.request(3, {"topics": None})
            assert every is not None and every["apiVersion"] >= 1
            names = [t["name"] for t in every["body"]["topics"]]
            if name in names:
                break
            time.sleep(0.1)
        assert name in names
        none = s.request(3, {"topics": []})
        assert none is not None and none["body"]["topics"] == [] and len(none["body"]["brokers"]) == 1


def test_forced_unsupported_version(broker: Broker) -> None:
    above = kw_max(18) + 1
    with connect(broker, bootstrap_version=above) as s:
        av = s.request(18, AV)
        assert av is not None and av["body"]["errorCode"] == 0
        broker_max = next(a["maxVersion"] for a in av["body"]["apiKeys"] if a["apiKey"] == 18)
        assert s.negotiation_versions == [above, min(kw_max(18), broker_max)]


def test_round_trip_every_compression(broker: Broker) -> None:
    with connect(broker) as s:
        tp = create_topic(s, "py-compression")
        want: List[Dict[str, Any]] = []
        ts = 1700000000000
        for ci, comp in enumerate(["none", "gzip", "snappy", "lz4", "zstd"]):
            recs = []
            for i in range(20):
                recs.append({
                    "key": None if i == 3 else f"{comp}-key-{i}".encode(),
                    "value": None if i == 4 else (f"{comp} value {i}; " * (1 + i)).encode(),
                    "timestamp": ts + ci * 100 + i,
                    "headers": [("codec", comp.encode()), ("null", None)],
                })
            assert produce(s, tp, recs, comp) == ci * 20
            want += [{**r, "compression": comp} for r in recs]
        got: List[Dict[str, Any]] = []
        while len(got) < len(want):
            more = fetch(s, tp, len(got))
            assert more, f"fetch from {len(got)} returned nothing"
            got += more
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert g["offset"] == i
            assert (g["compression"], g["timestamp"], g["key"], g["value"]) == (w["compression"], w["timestamp"], w["key"], w["value"]), f"record {i}"
            assert g["headers"] == w["headers"], f"record {i}"


def _complete_frames(b: bytes) -> int:
    n, at = 0, 0
    while at + 4 <= len(b) and at + 4 + struct.unpack(">i", b[at : at + 4])[0] <= len(b):
        at += 4 + struct.unpack(">i", b[at : at + 4])[0]
        n += 1
    return n


def test_five_in_flight_measured(broker: Broker) -> None:
    """Five requests sent before any response is read: the five answers sit complete in
    the socket (seen with MSG_PEEK) while the session has five pending."""
    with connect(broker) as s:
        tp = create_topic(s, "py-inflight")
        produce(s, tp, [{"key": b"k", "value": b"in flight", "timestamp": 1}], "none")
        sent = s.counters()["requestsSent"]
        corrs = [
            s.send(18, AV),
            s.send(3, {**META, "topics": [{"name": tp[0], "topicId": tp[1]}]}),
            s.send(1, fetch_body(tp, 0)),
            s.send(18, AV),
            s.send(3, META),
        ]
        deadline = time.monotonic() + 60
        while _complete_frames(s.sock.recv(1 << 20, socket.MSG_PEEK)) < 5:
            assert time.monotonic() < deadline, "the five answers did not arrive"
            time.sleep(0.05)
        c = s.counters()
        assert c["requestsSent"] - sent == 5 and c["pending"] == 5 and c["responsesReceived"] == sent
        rs = [s.receive(c_) for c_ in reversed(corrs)][::-1]  # in any order
        assert [r["apiKey"] for r in rs] == [18, 3, 1, 18, 3]
        assert [r["body"].get("errorCode", 0) for r in rs] == [0] * 5
        assert records_of(rs[2], 0)[0]["value"] == b"in flight"
        assert s.counters()["pending"] == 0


class CountingSocket:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.written = 0
        self.read = 0

    def sendall(self, b: bytes) -> None:
        self.sock.sendall(b)
        self.written += len(b)

    def recv(self, n: int) -> bytes:
        d = self.sock.recv(n)
        self.read += len(d)
        return d

    def close(self) -> None:
        self.sock.close()


def test_counters_equal_the_bytes_on_the_socket(broker: Broker) -> None:
    cs = CountingSocket(socket.create_connection((broker.host, broker.port), timeout=60))
    s = kwire.Session(cs, kwire=K)
    try:
        s.negotiate()
        tp = create_topic(s, "py-counters")
        produce(s, tp, [{"value": b"counted"}], "gzip")
        fetch(s, tp, 0)
        corrs = [s.send(18, AV) for _ in range(10)]
        for c_ in corrs:
            s.receive(c_)
        c = s.counters()
        assert (c["bytesSent"], c["bytesReceived"]) == (cs.written, cs.read)
        assert c["requestsSent"] == c["responsesReceived"] >= 14
    finally:
        s.close()


def test_dead_socket_fails_every_pending_request(broker: Broker) -> None:
    s = connect(broker)
    tp = create_topic(s, "py-dead")
    produce(s, tp, [{"value": b"x"}], "none")
    a = s.send(1, fetch_body(tp, 1, 10000))  # offset 1: nothing there, the broker waits 10 s
    b = s.send(1, fetch_body(tp, 1, 10000))
    t0 = time.monotonic()
    s.sock.shutdown(socket.SHUT_RDWR)
    for corr in (a, b):
        with pytest.raises(kwire.ConnectionClosedError, match="closed"):
            s.receive(corr)
    assert time.monotonic() - t0 < 5
    with pytest.raises(kwire.ConnectionClosedError):
        s.request(18, AV)
    s.close()


def _tls(broker: Broker) -> Tuple[str, int, ssl.SSLContext]:
    host, port = broker.info["listeners"]["SSL"].split(":")
    ctx = ssl.create_default_context(cadata=broker.info["certPEM"])
    return host, int(port), ctx


def test_tls(broker: Broker) -> None:
    host, port, ctx = _tls(broker)
    with kwire.Session.connect(host, port, kwire=K, ssl_context=ctx, server_hostname="localhost", timeout=60) as s:
        tp = create_topic(s, "py-tls")
        produce(s, tp, [{"key": b"tls", "value": b"over TLS", "timestamp": 5}], "lz4")
        got = fetch(s, tp, 0)
        assert [g["value"] for g in got] == [b"over TLS"]


def test_async_round_trip_pipelined_and_dead_socket(broker: Broker) -> None:
    async def main() -> None:
        host, port, ctx = _tls(broker)
        # Plain and TLS: the same round trip.
        for a in (
            await kwire.AsyncSession.connect(broker.host, broker.port, kwire=K, timeout=60),
            await kwire.AsyncSession.connect(host, port, kwire=K, ssl=ctx, server_hostname="localhost", timeout=60),
        ):
            async with a:
                av = await a.request(18, AV)
                assert av is not None and a.negotiated and a.negotiation_versions == expected_negotiation(av)
                _seq[0] += 1
                name = f"py-async-{os.getpid()}-{_seq[0]}"
                r = await a.request(19, {"topics": [{"name": name, "numPartitions": 1, "replicationFactor": 1, "assignments": [], "configs": []}], "timeoutMs": 30000, "validateOnly": False})
                assert r is not None and r["body"]["topics"][0]["errorCode"] == 0
                tp = (name, r["body"]["topics"][0]["topicId"])
                recs = [{"key": f"k{i}".encode(), "value": f"async {i}".encode(), "timestamp": 1000 + i, "headers": [("h", b"v")]} for i in range(10)]
                batch = K.encode_records(recs, compression="zstd")
                for _ in range(60):
                    pr = await a.request(0, produce_body(tp[0], tp[1], batch))
                    assert pr is not None
                    code = pr["body"]["responses"][0]["partitionResponses"][0]["errorCode"]
                    if code == 0:
                        break
                    assert code in RETRIABLE
                    await asyncio.sleep(0.1)
                # Five at once on the one connection, answered in order.
                before = a.counters()["requestsSent"]
                tasks = [asyncio.ensure_future(a.request(1, fetch_body(tp, 0))) for _ in range(5)]
                await asyncio.sleep(0)
                assert a.counters()["requestsSent"] - before == 5
                rs = await asyncio.gather(*tasks)
                assert [r_["correlationId"] for r_ in rs if r_ is not None] == sorted(r_["correlationId"] for r_ in rs if r_ is not None)
                for r_ in rs:
                    assert r_ is not None
                    got = records_of(r_, 0)
                    assert [(g["key"], g["value"], g["timestamp"], g["headers"], g["compression"]) for g in got] == [
                        (x["key"], x["value"], x["timestamp"], [("h", b"v")], "zstd") for x in recs
                    ]
        # A dead socket: every pending request fails with ConnectionClosedError at once.
        a = await kwire.AsyncSession.connect(broker.host, broker.port, kwire=K, timeout=60)
        tasks = [asyncio.ensure_future(a.request(1, fetch_body(tp, len(recs), 10000))) for _ in range(2)]  # at the end: the broker waits
        await asyncio.sleep(0.2)
        t0 = time.monotonic()
        a.writer.transport.abort()
        for res in await asyncio.gather(*tasks, return_exceptions=True):
            assert isinstance(res, kwire.ConnectionClosedError), res
        assert time.monotonic() - t0 < 5
        with pytest.raises(kwire.ConnectionClosedError):
            await a.request(18, AV)
        await a.close()

    asyncio.run(main())


def test_sasl_plain_and_a_wrong_password(broker: Broker) -> None:
    """SASL is two requests the caller sends through the session: SaslHandshake, then
    SaslAuthenticate with the mechanism's bytes (PLAIN: NUL user NUL password)."""
    host, port = broker.info["listeners"]["SASL_PLAINTEXT"].split(":")
    user, password = broker.info["users"]["PLAIN"]

    def login(pw: str) -> Tuple[kwire.Session, kwire.session.Response]:
        s = kwire.Session.connect(host, int(port), kwire=K, timeout=60)
        hs = s.request(17, {"mechanism": "PLAIN"})
        assert hs is not None and hs["body"]["errorCode"] == 0 and "PLAIN" in hs["body"]["mechanisms"]
        r = s.request(36, {"authBytes": b"\0" + user.encode() + b"\0" + pw.encode()})
        assert r is not None
        return s, r

    s, ok = login(password)
    with s:
        assert ok["body"]["errorCode"] == 0, ok["body"]["errorMessage"]
        md = s.request(3, META)
        assert md is not None and len(md["body"]["brokers"]) == 1
    bad, refused = login(password + "x")
    with bad:
        assert refused["body"]["errorCode"] == 58  # SASL_AUTHENTICATION_FAILED
        assert "uthentication failed" in refused["body"]["errorMessage"]
        with pytest.raises(kwire.ConnectionClosedError):  # the broker closed the connection
            bad.request(18, AV)
