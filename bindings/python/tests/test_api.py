"""The public API over the ABI: frames, peek, messages, catalogue, errors, instances."""

import base64
import json
import math
import os
import struct
import threading
from typing import Any, Dict, List

import pytest
import wasmtime

import kwire
from kwire import messages
from conftest import EXAMPLES

PRODUCE = (EXAMPLES / "produce-request.bin").read_bytes()
FETCH = (EXAMPLES / "fetch-response.bin").read_bytes()


# ---- module, version, catalogue ------------------------------------------------------------


def test_the_package_ships_its_module() -> None:
    if os.environ.get("KWIRE_WASM"):
        pytest.fail("KWIRE_WASM is set: this run would not test the kwire.wasm inside the package")
    path = kwire.wasm_path()
    assert os.path.dirname(path) == os.path.dirname(kwire.__file__)
    with open(path, "rb") as f:
        assert f.read(4) == b"\0asm"


def test_abi_version(kw: kwire.Kwire) -> None:
    v = kw.abi_version()
    assert v >> 16 == 1
    assert kwire.abi_version() == v


def test_catalogue(kw: kwire.Kwire, catalogue: kwire.Catalogue) -> None:
    assert catalogue["abiVersion"].startswith("1.")
    apis = {a["apiKey"]: a for a in catalogue["apis"]}
    assert apis[0]["name"] == "Produce" and apis[0]["request"] == "ProduceRequest"
    assert apis[1]["response"] == "FetchResponse" and apis[1]["flexibleMin"] == 12
    assert [a["apiKey"] for a in catalogue["apis"]] == sorted(apis)
    names = [m["name"] for m in catalogue["messages"]]
    assert names == sorted(names)
    kinds = {m["name"]: m["kind"] for m in catalogue["messages"]}
    assert kinds["RequestHeader"] == "header" and kinds["ProduceRequest"] == "request"
    assert kw.api(18)["name"] == "ApiVersions"
    with pytest.raises(kwire.UnknownAPIError):
        kw.api(30000)
    # Every message the catalogue names has a generated TypedDict, and the other way round.
    assert set(names) == set(messages.MESSAGES)
    # A fresh copy each call: a caller's change does not leak into the next one.
    catalogue_copy = kw.api_catalogue()
    catalogue_copy["apis"].clear()
    assert kw.api_catalogue()["apis"]


def test_header_versions(kw: kwire.Kwire) -> None:
    assert kw.header_versions(0, 9) == (2, 1)
    assert kw.header_versions(0, 8) == (1, 0)
    assert kw.header_versions(18, 3) == (2, 0)  # ApiVersions responses always use header v0
    assert kw.header_versions(7, 0) == (0, 0)  # ControlledShutdown v0 uses request header v0
    with pytest.raises(kwire.UnknownAPIError) as e:
        kw.header_versions(30000, 0)
    assert e.value.status == -5 and e.value.category == "unknown_api"
    with pytest.raises(kwire.VersionError) as e2:
        kw.header_versions(0, 999)
    assert e2.value.status == -6


# ---- frames ----------------------------------------------------------------------------------


def test_request_frame(kw: kwire.Kwire) -> None:
    f = kw.decode_request_frame(PRODUCE)
    assert (f["apiKey"], f["apiVersion"], f["headerVersion"]) == (0, 9, 2)
    assert f["header"]["clientId"] == "kwire-example" and f["header"]["correlationId"] == 7
    p = f["body"]["topicData"][0]["partitionData"][0]
    assert f["body"]["topicData"][0]["name"] == "orders" and p["index"] == 0
    recs = kw.decode_records(base64.b64decode(p["records"]))
    assert [bytes(r.key or b"") for r in recs] == [b"key-0", b"key-1"]
    assert kw.encode_request_frame(f) == PRODUCE
    assert kw.encode_request_frame({"header": f["header"], "body": f["body"]}) == PRODUCE
    assert kwire.decode_request_frame(bytearray(PRODUCE)) == f
    assert json.loads(kw.decode_request_frame_json(memoryview(PRODUCE))) == f


