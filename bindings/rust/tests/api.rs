//! The public API over the sample frames of examples/data and hand-made inputs: frames,
//! peek, header versions, the catalogue, records with every codec, errors.

use std::path::PathBuf;

use kwire::records::{self, BatchSpec, Compression, DecodeOptions, NewRecord, TimestampType};
use kwire::{json, ErrorKind, Value};
use serde_json::json;

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/data")
            .join(name),
    )
    .expect("sample frame")
}

#[test]
#[allow(clippy::absurd_extreme_comparisons)] // ABI_MINOR may be 0
fn abi_version_matches() {
    let (major, minor) = kwire::abi_version();
    assert_eq!(major, kwire::ABI_MAJOR);
    assert!(minor >= kwire::ABI_MINOR, "library minor below the crate's");
    assert!(kwire::abi_compatible());
    assert_eq!(kwire::catalogue().unwrap().abi_version, format!("{}.{}", major, minor));
}

#[test]
fn catalogue() {
    let cat = kwire::catalogue().unwrap();
    assert!(!cat.spec_releases.is_empty());
    let produce = cat.api(0).expect("api 0");
    assert_eq!(
        (produce.name.as_str(), produce.request.as_str()),
        ("Produce", "ProduceRequest")
    );
    assert!(produce.max_version >= 9 && produce.flexible_min == 9);
    assert!(cat.apis.windows(2).all(|w| w[0].api_key < w[1].api_key));
    assert!(cat.messages.windows(2).all(|w| w[0].name < w[1].name));
    assert_eq!(cat.message("RequestHeader").unwrap().kind, "header");
    assert_eq!(cat.message("FetchResponse").unwrap().api_key, 1);
    assert!(cat.message("NoSuchMessage").is_none());
}

#[test]
fn header_versions() {
    let hv = |k, v| kwire::header_versions(k, v).map(|h| (h.request, h.response));
    assert_eq!(hv(0, 9).unwrap(), (2, 1));
    assert_eq!(hv(0, 8).unwrap(), (1, 0));
    assert_eq!(hv(18, 3).unwrap(), (2, 0), "ApiVersions responses always use header v0");
    assert_eq!(
        hv(7, 0).unwrap(),
        (0, 0),
        "ControlledShutdown v0 uses request header v0"
    );
    assert_eq!(hv(9999, 0).unwrap_err().kind(), ErrorKind::UnknownApi);
    assert_eq!(hv(0, 999).unwrap_err().kind(), ErrorKind::Version);
}

#[test]
fn request_frame() {
    let frame = sample("produce-request.bin");
    let req = kwire::decode_request_frame(&frame).unwrap();
    assert_eq!((req.api_key, req.api_version, req.header_version), (0, 9, 2));
    assert_eq!(req.header["correlationId"], 7);
    assert_eq!(req.header["clientId"], "kwire-example");
    // The JSON keeps the descriptor's field order.
    let keys: Vec<&String> = req.header.as_object().unwrap().keys().collect();
    assert_eq!(keys[..3], ["requestApiKey", "requestApiVersion", "correlationId"]);
    assert_eq!(kwire::encode_request_frame(&req).unwrap(), frame);
    assert_eq!(kwire::encode_request(&req.header, &req.body).unwrap(), frame);

    // Change one field, keep the rest.
    let mut changed = req.clone();
    changed.header["correlationId"] = json!(1234);
    let re = kwire::decode_request_frame(&kwire::encode_request_frame(&changed).unwrap()).unwrap();
    assert_eq!(re.header["correlationId"], 1234);
    assert_eq!(re.body, req.body);

    // A frame whose size prefix disagrees with its length.
    let err = kwire::decode_request_frame(&frame[..frame.len() - 1]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode);
    assert!(err.offset().is_some(), "{:?}", err);
}

#[test]
fn peek() {
    let frame = sample("produce-request.bin");
    let p = kwire::peek_request_header(&frame).unwrap();
    assert_eq!(p.frame_size as usize, frame.len() - 4);
    assert_eq!(
        (p.api_key, p.api_version, p.correlation_id, p.header_version),
        (0, 9, 7, 2)
    );
    assert_eq!(p.client_id, Some(&b"kwire-example"[..]));
    // The first bytes are enough.
    assert_eq!(kwire::peek_request_header(&frame[..30]).unwrap(), p);
    assert_eq!(
        kwire::peek_request_header(&frame[..11]).unwrap_err().kind(),
        ErrorKind::Decode
    );
    // A size prefix above 100 MiB.
    let mut big = frame.clone();
    big[..4].copy_from_slice(&(200u32 << 20).to_be_bytes());
    assert_eq!(
        kwire::peek_request_header(&big).unwrap_err().kind(),
        ErrorKind::TooLarge
    );
}

