"""What a new user meets first: Kafka's verdict on a Produce request's partitions, the
version hint of a response decoded at the wrong version, "did you mean", named
constants, text accessors, base64 text for decode_records, and errors that name what failed."""

from typing import Dict

import pytest

import kwire
from conftest import REPO
from kwire import ApiKey, ErrorCode


def _frames() -> Dict[str, bytes]:
    # The frames every binding's tests share (abi/testdata/frames.txt, written by the Go tests).
    out = {}
    for line in (REPO / "abi" / "testdata" / "frames.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, hexed = line.split(" ")
            out[name] = bytes.fromhex(hexed)
    return out


FRAMES = _frames()
PRODUCE = FRAMES["produce-v9-invalid-partitions"]
FETCH = FRAMES["fetch-v12-partial-batch"]


@pytest.mark.parametrize("fallback", [False, True])
def test_decode_produce_reports_the_partitions_kafka_refuses(kw: kwire.Kwire, fallback: bool) -> None:
    f = kw.decode_produce(PRODUCE, fallback=fallback)
    got = [(p.topic, p.partition, p.invalid["errorCode"] if p.invalid else 0, len(p.records)) for p in f["partitions"]]
    assert got == [
        ("events", 0, 0, 2),  # one complete batch
        ("events", 1, ErrorCode.INVALID_RECORD, 0),  # a batch cut short
        ("events", 2, ErrorCode.INVALID_RECORD, 0),  # no batch
        ("events", 3, ErrorCode.INVALID_RECORD, 2),  # two batches
        ("events", 4, ErrorCode.INVALID_RECORD, 1),  # a magic 1 message set at v9
    ]
    bad = f["invalidPartitions"]
    assert [(b["topic"], b["partition"], b["error"]) for b in bad] == [("events", i, "INVALID_RECORD") for i in (1, 2, 3, 4)]
    assert "found none complete" in bad[0]["reason"]
    assert "exactly one record batch" in bad[2]["reason"]
    assert "found magic 1" in bad[3]["reason"]
    assert f["partitions"][1].records.skipped_bytes > 0
    assert f["body"]["topicData"][0]["partitionData"][1]["records"].invalid["errorCode"] == 87
    assert f["partitions"][0].records.invalid is None


@pytest.mark.parametrize("fallback", [False, True])
def test_a_fetch_response_with_a_partial_trailing_batch_decodes(kw: kwire.Kwire, fallback: bool) -> None:
    f = kw.decode_fetch(FETCH, 12, fallback=fallback)
    (p,) = f["partitions"]
    assert len(p.records) == 2 and p.records.skipped_bytes > 0 and p.invalid is None
    assert [r.value_text() for r in p.records] == ["f-value-0", "f-value-1"]
    assert [r.key_text() for r in p.records] == ["f", "f"]


def test_a_response_decoded_at_the_wrong_version_names_the_version(kw: kwire.Kwire) -> None:
    calls = [
        lambda: kw.decode_response_frame(FETCH, 1, 11),
        lambda: kw.decode_fetch(FETCH, 11),
        lambda: kw.decode_fetch(FETCH, 11, fallback=True),
    ]
    for call in calls:
        with pytest.raises(kwire.DecodeError) as ei:
            call()
        e = ei.value
        assert e.hint == "the bytes decode as FetchResponse v12: was the request v12?"
        assert e.hint_version == 12
        assert e.text.endswith("; the bytes decode as FetchResponse v12: was the request v12?")


def test_an_unknown_message_name_gets_a_suggestion(kw: kwire.Kwire) -> None:
    with pytest.raises(kwire.UnknownAPIError, match="did you mean FetchResponse\\?"):
        kw.decode_message("FetchRespons", 4, b"")


def test_an_encode_at_a_missing_version_names_message_and_version(kw: kwire.Kwire) -> None:
    header = {"requestApiKey": 3, "requestApiVersion": 99, "correlationId": 1, "clientId": "c"}
    with pytest.raises(kwire.VersionError) as ei:
        kw.encode_request_frame({"header": header, "body": {}})
    assert ei.value.message_name == "MetadataRequest" and ei.value.version == 99
    with pytest.raises(DeprecationWarning):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ei.value.message


def test_named_constants(kw: kwire.Kwire) -> None:
    assert ApiKey.PRODUCE == 0 and ApiKey.FETCH == 1 and ApiKey(18).name == "API_VERSIONS"
    assert ApiKey.LIST_OFFSETS.api_name == "ListOffsets"
    assert ErrorCode.UNKNOWN_TOPIC_OR_PARTITION == 3 and ErrorCode(87).name == "INVALID_RECORD"
    assert ErrorCode.NOT_LEADER_OR_FOLLOWER.retriable and not ErrorCode.INVALID_RECORD.retriable
    for a in kw.api_catalogue()["apis"]:
        assert ApiKey(a["apiKey"]) == a["apiKey"]  # every api key of the module has a name


def test_decode_records_takes_the_base64_text_of_a_decoded_frame(kw: kwire.Kwire) -> None:
    f = kw.decode_response_frame(FETCH, 1, 12)
    text = f["body"]["responses"][0]["partitions"][0]["records"]
    assert isinstance(text, str)
    t = kw.decode_records(text)
    assert len(t) == 2 and t.skipped_bytes > 0
    assert repr(t[0].headers) == "[]"


def test_a_records_error_on_the_per_partition_path_names_topic_and_partition(kw: kwire.Kwire) -> None:
    bad = bytearray(FETCH)
    bad[bad.index(b"f-value-0")] ^= 0xFF  # the first batch's CRC no longer matches
    with pytest.raises(kwire.DecodeError) as ei:
        kw.decode_fetch(bytes(bad), 12, fallback=True)
    e = ei.value
    assert e.topic == "events" and e.partition == 3
    assert "topic events partition 3" in e.text
    assert e.path is not None and e.path.startswith("responses[0].partitions[0].records")


def test_the_package_namespace_is_its_own() -> None:
    assert "Dict" not in dir(kwire) and "Any" not in dir(kwire)
    assert "ApiKey" in kwire.__all__ and "ErrorCode" in kwire.__all__
    for name in kwire.__all__:
        assert hasattr(kwire, name), name