def test_response_frame(kw: kwire.Kwire) -> None:
    f = kw.decode_response_frame(FETCH, 1, 12)
    assert (f["apiKey"], f["apiVersion"], f["headerVersion"]) == (1, 12, 1)
    assert f["header"]["correlationId"] == 8
    parts = [p for t in f["body"]["responses"] for p in t["partitions"]]
    assert len(parts) == 4
    comps = [kw.decode_records(base64.b64decode(p["records"]))[0].compression for p in parts]
    assert comps == ["gzip", "snappy", "lz4", "zstd"]
    assert kw.encode_response_frame(f, 1, 12) == FETCH
    assert kwire.encode_response_frame(f, 1, 12) == FETCH
    with pytest.raises(kwire.JSONError):
        kw.encode_response_frame(f, 1, 11)  # the envelope says v12


def test_frame_size_must_match(kw: kwire.Kwire) -> None:
    with pytest.raises(kwire.DecodeError) as e:
        kw.decode_request_frame(PRODUCE[:-1])
    assert e.value.status == -2 and e.value.text
    with pytest.raises(kwire.DecodeError):
        kw.decode_request_frame(PRODUCE + b"\0")


def test_frame_limit(kw: kwire.Kwire) -> None:
    big = struct.pack(">i", 100 * 1024 * 1024 + 1) + PRODUCE[4:]
    with pytest.raises(kwire.TooLargeError) as e:
        kw.decode_request_frame(big)
    assert e.value.status == -7
    with pytest.raises(kwire.TooLargeError):
        kw.peek_request_header(big)


def test_peek(kw: kwire.Kwire) -> None:
    p = kw.peek_request_header(PRODUCE)
    assert p == kwire.PeekedHeader(len(PRODUCE) - 4, 0, 9, 7, 2, "kwire-example", 14, 13)
    assert PRODUCE[p.client_id_offset : p.client_id_offset + p.client_id_length] == b"kwire-example"
    # The first bytes of a frame are enough.
    assert kwire.peek_request_header(PRODUCE[:27]) == p
    with pytest.raises(kwire.DecodeError):
        kw.peek_request_header(PRODUCE[:26])  # the client id is cut
    with pytest.raises(kwire.DecodeError):
        kw.peek_request_header(PRODUCE[:11])
    # Versions the api does not have pass through (a proxy forwards them).
    odd = PRODUCE[:6] + struct.pack(">h", 999) + PRODUCE[8:27]
    assert kw.peek_request_header(odd).api_version == 999


# ---- message bodies -----------------------------------------------------------------------


def test_message_round_trip_and_typed_name(kw: kwire.Kwire) -> None:
    body: messages.MetadataRequest = {"topics": [{"name": "a"}, {"name": "b"}], "allowAutoTopicCreation": False}
    b = kw.encode_message("MetadataRequest", 9, body)
    d = kw.decode_message(messages.MetadataRequest, 9, b)
    assert [t["name"] for t in d["topics"]] == ["a", "b"]
    assert d["allowAutoTopicCreation"] is False
    assert kw.encode_message(messages.MetadataRequest, 9, d) == b
    assert kwire.decode_message("MetadataRequest", 9, b) == d
    assert kwire.encode_message("MetadataRequest", 9, d) == b


def test_int64_round_trips(kw: kwire.Kwire) -> None:
    pid = 2**62 + 1
    b = kw.encode_message("InitProducerIdResponse", 4, {"producerId": pid, "producerEpoch": 3})
    d = kw.decode_message(messages.InitProducerIdResponse, 4, b)
    assert d["producerId"] == "4611686018427387905" and int(d["producerId"]) == pid  # JSON form: exact string
    assert kw.encode_message("InitProducerIdResponse", 4, d) == b  # the string goes back in
    assert struct.unpack_from(">q", b, 6)[0] == pid  # throttle(4) errorCode(2) then the int64
    with pytest.raises(kwire.JSONError):
        kw.encode_message("InitProducerIdResponse", 4, {"producerId": 2**63})