#[test]
fn response_frame_and_records() {
    let frame = sample("fetch-response.bin");
    let resp = kwire::decode_response_frame(&frame, 1, 12).unwrap();
    assert_eq!((resp.api_key, resp.api_version, resp.header_version), (1, 12, 1));
    assert_eq!(resp.header["correlationId"], 8);
    assert_eq!(kwire::encode_response_frame(&resp).unwrap(), frame);
    assert_eq!(kwire::encode_response(1, 12, &resp.header, &resp.body).unwrap(), frame);
    let parts = resp.body["responses"][0]["partitions"].as_array().unwrap();
    let codecs = [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];
    assert_eq!(parts.len(), 4);
    for (p, codec) in parts.iter().zip(codecs) {
        let idx = p["partitionIndex"].as_i64().unwrap();
        let raw = json::bytes(&p["records"]).unwrap().unwrap();
        let set = records::decode(&raw, &DecodeOptions::default()).unwrap();
        assert_eq!(set.records.len(), 3);
        for (i, r) in set.records.iter().enumerate() {
            assert_eq!(r.offset, idx * 10 + i as i64);
            assert_eq!(r.compression, codec);
            assert_eq!(
                r.value.as_deref(),
                Some(format!("events/{} message {}", idx, i).as_bytes())
            );
            assert_eq!(r.headers.len(), 1);
            assert_eq!(r.headers[0].key_str(), Some("trace-id"));
        }
    }
}

