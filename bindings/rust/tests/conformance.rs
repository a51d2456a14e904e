//! Every vector that Apache Kafka's own code wrote (conformance/vectors/), through this
//! crate: for each message vector, encode (its json -> bytes, equal to Kafka's), decode
//! (bytes -> JSON, compared semantically with its json, the catalogue's field renames
//! applied) and JSON round trip (the decoded Value -> the same bytes); for each record
//! vector, `records::decode` against the records Kafka's reader saw.
//!
//! A vector at a version that the catalogue declares superseded for its release, and that
//! the release's manifest marks unstable, is excused when it fails, and counted apart.

use std::path::PathBuf;

use kwire::records::{self, TimestampType};
use kwire::{json, Catalogue, MessageInfo, Value};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

fn find<'a>(cat: &'a Catalogue, name: &str, api_key: i16, kind: &str) -> Option<&'a MessageInfo> {
    if let Some(m) = cat.message(name) {
        return Some(m);
    }
    // A request or response Kafka renamed between releases: by api key and kind.
    let api = cat.api(api_key)?;
    match kind {
        "request" => cat.message(&api.request),
        "response" => cat.message(&api.response),
        _ => None,
    }
}

/// Renames member `old` to `new` in the objects at `path` ("topics[].partitions[]").
fn rename(v: &mut Value, path: &[&str], old: &str, new: &str) {
    let Some(obj) = v.as_object_mut() else { return };
    match path.split_first() {
        None => {
            if !obj.contains_key(new) {
                if let Some(x) = obj.shift_remove(old) {
                    obj.insert(new.to_string(), x);
                }
            }
        }
        Some((step, rest)) => {
            if let Some(key) = step.strip_suffix("[]") {
                if let Some(Value::Array(items)) = obj.get_mut(key) {
                    for it in items {
                        rename(it, rest, old, new);
                    }
                }
            } else if let Some(x) = obj.get_mut(*step) {
                rename(x, rest, old, new);
            }
        }
    }
}

fn numbers_equal(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    let int = |n: &serde_json::Number| n.is_i64() || n.is_u64();
    if int(a) && int(b) {
        return a.as_i64() == b.as_i64() && a.as_u64() == b.as_u64();
    }
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x.to_bits() == y.to_bits(),
        _ => false,
    }
}

/// The path of the first difference between want and got (object member order ignored).
fn diff(path: &str, want: &Value, got: &Value) -> Option<String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, wv) in w {
                let p = format!("{}.{}", path, k);
                match g.get(k) {
                    None => return Some(format!("{} (missing)", p)),
                    Some(gv) => {
                        if let Some(d) = diff(&p, wv, gv) {
                            return Some(d);
                        }
                    }
                }
            }
            g.keys()
                .find(|k| !w.contains_key(*k))
                .map(|k| format!("{}.{} (not in the vector)", path, k))
        }
        (Value::Array(w), Value::Array(g)) => {
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                if let Some(d) = diff(&format!("{}[{}]", path, i), wv, gv) {
                    return Some(d);
                }
            }
            (w.len() != g.len()).then(|| format!("{} ({} elements, got {})", path, w.len(), g.len()))
        }
        (Value::Number(w), Value::Number(g)) => (!numbers_equal(w, g)).then(|| format!("{} ({} != {})", path, w, g)),
        (w, g) => (w != g).then(|| format!("{} ({} != {})", path, w, g)),
    }
}

struct Tally {
    vectors: usize,
    passed: usize,
    excused: usize,
    failures: Vec<String>,
}