def test_bytes_fields_take_bytes(kw: kwire.Kwire) -> None:
    for value in (b"\x00\xffsecret", bytearray(b"\x00\xffsecret"), memoryview(b"\x00\xffsecret")):
        b = kw.encode_message("SaslAuthenticateRequest", 2, {"authBytes": value})
        d = kw.decode_message("SaslAuthenticateRequest", 2, b)
        assert base64.b64decode(d["authBytes"]) == b"\x00\xffsecret"
    # Records straight from encode_records into a Produce request.
    recs = kw.encode_records([{"key": b"k", "value": b"v", "timestamp": 1}])
    frame = kw.encode_request_frame(
        {
            "header": {"requestApiKey": 0, "requestApiVersion": 9, "correlationId": 1, "clientId": "t"},
            "body": {"acks": -1, "timeoutMs": 1000, "topicData": [{"name": "t", "partitionData": [{"index": 0, "records": recs}]}]},
        }
    )
    f = kw.decode_request_frame(frame)
    assert base64.b64decode(f["body"]["topicData"][0]["partitionData"][0]["records"]) == recs


def test_float64_specials(kw: kwire.Kwire) -> None:
    ops = [{"key": "a", "value": math.nan, "remove": False}, {"key": "b", "value": -math.inf}, {"key": "c", "value": 0.1}]
    b = kw.encode_message("AlterClientQuotasRequest", 1, {"entries": [{"entity": [], "ops": ops}]})
    d = kw.decode_message(messages.AlterClientQuotasRequest, 1, b)
    assert [o["value"] for o in d["entries"][0]["ops"]] == ["NaN", "-Infinity", 0.1]


def test_negative_zero_survives_python_values(kw: kwire.Kwire) -> None:
    body = {"entries": [{"entity": [], "ops": [{"key": "a", "value": -0.0}, {"key": "b", "value": 0.0}]}]}
    b = kw.encode_message("AlterClientQuotasRequest", 1, body)
    d = kw.decode_message(messages.AlterClientQuotasRequest, 1, b)
    values = [o["value"] for o in d["entries"][0]["ops"]]
    assert [math.copysign(1, float(v)) for v in values] == [-1.0, 1.0]
    assert kw.encode_message("AlterClientQuotasRequest", 1, d) == b
    assert kwire.loads(b'{"a":-0,"b":[0,-0],"c":"x:-0,"}') == {"a": -0.0, "b": [0, -0.0], "c": "x:-0,"}


def test_unknown_tagged_fields_survive(kw: kwire.Kwire) -> None:
    body = {"topics": [], "_unknownTaggedFields": [{"tag": 100, "data": base64.b64encode(b"\x01\x02").decode()}]}
    b = kw.encode_message("MetadataRequest", 12, body)
    d = kw.decode_message("MetadataRequest", 12, b)
    assert d["_unknownTaggedFields"] == body["_unknownTaggedFields"]
    assert kw.encode_message("MetadataRequest", 12, d) == b


# ---- errors --------------------------------------------------------------------------------


def test_decode_error_carries_status_text_path_offset(kw: kwire.Kwire) -> None:
    with pytest.raises(kwire.DecodeError) as e:
        kw.decode_message("ProduceRequest", 9, b"\x00\x01")
    err = e.value
    assert err.status == -2 and err.category == "decode"
    assert err.message_name == "ProduceRequest" and err.version == 9
    assert err.path == "acks" and err.offset == 1
    # .message is the deprecated alias of message_name
    with pytest.warns(DeprecationWarning, match="message_name"):
        assert err.message == "ProduceRequest"
    assert kwire.KwireError(-2, "t").message_name is None
    assert "ProduceRequest" in err.text and "acks" in err.text
    assert "status -2" in str(err) and err.details["status"] == -2
    assert isinstance(err, kwire.KwireError) and isinstance(err, ValueError)