#[test]
fn records_every_codec() {
    let batch = BatchSpec {
        base_offset: 9_223_372_036_854_775_800,
        producer_id: 4_611_686_018_427_387_905,
        producer_epoch: 7,
        base_sequence: i32::MAX - 1,
        records: vec![
            NewRecord {
                key: Some(b"k0".to_vec()),
                value: Some(b"v0".to_vec()),
                timestamp: 1_700_000_000_000,
                headers: vec![("h".into(), Some(b"x".to_vec())), ("n".into(), None)],
            },
            NewRecord {
                key: None,
                value: Some(Vec::new()),
                timestamp: 1_699_999_999_999,
                headers: vec![],
            },
            NewRecord {
                key: Some(Vec::new()),
                value: None,
                timestamp: 1_700_000_000_005,
                headers: vec![],
            },
        ],
        ..Default::default()
    };
    for codec in [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let bytes = records::encode(&batch, codec).unwrap();
        let set = records::decode(&bytes, &Default::default()).unwrap();
        let r = &set.records;
        assert_eq!(r.len(), 3, "{}", codec);
        assert_eq!(
            (r[0].offset, r[2].offset),
            (9_223_372_036_854_775_800, 9_223_372_036_854_775_802)
        );
        assert_eq!(r[0].producer_id, 4_611_686_018_427_387_905);
        assert_eq!(
            (r[0].producer_epoch, r[0].sequence, r[1].sequence, r[2].sequence),
            (7, i32::MAX - 1, i32::MAX, 0)
        );
        assert_eq!((r[0].timestamp, r[1].timestamp), (1_700_000_000_000, 1_699_999_999_999));
        assert_eq!(
            (r[0].magic, r[0].compression, r[0].timestamp_type),
            (2, codec, TimestampType::CreateTime)
        );
        assert_eq!((r[1].key.as_deref(), r[1].value.as_deref()), (None, Some(&b""[..])));
        assert_eq!((r[2].key.as_deref(), r[2].value.as_deref()), (Some(&b""[..]), None));
        assert_eq!(r[0].headers.len(), 2);
        assert_eq!(
            (r[0].headers[1].key.as_slice(), r[0].headers[1].value.as_deref()),
            (&b"n"[..], None)
        );
        assert!(!r[0].control && !r[0].transactional && r[0].control_type.is_none());
        let js = records::decode_json(&bytes, &Default::default()).unwrap();
        assert_eq!(js["records"][0]["offset"], "9223372036854775800");
        assert_eq!(js["records"][0]["compression"], codec.name());
    }
    // Legacy sets: magic 1 with gzip, magic 0 without timestamps.
    for magic in [0i8, 1] {
        let legacy = BatchSpec {
            magic,
            records: vec![batch.records[1].clone(), batch.records[2].clone()],
            ..Default::default()
        };
        let set = records::decode(
            &records::encode(&legacy, Compression::Gzip).unwrap(),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(set.records.len(), 2);
        assert_eq!(set.records[0].magic, magic);
        assert_eq!(
            set.records[0].timestamp_type,
            if magic == 0 {
                TimestampType::NoTimestamp
            } else {
                TimestampType::CreateTime
            }
        );
    }
    // Headers are not allowed in a legacy set; zstd neither.
    let bad = BatchSpec {
        magic: 1,
        records: vec![batch.records[0].clone()],
        ..Default::default()
    };
    assert_eq!(
        records::encode(&bad, Compression::None).unwrap_err().kind(),
        ErrorKind::Arg
    );
    let zstd_legacy = BatchSpec {
        magic: 1,
        records: vec![batch.records[1].clone()],
        ..Default::default()
    };
    assert_eq!(
        records::encode(&zstd_legacy, Compression::Zstd).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
}

#[test]
fn records_crc_and_partial_batches() {
    let batch = BatchSpec {
        records: vec![NewRecord {
            key: None,
            value: Some(b"v0".to_vec()),
            timestamp: 1,
            headers: vec![],
        }],
        ..Default::default()
    };
    let mut bytes = records::encode(&batch, Compression::None).unwrap();
    let at = bytes.windows(2).position(|w| w == b"v0").unwrap();
    bytes[at + 1] = b'9';
    let err = records::decode(&bytes, &Default::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode);
    assert!(err.text().contains("checksum"), "{}", err);
    let lax = DecodeOptions {
        verify_crc: false,
        ..Default::default()
    };
    assert_eq!(
        records::decode(&bytes, &lax).unwrap().records[0].value.as_deref(),
        Some(&b"v9"[..])
    );

    // A partial batch at the end is skipped and reported.
    let good = records::encode(&batch, Compression::None).unwrap();
    let mut two = good.clone();
    two.extend_from_slice(&good[..good.len() - 5]);
    let set = records::decode(&two, &Default::default()).unwrap();
    assert_eq!((set.records.len(), set.skipped_bytes), (1, good.len() - 5));
    // Empty input: no records.
    assert_eq!(records::decode(&[], &Default::default()).unwrap(), Default::default());
}

#[test]
fn errors_carry_status_text_path_and_offset() {
    // Truncated body.
    let e = kwire::decode_message("ProduceRequest", 9, &[0xff, 0xff, 0x00]).unwrap_err();
    assert_eq!((e.kind(), e.status()), (ErrorKind::Decode, -2));
    assert_eq!((e.message(), e.version()), (Some("ProduceRequest"), Some(9)));
    assert!(e.offset().is_some() && e.text().contains("ProduceRequest"), "{:?}", e);
    assert_eq!(e.to_string(), e.text());

    // Strict JSON: an unknown key names its JSON path.
    let e = kwire::encode_message("RequestHeader", 2, &json!({"requestApiKey": 18, "nope": 1})).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Json);
    assert!(e.path().unwrap_or_default().contains("nope"), "{:?}", e);
    let e = kwire::encode_message_json("RequestHeader", 2, "{").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Json);
    let e = kwire::encode_message("RequestHeader", 2, &json!({"requestApiKey": 70000})).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Json);

    // Unknown names and versions.
    assert_eq!(
        kwire::decode_message("NoSuchMessage", 0, &[]).unwrap_err().kind(),
        ErrorKind::UnknownApi
    );
    assert_eq!(
        kwire::encode_message("ProduceRequest", 999, &json!({}))
            .unwrap_err()
            .kind(),
        ErrorKind::Version
    );

    // Encode error: a non-default value in a non-ignorable field the version lacks
    // (ProduceRequest has a transactionalId from v3 on); the default is fine, and an
    // ignorable field (FetchRequest's isolationLevel before v4) is dropped.
    let e = kwire::encode_message("ProduceRequest", 2, &json!({"transactionalId": "tx"})).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Encode);
    assert!(e.text().contains("transactionalId"), "{}", e);
    assert!(e.path().unwrap_or_default().contains("transactionalId"), "{:?}", e);
    assert!(kwire::encode_message("ProduceRequest", 2, &json!({"transactionalId": null})).is_ok());
    let dropped = kwire::encode_message("FetchRequest", 3, &json!({"isolationLevel": 1})).unwrap();
    assert_eq!(dropped, kwire::encode_message("FetchRequest", 3, &json!({})).unwrap());

    // Success after failure: no stale error leaks into the next result.
    let ok = kwire::decode_message_json("RequestHeader", 1, &[0, 18, 0, 3, 0, 0, 0, 1, 0, 1, b'c']).unwrap();
    assert!(ok.contains("\"clientId\":\"c\""), "{}", ok);
}

#[test]
fn threads_see_their_own_errors() {
    let frame = sample("produce-request.bin");
    std::thread::scope(|s| {
        for t in 0..4 {
            let frame = &frame;
            s.spawn(move || {
                for i in 0..200 {
                    if (i + t) % 2 == 0 {
                        let e = kwire::decode_message("ProduceRequest", 9, &frame[..20 + t]).unwrap_err();
                        assert_eq!(e.kind(), ErrorKind::Decode);
                        assert_eq!(e.message(), Some("ProduceRequest"));
                    } else {
                        let e = kwire::header_versions(0, 999).unwrap_err();
                        assert_eq!(e.kind(), ErrorKind::Version);
                        let req = kwire::decode_request_frame(frame).unwrap();
                        assert_eq!(req.header["correlationId"], 7);
                    }
                }
            });
        }
    });
}