fn run_release(cat: &Catalogue, release: &str) -> Tally {
    let dir = repo().join("conformance").join("vectors");
    let text = std::fs::read_to_string(dir.join(format!("kafka-clients-{}.jsonl", release))).expect("vector file");
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("kafka-clients-{}.manifest.json", release))).expect("manifest"),
    )
    .expect("manifest JSON");
    let unstable = |name: &str, kind: &str| -> Option<i64> {
        manifest["messages"]
            .as_array()?
            .iter()
            .find(|m| m["name"] == name && m["kind"] == kind)?["unstableVersion"]
            .as_i64()
    };
    let source = format!("kafka-clients {}", release);
    let mut t = Tally {
        vectors: 0,
        passed: 0,
        excused: 0,
        failures: Vec::new(),
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).expect("vector line");
        t.vectors += 1;
        let id = v["id"].as_str().unwrap_or("?").to_string();
        let name = v["name"].as_str().unwrap_or_default();
        let kind = v["kind"].as_str().unwrap_or_default();
        let version = v["version"].as_i64().unwrap_or(-1) as i16;
        let api_key = v["apiKey"].as_i64().unwrap_or(-1) as i16;
        assert_eq!(v["source"], source.as_str(), "{}", id);
        let bytes = json::bytes(&v["bytes"])
            .flatten()
            .unwrap_or_else(|| panic!("{}: bytes", id));
        let mut want = v["json"].clone();

        let mut fails = Vec::new();
        let msg = find(cat, name, api_key, kind);
        match msg {
            None => fails.push(format!("kwire has no message {} (api key {}, {})", name, api_key, kind)),
            Some(m) => {
                match kwire::encode_message(&m.name, version, &want) {
                    Ok(b) if b == bytes => {}
                    Ok(b) => fails.push(format!("encode: {} bytes differ from Kafka's {}", b.len(), bytes.len())),
                    Err(e) => fails.push(format!("encode: {:?}: {}", e.kind(), e)),
                }
                match kwire::decode_message(&m.name, version, &bytes) {
                    Err(e) => fails.push(format!("decode: {:?}: {}", e.kind(), e)),
                    Ok(got) => {
                        for r in &m.renames {
                            let path: Vec<&str> = r.path.split('.').filter(|s| !s.is_empty()).collect();
                            rename(&mut want, &path, &r.old, &r.new);
                        }
                        if let Some(d) = diff("$", &want, &got) {
                            fails.push(format!("decode: JSON differs at {}", d));
                        }
                        match kwire::encode_message(&m.name, version, &got) {
                            Ok(b) if b == bytes => {}
                            Ok(b) => fails.push(format!(
                                "JSON round trip: {} bytes differ from {}",
                                b.len(),
                                bytes.len()
                            )),
                            Err(e) => fails.push(format!("JSON round trip: {}", e)),
                        }
                    }
                }
            }
        }
        if fails.is_empty() {
            t.passed += 1;
        } else if msg.is_some_and(|m| {
            m.superseded
                .iter()
                .any(|s| s.release == release && s.version == version)
                && unstable(name, kind) == Some(version as i64)
        }) {
            t.excused += 1;
        } else {
            t.failures.extend(fails.into_iter().map(|f| format!("{}: {}", id, f)));
        }
    }
    eprintln!(
        "vectors {}: {} vectors, {} passed all three checks, {} excused (superseded unstable versions), {} failures",
        release,
        t.vectors,
        t.passed,
        t.excused,
        t.failures.len()
    );
    t
}

fn check_release(index: usize) {
    let cat = kwire::catalogue().expect("catalogue");
    let Some(release) = cat.spec_releases.get(index) else {
        // The catalogue lists fewer releases: the other test covers them all.
        assert!(!cat.spec_releases.is_empty(), "no spec releases in the catalogue");
        return;
    };
    let t = run_release(&cat, release);
    assert!(t.vectors > 1000, "{}: only {} vectors", release, t.vectors);
    assert!(
        t.failures.is_empty(),
        "{} failures, first:\n{}",
        t.failures.len(),
        t.failures[..t.failures.len().min(40)].join("\n")
    );
    assert_eq!(t.passed + t.excused, t.vectors);
}

#[test]
fn kafka_vectors_first_release() {
    check_release(0);
}

#[test]
fn kafka_vectors_second_release() {
    check_release(1);
}

#[test]
fn kafka_vectors_further_releases() {
    let cat = kwire::catalogue().expect("catalogue");
    for release in cat.spec_releases.iter().skip(2) {
        let t = run_release(&cat, release);
        assert!(
            t.failures.is_empty(),
            "{}: {:?}",
            release,
            &t.failures[..t.failures.len().min(40)]
        );
    }
}