# ---- small things a first user runs into ---------------------------------------------------


def test_decode_records_takes_the_base64_that_decode_request_frame_gives(kw: kwire.Kwire) -> None:
    f = kw.decode_request_frame(PRODUCE)
    text = f["body"]["topicData"][0]["partitionData"][0]["records"]
    assert isinstance(text, str)
    want = [(r.offset, bytes(r.key or b""), bytes(r.value or b"")) for r in kw.decode_records(base64.b64decode(text))]
    assert want and [(r.offset, bytes(r.key or b""), bytes(r.value or b"")) for r in kw.decode_records(text)] == want
    assert [(r.offset, bytes(r.key or b""), bytes(r.value or b"")) for r in kwire.decode_records(text)] == want
    assert kw.decode_records_dict(text) == kw.decode_records_dict(base64.b64decode(text))
    with pytest.raises(kwire.ArgError, match="base64"):
        kw.decode_records("not base64!")


def test_headers_print_their_bytes(kw: kwire.Kwire) -> None:
    b = kw.encode_records([{"key": b"k", "value": b"v", "headers": [("h", b"x"), ("n", None), ("\u00e9", b"\xff")]}])
    r = kw.decode_records(b)[0]
    assert repr(r.headers) == "[Header('h', b'x'), Header('n', None), Header('\u00e9', b'\\xff')]"
    assert "<memory" not in repr(r.raw_headers()) and repr(r.raw_headers()[0]) == "RawHeader(b'h', b'x')"
    assert "<memory" not in repr(r) and "headers=[('h', b'x'), ('n', None)" in repr(r)
    (k, v), h = r.headers[0], r.headers[0]
    assert (k, bytes(v or b"")) == (h.key, b"x") and isinstance(h, tuple) and h == ("h", v)
    assert isinstance(r.headers[0], kwire.Header) and isinstance(r.raw_headers()[0], kwire.RawHeader)


def test_the_package_exports_its_api_and_no_typing_names() -> None:
    public = {n for n in dir(kwire) if not n.startswith("_")}
    for typing_name in ("Any", "Dict", "Iterable", "Mapping", "Tuple", "Type", "TypeVar", "Union", "overload", "T"):
        assert typing_name not in public, typing_name
    modules = {n for n in public if type(getattr(kwire, n)).__name__ == "module"}
    # kwire.messages, kwire.constants (ApiKey, ErrorCode), and the session module behind kwire.Session
    assert modules == {"constants", "messages", "session"}
    assert public - modules - {"__version__"} == set(kwire.__all__) - {"messages", "constants"}
    assert len(kwire.__all__) == len(set(kwire.__all__))
    ns: Dict[str, Any] = {}
    exec("from kwire import *", ns)
    assert set(ns) - {"__builtins__"} == set(kwire.__all__)


# An all-topics MetadataRequest v13 as librdkafka 2.16 sends it: size 25, api key 3,
# version 13, correlation id 9, client id "rdkafka", header tags; body: topics null,
# allowAutoTopicCreation true, includeTopicAuthorizedOperations false, tags; then 3 bytes
# that Kafka's broker ignores.
METADATA_V13_TRAILING = bytes.fromhex("000000190003000d00000009000772646b61666b610000010000000102")
# A MetadataResponse v13 frame (empty) with one extra byte after its body (size 20).
METADATA_RESPONSE_V13_EXTRA = bytes.fromhex("000000140000000000000000000100ffffffff0100000000")