#[test]
fn json_form_values() {
    // Unknown tagged fields survive a JSON round trip.
    let body = json!({
        "throttleTimeMs": 0, "errorCode": 0, "producerId": "1", "producerEpoch": 0,
        "_unknownTaggedFields": [{"tag": 90, "data": "AQID"}]
    });
    let bytes = kwire::encode_message("InitProducerIdResponse", 4, &body).unwrap();
    let back = kwire::decode_message("InitProducerIdResponse", 4, &bytes).unwrap();
    assert_eq!(back["_unknownTaggedFields"], json!([{"tag": 90, "data": "AQID"}]));
    assert_eq!(
        kwire::encode_message("InitProducerIdResponse", 4, &back).unwrap(),
        bytes
    );
    // A uuid reads as 16 bytes.
    let v: Value = json!("AAAAAAAAAAAAAAAAAAAAAQ");
    assert_eq!(json::uuid(&v).unwrap()[15], 1);
}

#[test]
fn linked_as_configured() {
    // Feature "dynamic" links libkwire.so; the default links libkwire.a into the binary.
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    assert_eq!(maps.contains("/libkwire.so"), cfg!(feature = "dynamic"));
    assert!(kwire::abi_compatible());
}

/// An all-topics MetadataRequest v13 as librdkafka 2.16 sends it: size 25, api key 3,
/// version 13, correlation id 9, client id "rdkafka", header tags; body: topics null,
/// allowAutoTopicCreation true, includeTopicAuthorizedOperations false, tags; then 3 bytes
/// that Kafka's broker ignores.
const METADATA_V13_TRAILING: [u8; 29] = [
    0x00, 0x00, 0x00, 0x19, 0x00, 0x03, 0x00, 0x0d, 0x00, 0x00, 0x00, 0x09, 0x00, 0x07, b'r', b'd', b'k', b'a', b'f',
    b'k', b'a', 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x02,
];
/// A MetadataResponse v13 frame (empty) followed by one extra byte (size 20).
const METADATA_RESPONSE_V13_EXTRA: [u8; 24] = [
    0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff,
    0x01, 0x00, 0x00, 0x00, 0x00,
];

#[test]
fn request_with_trailing_bytes_interop() {
    // Kafka's broker accepts a request body followed by extra bytes; kwire keeps them as
    // "_trailingBytes" (base64), last in the body, and re-encodes byte for byte.
    let f = kwire::decode_request_frame(&METADATA_V13_TRAILING).expect("the frame is accepted");
    assert_eq!((f.api_key, f.api_version, f.header_version), (3, 13, 2));
    assert_eq!(f.header["clientId"], json!("rdkafka"));
    assert_eq!(f.body["topics"], Value::Null);
    assert_eq!(f.body["_trailingBytes"], json!("AAEC"));
    let keys: Vec<&String> = f.body.as_object().expect("body object").keys().collect();
    assert_eq!(keys.last().map(|k| k.as_str()), Some("_trailingBytes"));
    assert_eq!(kwire::encode_request_frame(&f).unwrap(), METADATA_V13_TRAILING.to_vec());
    // Other trailing bytes give another frame: the bytes are really what is written.
    let mut g = f.clone();
    g.body["_trailingBytes"] = json!("AAED");
    let mut want = METADATA_V13_TRAILING.to_vec();
    *want.last_mut().unwrap() = 3;
    assert_eq!(kwire::encode_request_frame(&g).unwrap(), want);
    // The body alone, through the message calls.
    let body = &METADATA_V13_TRAILING[22..];
    let text = kwire::decode_message_json("MetadataRequest", 13, body).unwrap();
    assert!(text.ends_with(",\"_trailingBytes\":\"AAEC\"}"), "{}", text);
    assert_eq!(
        kwire::encode_message_json("MetadataRequest", 13, &text).unwrap(),
        body.to_vec()
    );
    let peek = kwire::peek_request_header(&METADATA_V13_TRAILING).unwrap();
    assert_eq!(
        (peek.frame_size, peek.api_key, peek.client_id),
        (25, 3, Some(&b"rdkafka"[..]))
    );

    // A response frame with an extra byte is still refused, at that byte's offset.
    let err = kwire::decode_response_frame(&METADATA_RESPONSE_V13_EXTRA, 3, 13).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Decode);
    assert!(err.text().contains("trailing bytes"), "{}", err.text());
    assert_eq!(err.offset(), Some(23));
    let mut ok = METADATA_RESPONSE_V13_EXTRA[..23].to_vec();
    ok[3] = 19;
    let r = kwire::decode_response_frame(&ok, 3, 13).unwrap();
    assert!(r.body.get("_trailingBytes").is_none());
}
