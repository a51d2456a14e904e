//! int64 values keep every bit through this crate: kwire writes them as decimal strings,
//! serde_json keeps strings as they are, and [`kwire::json::int64`] reads them exactly.
//! Values such as 2^62 + 1 or 2^53 + 1, which a float64 would round, are checked on the
//! wire, in the JSON form, in typed structs and in the record table.

use kwire::records::{self, BatchSpec, Compression, NewRecord};
use kwire::{json, Value};
use serde::{Deserialize, Serialize};
use serde_json::json;

const EDGES: [i64; 7] = [
    i64::MAX,
    i64::MIN,
    (1 << 62) + 1,
    (1 << 53) + 1, // the first integer a float64 cannot hold
    -(1 << 53) - 1,
    -1,
    0,
];

#[test]
fn int64_through_a_message() {
    for x in EDGES {
        let body = json!({"throttleTimeMs": 0, "errorCode": 0, "producerId": json::int64_value(x), "producerEpoch": 3});
        let bytes = kwire::encode_message("InitProducerIdResponse", 4, &body).unwrap();
        // On the wire: big-endian after throttleTimeMs (4 bytes) and errorCode (2).
        assert_eq!(i64::from_be_bytes(bytes[6..14].try_into().unwrap()), x);
        let back = kwire::decode_message("InitProducerIdResponse", 4, &bytes).unwrap();
        assert_eq!(back["producerId"], Value::String(x.to_string()), "written as a string");
        assert_eq!(json::int64(&back["producerId"]), Some(x));
        // And the JSON text itself carries the digits.
        let text = kwire::decode_message_json("InitProducerIdResponse", 4, &bytes).unwrap();
        assert!(text.contains(&format!("\"producerId\":\"{}\"", x)), "{}", text);
    }
}

#[test]
fn int64_as_a_json_number_is_read_exactly() {
    // Hand-written JSON may give an int64 as a number: serde_json keeps it as an integer.
    let body = json!({"producerId": i64::MAX});
    let bytes = kwire::encode_message("InitProducerIdResponse", 4, &body).unwrap();
    assert_eq!(i64::from_be_bytes(bytes[6..14].try_into().unwrap()), i64::MAX);
    let over = json!({"producerId": "9223372036854775808"});
    assert_eq!(
        kwire::encode_message("InitProducerIdResponse", 4, &over)
            .unwrap_err()
            .kind(),
        kwire::ErrorKind::Json
    );
}

#[test]
fn int64_in_typed_structs() {
    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    #[serde(rename_all = "camelCase")]
    struct InitProducerIdResponse {
        throttle_time_ms: i32,
        error_code: i16,
        #[serde(with = "kwire::json::int64_string")]
        producer_id: i64,
        producer_epoch: i16,
    }
    for x in EDGES {
        let typed = InitProducerIdResponse {
            throttle_time_ms: 5,
            error_code: 0,
            producer_id: x,
            producer_epoch: 1,
        };
        let bytes = kwire::encode_message("InitProducerIdResponse", 2, &serde_json::to_value(&typed).unwrap()).unwrap();
        let back: InitProducerIdResponse =
            serde_json::from_value(kwire::decode_message("InitProducerIdResponse", 2, &bytes).unwrap()).unwrap();
        assert_eq!(back, typed);
    }
}

#[test]
fn int64_in_records() {
    for x in [i64::MAX - 2, (1 << 62) + 1, (1 << 53) + 1] {
        let batch = BatchSpec {
            base_offset: x,
            producer_id: x,
            producer_epoch: 0,
            base_sequence: 0,
            records: (0..3)
                .map(|i| NewRecord {
                    timestamp: (1 << 53) + 1 + i,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let bytes = records::encode(&batch, Compression::Lz4).unwrap();
        let set = records::decode(&bytes, &Default::default()).unwrap();
        for (i, r) in set.records.iter().enumerate() {
            assert_eq!(r.offset, x + i as i64);
            assert_eq!(r.producer_id, x);
            assert_eq!(r.timestamp, (1 << 53) + 1 + i as i64);
        }
        let js = records::decode_json(&bytes, &Default::default()).unwrap();
        assert_eq!(json::int64(&js["records"][2]["offset"]), Some(x + 2));
        assert_eq!(js["records"][0]["producerId"], Value::String(x.to_string()));
    }
}