def test_trailing_bytes(kw: kwire.Kwire) -> None:
    """Request bodies keep bytes after the body (as Kafka's broker accepts them) and show
    them as "_trailingBytes" (base64) at the end of the body; re-encoding gives the same
    bytes. Responses stay strict."""
    b = kw.encode_message("MetadataRequest", 9, {"topics": []})
    m = kw.decode_message("MetadataRequest", 9, b + b"\0")
    assert m["_trailingBytes"] == "AA=="
    assert list(m)[-1] == "_trailingBytes"
    assert kw.encode_message("MetadataRequest", 9, m) == b + b"\0"
    # Without extra bytes there is no such key.
    assert "_trailingBytes" not in kw.decode_message("MetadataRequest", 9, b)
    # A response body is refused, naming the offset of the extra byte.
    r = kw.encode_message("MetadataResponse", 9, {"brokers": [], "topics": []})
    with pytest.raises(kwire.DecodeError) as e:
        kw.decode_message("MetadataResponse", 9, r + b"\0")
    assert e.value.offset == len(r) and "trailing bytes" in e.value.text


def test_interop_request_frame_with_trailing_bytes(kw: kwire.Kwire) -> None:
    f = kw.decode_request_frame(METADATA_V13_TRAILING)
    assert (f["apiKey"], f["apiVersion"], f["headerVersion"]) == (3, 13, 2)
    assert f["header"]["correlationId"] == 9 and f["header"]["clientId"] == "rdkafka"
    body = f["body"]
    assert body["topics"] is None
    assert body["_trailingBytes"] == "AAEC"
    assert list(body)[-1] == "_trailingBytes"
    assert kw.encode_request_frame(f) == METADATA_V13_TRAILING
    text = kw.decode_request_frame_json(METADATA_V13_TRAILING)
    assert text.endswith(b',"_trailingBytes":"AAEC"}}')
    assert kw.encode_request_frame_json(text) == METADATA_V13_TRAILING
    # The bytes are part of what re-encodes: other bytes give another frame.
    f["body"]["_trailingBytes"] = "AAED"
    assert kw.encode_request_frame(f) == METADATA_V13_TRAILING[:-1] + b"\x03"
    peek = kw.peek_request_header(METADATA_V13_TRAILING)
    assert peek.frame_size == 25 and peek.api_key == 3 and peek.client_id == "rdkafka"
    # A response frame with an extra byte is still refused.
    with pytest.raises(kwire.DecodeError) as e:
        kw.decode_response_frame(METADATA_RESPONSE_V13_EXTRA, 3, 13)
    assert "trailing bytes" in e.value.text and e.value.offset == 23
    ok = struct.pack(">i", 19) + METADATA_RESPONSE_V13_EXTRA[4:-1]
    assert "_trailingBytes" not in kw.decode_response_frame(ok, 3, 13)["body"]


def test_json_error_names_the_path(kw: kwire.Kwire) -> None:
    with pytest.raises(kwire.JSONError) as e:
        kw.encode_message("MetadataRequest", 9, {"topics": [{"name": "a", "nope": 1}]})
    assert e.value.status == -4 and e.value.path is not None and "topics[0]" in e.value.path
    with pytest.raises(kwire.JSONError):
        kw.encode_message_json("MetadataRequest", 9, '{"topics": [')
    with pytest.raises(kwire.JSONError):
        kw.encode_message_json("MetadataRequest", 9, '{"topics": [], "topics": []}')  # duplicate key


def test_encode_error(kw: kwire.Kwire) -> None:
    # A non-default value of a field that version 3 lacks (not ignorable).
    with pytest.raises(kwire.EncodeError) as e:
        kw.encode_message("MetadataRequest", 3, {"allowAutoTopicCreation": False})
    assert e.value.status == -3 and e.value.path == "allowAutoTopicCreation"
    assert "MetadataRequest v3" in e.value.text
    # The default value is fine there.
    assert kw.encode_message("MetadataRequest", 3, {"allowAutoTopicCreation": True})


