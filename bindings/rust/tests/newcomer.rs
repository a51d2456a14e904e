//! What a new user meets first: Kafka's verdict on a Produce request's partitions, the
//! version hint of a response decoded at the wrong version, "did you mean", named
//! constants, text accessors, and errors that name message and version.

use std::collections::HashMap;
use std::path::PathBuf;

use kwire::records::DecodeOptions;
use kwire::{api_key, error_code, ErrorKind};

/// The frames every binding's tests share (abi/testdata/frames.txt, written by the Go tests).
fn frames() -> HashMap<String, Vec<u8>> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../abi/testdata/frames.txt");
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {}", p.display(), e));
    let mut out = HashMap::new();
    for line in text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (name, hex) = line.split_once(' ').expect("name hex");
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
            .collect();
        out.insert(name.to_string(), bytes);
    }
    out
}

#[test]
fn produce_partitions_kafka_refuses_are_reported() {
    let f = kwire::decode_request_frame_records(&frames()["produce-v9-invalid-partitions"], &DecodeOptions::default())
        .expect("decode");
    let got: Vec<(Option<String>, i32, i16, usize)> = f
        .partitions()
        .expect("partitions")
        .iter()
        .map(|p| {
            (
                p.topic.clone(),
                p.partition,
                p.invalid.as_ref().map_or(0, |v| v.error_code),
                p.records.len(),
            )
        })
        .collect();
    let events = Some("events".to_string());
    assert_eq!(
        got,
        vec![
            (events.clone(), 0, 0, 2),                          // one complete batch
            (events.clone(), 1, error_code::INVALID_RECORD, 0), // a batch cut short
            (events.clone(), 2, error_code::INVALID_RECORD, 0), // no batch
            (events.clone(), 3, error_code::INVALID_RECORD, 2), // two batches
            (events.clone(), 4, error_code::INVALID_RECORD, 1), // a magic 1 message set at v9
        ]
    );
    let bad = f.invalid_partitions().expect("invalid partitions");
    assert_eq!(bad.iter().map(|p| p.partition).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
    let v = bad[0].invalid.as_ref().expect("verdict");
    assert_eq!(v.error, "INVALID_RECORD");
    assert!(v.reason.contains("found none complete"), "{}", v.reason);
    assert!(bad[2]
        .invalid
        .as_ref()
        .unwrap()
        .reason
        .contains("exactly one record batch"));
    assert!(bad[1].records.len() == 0);
}

#[test]
fn fetch_with_partial_trailing_batch_decodes() {
    let f =
        kwire::decode_response_frame_records(&frames()["fetch-v12-partial-batch"], 1, 12, &DecodeOptions::default())
            .expect("decode");
    let parts = f.partitions().expect("partitions");
    assert_eq!(parts.len(), 1);
    assert!(parts[0].invalid.is_none());
    assert!(parts[0].records.skipped_bytes() > 0);
    let values: Vec<String> = parts[0]
        .records
        .iter()
        .map(|r| r.value_str().expect("utf-8").expect("not null").to_string())
        .collect();
    assert_eq!(values, vec!["f-value-0", "f-value-1"]);
    assert_eq!(parts[0].records.iter().next().unwrap().key_str(), Ok(Some("f")));
}

#[test]
fn a_response_at_the_wrong_version_names_the_version() {
    let fetch = &frames()["fetch-v12-partial-batch"];
    let errs = [
        kwire::decode_response_frame(fetch, 1, 11).expect_err("v11"),
        kwire::decode_response_frame_records(fetch, 1, 11, &DecodeOptions::default()).expect_err("v11 records"),
    ];
    for e in errs {
        assert_eq!(e.kind(), ErrorKind::Decode);
        assert_eq!(
            e.hint(),
            Some("the bytes decode as FetchResponse v12: was the request v12?")
        );
        assert_eq!(e.hint_version(), Some(12));
        assert!(
            e.text()
                .ends_with("; the bytes decode as FetchResponse v12: was the request v12?"),
            "{}",
            e
        );
    }
}

#[test]
fn an_unknown_message_name_gets_a_suggestion() {
    let e = kwire::decode_message("FetchRespons", 4, &[]).expect_err("unknown");
    assert_eq!(e.kind(), ErrorKind::UnknownApi);
    assert!(e.text().contains("did you mean FetchResponse?"), "{}", e);
}

#[test]
fn an_encode_at_a_missing_version_names_message_and_version() {
    let header = serde_json::json!({"requestApiKey": 3, "requestApiVersion": 99, "correlationId": 1, "clientId": "c"});
    let e = kwire::encode_request(&header, &serde_json::json!({})).expect_err("v99");
    assert_eq!(e.kind(), ErrorKind::Version);
    assert_eq!(e.message_name(), Some("MetadataRequest"));
    assert_eq!(e.version(), Some(99));
}

#[test]
fn named_constants() {
    assert_eq!(api_key::PRODUCE, 0);
    assert_eq!(api_key::FETCH, 1);
    assert_eq!(api_key::API_VERSIONS, 18);
    assert_eq!(kwire::api_key_name(3), Some("Metadata"));
    assert_eq!(error_code::UNKNOWN_TOPIC_OR_PARTITION, 3);
    assert_eq!(error_code::UNKNOWN_SERVER_ERROR, -1);
    assert_eq!(kwire::error_code_name(87), Some("INVALID_RECORD"));
    assert!(kwire::error_code_retriable(error_code::NOT_LEADER_OR_FOLLOWER));
    assert!(!kwire::error_code_retriable(error_code::INVALID_RECORD));
    // The json! macro of the README comes through the crate.
    let v = kwire::serde_json::json!({"a": 1});
    assert_eq!(v["a"], 1);
}
