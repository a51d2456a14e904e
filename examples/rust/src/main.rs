//! The Rust example: decodes the sample frames in examples/data with the kwire crate and
//! prints every record in the format all the language examples share
//! (examples/README.md).

use std::io::Write;
use std::path::Path;
use std::process::exit;

use kwire::records::{self, Record};
use kwire::{json, Value};

/// Bytes as a JSON string, the way Go's encoding/json writes one (HTML characters and
/// U+2028/U+2029 escaped, each invalid UTF-8 byte as \ufffd), or null.
fn quote(b: Option<&[u8]>) -> String {
    let Some(mut b) = b else { return "null".to_string() };
    let mut out = String::from("\"");
    loop {
        let (valid, rest) = match std::str::from_utf8(b) {
            Ok(s) => (s, &b[b.len()..]),
            Err(e) => {
                let (ok, bad) = b.split_at(e.valid_up_to());
                (std::str::from_utf8(ok).unwrap_or_default(), bad)
            }
        };
        for c in valid.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '<' | '>' | '&' | '\u{0}'..='\u{1f}' | '\u{2028}' | '\u{2029}' => {
                    out.push_str(&format!("\\u{:04x}", c as u32))
                }
                c => out.push(c),
            }
        }
        if rest.is_empty() {
            break;
        }
        out.push_str("\\ufffd");
        b = &rest[1..];
    }
    out.push('"');
    out
}

/// One record's line; the header keys are written as their raw bytes, as Go does.
fn line(topic: &str, partition: i64, r: &Record) -> Vec<u8> {
    let mut out = format!(
        "  {}/{} offset {} timestamp {} {} key {} value {} headers [",
        topic,
        partition,
        r.offset,
        r.timestamp,
        r.compression,
        quote(r.key.as_deref()),
        quote(r.value.as_deref())
    )
    .into_bytes();
    for (i, h) in r.headers.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(&h.key);
        out.push(b'=');
        out.extend_from_slice(quote(h.value.as_deref()).as_bytes());
    }
    out.extend_from_slice(b"]\n");
    out
}

fn print_records(topic: &str, partition: &Value, index: &str) -> Result<(), Box<dyn std::error::Error>> {
    let Some(Some(raw)) = json::bytes(&partition["records"]) else {
        return Ok(());
    };
    let set = records::decode(&raw, &Default::default())?;
    let p = partition[index].as_i64().unwrap_or(-1);
    let mut stdout = std::io::stdout().lock();
    for r in &set.records {
        stdout.write_all(&line(topic, p, r))?;
    }
    Ok(())
}

fn run(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let req = kwire::decode_request_frame(&std::fs::read(dir.join("produce-request.bin"))?)?;
    let catalogue = kwire::catalogue()?;
    let api = catalogue.api(req.api_key).map(|a| a.name.as_str()).unwrap_or("?");
    println!(
        "request: {} v{} correlation {} client {}",
        api,
        req.api_version,
        req.header["correlationId"],
        req.header["clientId"].as_str().unwrap_or("")
    );
    for t in req.body["topicData"].as_array().into_iter().flatten() {
        for p in t["partitionData"].as_array().into_iter().flatten() {
            print_records(t["name"].as_str().unwrap_or(""), p, "index")?;
        }
    }

    let resp = kwire::decode_response_frame(&std::fs::read(dir.join("fetch-response.bin"))?, 1, 12)?;
    println!("response: Fetch v12 correlation {}", resp.header["correlationId"]);
    for t in resp.body["responses"].as_array().into_iter().flatten() {
        for p in t["partitions"].as_array().into_iter().flatten() {
            print_records(t["topic"].as_str().unwrap_or(""), p, "partitionIndex")?;
        }
    }
    Ok(())
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "examples/data".to_string());
    if let Err(e) = run(Path::new(&dir)) {
        eprintln!("example: {}", e);
        exit(1);
    }
}