def test_unknown_message_and_version(kw: kwire.Kwire) -> None:
    with pytest.raises(kwire.UnknownAPIError):
        kw.decode_message("NoSuchRequest", 0, b"")
    with pytest.raises(kwire.VersionError):
        kw.decode_message("ProduceRequest", 999, b"")
    with pytest.raises(kwire.ArgError):
        kw.decode_message("ProduceRequest", 2**40, b"")  # does not fit an i32: refused before the call
    with pytest.raises(TypeError):
        kw.decode_message(42, 0, b"")  # type: ignore[call-overload]


def test_unknown_status_is_a_plain_kwire_error() -> None:
    from kwire._errors import error_for

    e = error_for(-77, "future", {"category": "future"})
    assert type(e) is kwire.KwireError and e.status == -77 and e.category == "future"


def test_last_error_is_cleared(kw: kwire.Kwire) -> None:
    with pytest.raises(kwire.DecodeError):
        kw.decode_message("ProduceRequest", 9, b"")
    assert kw.decode_message("MetadataRequest", 9, kw.encode_message("MetadataRequest", 9, {})) is not None


# ---- instances, memory, threads ------------------------------------------------------------


def test_large_inputs_and_outputs(kw: kwire.Kwire) -> None:
    value = os.urandom(8 << 20)  # above the reused input buffer's size
    recs = kw.encode_records([{"value": value}])
    t = kw.decode_records(recs)
    assert bytes(t[0].value or b"") == value
    # The input buffer is kept for reuse (the module's memory never shrinks): another
    # input of that size goes into the same buffer instead of a new one.
    at, cap = kw._inst._in, kw._inst._in_cap
    assert cap >= len(recs)
    other = kw.encode_records([{"value": value[::-1]}])
    assert bytes(kw.decode_records(other)[0].value or b"") == value[::-1]
    assert (kw._inst._in, kw._inst._in_cap) == (at, cap)
    assert len(kw.decode_records(kw.encode_records([{"value": b"small"}]))) == 1


def test_trap_replaces_the_instance(kw: kwire.Kwire) -> None:
    k = kwire.Kwire()
    inst = k._inst
    real = inst._fns["kw_decode_message"]

    def trapping(store: Any, *args: Any) -> int:
        raise wasmtime.Trap("unreachable")

    inst._fast.pop("kw_decode_message", None)  # through the checked call, which we can stub
    inst._fns["kw_decode_message"] = trapping  # type: ignore[assignment]
    with pytest.raises(kwire.InternalError) as e:
        k.decode_message("MetadataRequest", 9, b"\0\0\0\0\0")
    assert "replaced" in e.value.text
    assert inst._fns["kw_decode_message"] is not real and inst._fns["kw_decode_message"] is not trapping
    b = k.encode_message("MetadataRequest", 9, {"topics": []})
    assert k.decode_message("MetadataRequest", 9, b)["topics"] == []


def test_instances_are_independent() -> None:
    a, b = kwire.Kwire(), kwire.Kwire()
    with pytest.raises(kwire.DecodeError):
        a.decode_message("ProduceRequest", 9, b"")
    assert b.decode_request_frame(PRODUCE)["apiKey"] == 0


def test_threads_share_an_instance_safely() -> None:
    k = kwire.default()
    errors: List[BaseException] = []
    results: Dict[int, int] = {}

    def work(n: int) -> None:
        try:
            for i in range(40):
                recs = k.encode_records([{"value": f"{n}-{i}".encode()}], base_offset=i)
                t = k.decode_records(recs)
                assert bytes(t[0].value or b"") == f"{n}-{i}".encode() and t[0].offset == i
                assert k.decode_request_frame(PRODUCE)["header"]["correlationId"] == 7
            results[n] = i
        except BaseException as e:  # reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    assert len(results) == 6


def test_memory_stays_bounded(kw: kwire.Kwire) -> None:
    """Thousands of calls do not grow the module's memory without bound."""
    k = kwire.Kwire()
    for _ in range(200):
        k.decode_response_frame(FETCH, 1, 12)
    mem = k._inst._mem.data_len(k._inst._store)
    for _ in range(3000):
        k.decode_response_frame(FETCH, 1, 12)
        with pytest.raises(kwire.DecodeError):
            k.decode_message("ProduceRequest", 9, b"\0")
    assert k._inst._mem.data_len(k._inst._store) <= mem + (16 << 20)