fn control_type(name: &str) -> i16 {
    match name {
        "ABORT" => 0,
        "COMMIT" => 1,
        "LEADER_CHANGE" => 2,
        "SNAPSHOT_HEADER" => 3,
        "SNAPSHOT_FOOTER" => 4,
        other => panic!("unknown control type {}", other),
    }
}

#[test]
fn record_vectors() {
    let path = repo().join("conformance/vectors/records/kafka-clients-4.4.0.jsonl");
    let text = std::fs::read_to_string(path).expect("record vectors");
    let mut count = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        let name = v["name"].as_str().unwrap();
        let bytes = json::bytes(&v["bytes"]).flatten().unwrap();
        let set = records::decode(&bytes, &Default::default()).unwrap_or_else(|e| panic!("{}: {}", name, e));
        assert_eq!(set.skipped_bytes, 0, "{}", name);
        let mut got = set.records.iter();
        for batch in v["batches"].as_array().unwrap() {
            let magic = batch["magic"].as_i64().unwrap() as i8;
            for want in batch["records"].as_array().unwrap() {
                let r = got
                    .next()
                    .unwrap_or_else(|| panic!("{}: fewer records than Kafka read", name));
                let ctx = format!("{} offset {}", name, r.offset);
                assert_eq!(Some(r.offset), json::int64(&want["offset"]), "{}", ctx);
                assert_eq!(Some(r.timestamp), json::int64(&want["timestamp"]), "{}", ctx);
                assert_eq!(Some(r.producer_id), json::int64(&batch["producerId"]), "{}", ctx);
                assert_eq!(r.key, json::bytes(&want["key"]).unwrap(), "{}: key", ctx);
                assert_eq!(r.value, json::bytes(&want["value"]).unwrap(), "{}: value", ctx);
                assert_eq!(r.sequence as i64, want["sequence"].as_i64().unwrap(), "{}", ctx);
                assert_eq!(
                    r.producer_epoch as i64,
                    batch["producerEpoch"].as_i64().unwrap(),
                    "{}",
                    ctx
                );
                let epoch = if magic == 2 {
                    batch["partitionLeaderEpoch"].as_i64().unwrap()
                } else {
                    -1
                };
                assert_eq!(r.leader_epoch as i64, epoch, "{}", ctx);
                assert_eq!(r.magic, magic, "{}", ctx);
                assert_eq!(r.compression.name(), batch["compression"].as_str().unwrap(), "{}", ctx);
                let tt = match batch["timestampType"].as_str().unwrap() {
                    "CreateTime" => TimestampType::CreateTime,
                    "LogAppendTime" => TimestampType::LogAppendTime,
                    _ => TimestampType::NoTimestamp,
                };
                assert_eq!(r.timestamp_type, tt, "{}", ctx);
                assert_eq!(r.transactional, batch["transactional"] == true, "{}", ctx);
                assert_eq!(r.control, batch["control"] == true, "{}", ctx);
                assert_eq!(
                    r.control_type,
                    want["control"]["type"].as_str().map(control_type),
                    "{}",
                    ctx
                );
                let headers = want["headers"].as_array().unwrap();
                assert_eq!(r.headers.len(), headers.len(), "{}", ctx);
                for (h, w) in r.headers.iter().zip(headers) {
                    assert_eq!(h.key_str(), w["key"].as_str(), "{}", ctx);
                    assert_eq!(h.value, json::bytes(&w["value"]).unwrap(), "{}", ctx);
                }
            }
        }
        assert!(got.next().is_none(), "{}: more records than Kafka read", name);
        // The JSON form agrees on the count and the first offset, exactly.
        let js = records::decode_json(&bytes, &Default::default()).unwrap();
        let recs = js["records"].as_array().unwrap();
        assert_eq!(recs.len(), set.records.len(), "{}", name);
        assert_eq!(json::int64(&recs[0]["offset"]), Some(set.records[0].offset), "{}", name);
        assert_eq!(recs[0]["compression"], set.records[0].compression.name(), "{}", name);
        count += 1;
    }
    assert!(count >= 20, "only {} record vectors", count);
}