def test_checked_and_fast_calls_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = kwire.Kwire()
    assert "kw_decode_request_frame" in fast._inst._fast  # wasmtime-py offers the raw call here
    monkeypatch.setenv("KWIRE_CHECKED_CALLS", "1")
    checked = kwire.Kwire()
    assert not checked._inst._fast
    for k in (fast, checked):
        assert k.decode_request_frame(PRODUCE)["header"]["correlationId"] == 7
        assert k.peek_request_header(PRODUCE).client_id == "kwire-example"
        assert k.header_versions(0, 9) == (2, 1)
        with pytest.raises(kwire.DecodeError) as e:
            k.decode_message("ProduceRequest", 9, b"\x00\x01")
        assert e.value.offset == 1
    assert fast.encode_response_frame(fast.decode_response_frame(FETCH, 1, 12), 1, 12) == checked.encode_response_frame(
        checked.decode_response_frame(FETCH, 1, 12), 1, 12
    )


def test_go_runtime_environment(capfd: pytest.CaptureFixture[str]) -> None:
    k = kwire.Kwire(env={"GOGC": "400"})
    assert k.decode_request_frame(PRODUCE)["apiKey"] == 0
    # GODEBUG=gctrace=1 makes the module's Go runtime print a line per collection on
    # stderr: GOGC=1 collects constantly, GOGC=off never, which shows both settings
    # reached its runtime.
    recs = k.encode_records([{"value": b"x" * 1000}] * 200)
    capfd.readouterr()
    traced = {}
    for gogc in ("1", "off"):
        t = kwire.Kwire(env={"GOGC": gogc, "GODEBUG": "gctrace=1"})
        for _ in range(200):
            t.decode_records_json(recs)
        traced[gogc] = sum(1 for line in capfd.readouterr().err.splitlines() if line.startswith("gc "))
    assert traced["1"] >= 2 and traced["off"] == 0, traced


def test_fast_start_compiles_with_winch_then_caches_cranelift(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty cache: the first process compiles with Winch (cached too) and upgrades to
    Cranelift in a background thread; the next process loads the Cranelift entry."""
    from kwire import _runtime

    monkeypatch.setenv("KWIRE_CACHE_DIR", str(tmp_path))
    path = kwire.wasm_path()
    if _runtime._winch_engine() is None:
        pytest.fail("this wasmtime cannot be configured for Winch: the fast start is not tested")
    c = _runtime._Compiled(path)
    assert c.compiler == "winch" and not c.from_cache and c.upgrade is not None
    # The Winch-compiled module works like the other.
    monkeypatch.setitem(_runtime._compiled, os.path.abspath(path), c)
    k = kwire.Kwire(path)
    assert k.decode_request_frame(PRODUCE)["header"]["clientId"] == "kwire-example"
    assert k._inst._compiled is c
    c.upgrade.join(timeout=600)
    assert not c.upgrade.is_alive()
    names = sorted(os.listdir(tmp_path))
    assert [n for n in names if n.endswith(".cwasm")] == [os.path.basename(c._cache_file())], names
    again = _runtime._Compiled(path)
    assert again.compiler == "cranelift" and again.from_cache and again.upgrade is None
    # KWIRE_COMPILER=cranelift never uses Winch; a bad value is refused.
    monkeypatch.setenv("KWIRE_CACHE_DIR", str(tmp_path / "other"))
    monkeypatch.setenv("KWIRE_COMPILER", "cranelift")
    plain = _runtime._Compiled(path)
    assert plain.compiler == "cranelift" and plain.upgrade is None
    monkeypatch.setenv("KWIRE_COMPILER", "fast")
    with pytest.raises(ValueError):
        _runtime._Compiled(path)
