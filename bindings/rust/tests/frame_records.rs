//! Frames with their records in one record table (ABI 1.1): decode_request_frame_records,
//! decode_response_frame_records, encode_request_frame_records, RecordTable and
//! TableBuilder; and layout 3 (ABI 1.2), decode_*_frame_records_borrowed.
//!
//! - every Produce request and Fetch response vector of conformance/vectors/kafka-clients-*
//!   inside a frame, against decode_*_frame (the JSON) and records::decode of each records
//!   field (every record field by field), in layout 2 and in layout 3 (whose input records
//!   are slices of the frame, checked against layout 2 record by record); the Produce
//!   frames encoded again from the decoded JSON and table, and decoded back record for
//!   record;
//! - every record vector of conformance/vectors/records inside Fetch v4/v12/v16 responses
//!   and Produce v3/v9/v12 requests, and rebuilt through a TableBuilder with the vector's
//!   batch options (byte for byte with Kafka's bytes when uncompressed);
//! - host-built tables, per-field compression, and errors: cut frames, bad records, bad
//!   references, bad tables.

use std::path::PathBuf;

// Layout 4 (KW_RECORDS_COLUMNS, ABI 1.4) is the bindings' form, which the crate's decode
// calls do not ask for; the tests ask the library for it as a C host does, and read it
// with RecordTable::from_bytes_with_input.
extern "C" {
    fn kw_free(ptr: *mut std::ffi::c_void) -> i32;
    fn kw_last_error(out: *mut *const u8, out_len: *mut i32) -> i32;
    fn kw_decode_request_frame_records(
        input: *const u8,
        in_len: i32,
        flags: i32,
        max: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
    fn kw_decode_response_frame_records(
        input: *const u8,
        in_len: i32,
        api_key: i32,
        api_version: i32,
        flags: i32,
        max: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
}

/// The frame decoded into a layout-4 table (with `KW_RECORDS_INPUT_SPANS`: uncompressed
/// records stay in the frame), read by the crate; or the library's error text.
fn columns_of(frame: &[u8], api_key: i16, version: i16, request: bool) -> Result<RecordTable<'_>, String> {
    let bytes = raw_columns(frame, api_key, version, request)?;
    let t = RecordTable::from_bytes_with_input(bytes, frame)
        .map_err(|e| format!("the crate refuses a layout-4 table: {}", e))?;
    if t.layout() != 4 {
        return Err(format!("asked for layout 4, got {}", t.layout()));
    }
    Ok(t)
}

/// The library's layout-4 table of the frame, as it returned it.
fn raw_columns(frame: &[u8], api_key: i16, version: i16, request: bool) -> Result<Vec<u8>, String> {
    let flags = kwire::table::layout::RECORDS_COLUMNS | kwire::table::layout::RECORDS_INPUT_SPANS;
    let (mut out, mut n) = (std::ptr::null_mut(), 0i32);
    // SAFETY: frame is valid for its length during the call; valid out-params; the
    // output is copied and freed with kw_free, the error text copied at once.
    let st = unsafe {
        if request {
            kw_decode_request_frame_records(frame.as_ptr(), frame.len() as i32, flags, 0, &mut out, &mut n)
        } else {
            kw_decode_response_frame_records(
                frame.as_ptr(),
                frame.len() as i32,
                api_key.into(),
                version.into(),
                flags,
                0,
                &mut out,
                &mut n,
            )
        }
    };
    if st != 0 {
        let (mut e, mut en) = (std::ptr::null(), 0i32);
        unsafe { kw_last_error(&mut e, &mut en) };
        let text = unsafe { std::slice::from_raw_parts(e, en as usize) };
        return Err(String::from_utf8_lossy(text).into_owned());
    }
    let bytes = unsafe { std::slice::from_raw_parts(out, n as usize) }.to_vec();
    unsafe { kw_free(out.cast()) };
    Ok(bytes)
}

/// Checks the layout-4 table of `frame` against its layout-3 table `l3`: the same JSON
/// and records, every field, keys, values and headers by content and where they lie.
fn check_layout4(frame: &[u8], t4: &RecordTable<'_>, l3: &FrameRecords<'_>) -> Result<(), String> {
    let t3 = l3.table();
    if t4.json() != t3.json()
        || (t4.len(), t4.header_count(), t4.input_records()) != (t3.len(), t3.header_count(), t3.input_records())
    {
        return Err("layout 4: another JSON, record or header count, or other input records than layout 3".into());
    }
    for (i, (r4, r3)) in t4.iter().zip(t3.iter()).enumerate() {
        let addr = |r: &RecordView<'_>| {
            parts_of(r)
                .iter()
                .map(|s| (s.to_vec(), inside(frame, s)))
                .collect::<Vec<_>>()
        };
        if r4.to_record() != r3.to_record() || r4.source() != r3.source() || addr(&r4) != addr(&r3) {
            return Err(format!("record {}: layout 4 {:?}\nlayout 3 {:?}", i, r4, r3));
        }
    }
    Ok(())
}

use kwire::records::{self, Compression, DecodeOptions, NewRecord, Record, TimestampType};
use kwire::table::{BatchOptions, BatchRef, FrameRecords, RecordTable, RecordView, RecordsField, Source, TableBuilder};
use kwire::{json, ErrorKind, Value};
use serde_json::json;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

fn lines(path: PathBuf) -> Vec<Value> {
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {}", path.display(), e))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("vector line"))
        .collect()
}

fn vector_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("conformance/vectors"))
        .expect("conformance/vectors")
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("kafka-clients-") && n.ends_with(".jsonl")
        })
        .collect();
    files.sort();
    files
}

fn record_vectors() -> Vec<Value> {
    lines(repo().join("conformance/vectors/records/kafka-clients-4.4.0.jsonl"))
}

/// Every member "records" of `v` that is not null, with its path in the same form as
/// RecordsField::path ("body.topicData[0].partitionData[1].records").
fn records_members(v: &Value, path: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{}.{}", path, k)
                };
                if k == "records" && !x.is_null() {
                    out.push((p, x.clone()));
                } else {
                    records_members(x, &p, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                records_members(x, &format!("{}[{}]", path, i), out);
            }
        }
        _ => {}
    }
}

/// `v` with every records member that is not null replaced by "R".
fn strip(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| {
                    let x = if k == "records" && !x.is_null() {
                        json!("R")
                    } else {
                        strip(x)
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
        x => x.clone(),
    }
}

/// A frame around a request or response body: size prefix, header, body.
fn frame_around(api_key: i16, version: i16, request: bool, correlation_id: i32, body: &[u8]) -> Vec<u8> {
    let hv = kwire::header_versions(api_key, version).unwrap();
    let header = if request {
        kwire::encode_message(
            "RequestHeader",
            hv.request,
            &json!({"requestApiKey": api_key, "requestApiVersion": version,
                    "correlationId": correlation_id, "clientId": "v"}),
        )
    } else {
        kwire::encode_message(
            "ResponseHeader",
            hv.response,
            &json!({ "correlationId": correlation_id }),
        )
    }
    .unwrap();
    let mut f = ((header.len() + body.len()) as u32).to_be_bytes().to_vec();
    f.extend_from_slice(&header);
    f.extend_from_slice(body);
    f
}

/// What one frame check counted.
#[derive(Default, Debug)]
struct Counts {
    fields: usize,
    records: usize,
    refused: usize,
    /// Layout 3: records read in place in the frame, and from the table.
    input_records: usize,
    table_records: usize,
    /// Layout-3 Produce tables with input records that the encoder refused.
    encodes_refused: usize,
    /// Layout-4 tables held to layout 3.
    columns: usize,
}

/// Whether `s` lies inside `frame`.
fn inside(frame: &[u8], s: &[u8]) -> bool {
    let (a, b) = (s.as_ptr() as usize, frame.as_ptr() as usize);
    a >= b && a + s.len() <= b + frame.len()
}

/// Checks a layout-3 table (`l3`, decoded from `frame`) against the layout-2 table of the
/// same frame (`l2`): the same JSON and records (every field, keys, values and headers by
/// content); exactly the uncompressed magic 2 data records are read from the frame, and
/// their keys, values and headers are slices of it, the others' slices of the table.
fn check_layout3(frame: &[u8], l2: &FrameRecords<'_>, l3: &FrameRecords<'_>, c: &mut Counts) -> Result<(), String> {
    let (t2, t3) = (l2.table(), l3.table());
    if (t2.layout(), t3.layout()) != (2, 3) {
        return Err(format!("layouts {} and {}", t2.layout(), t3.layout()));
    }
    if l3.json() != l2.json() {
        return Err("layout 3: the frame JSON differs from layout 2's".into());
    }
    if l3.input().as_ptr() != frame.as_ptr() || l3.input().len() != frame.len() || !t2.input().is_empty() {
        return Err("layout 3 does not borrow the frame, or layout 2 does".into());
    }
    if (t3.len(), t3.header_count()) != (t2.len(), t2.header_count()) {
        return Err(format!(
            "layout 3: {} records and {} headers, layout 2 {} and {}",
            t3.len(),
            t3.header_count(),
            t2.len(),
            t2.header_count()
        ));
    }
    if t3.as_bytes().len() > t2.as_bytes().len() {
        return Err("layout 3 is larger than layout 2".into());
    }
    let slices = |r: &RecordView<'_>| -> Vec<Vec<u8>> { parts_of(r).into_iter().map(<[u8]>::to_vec).collect() };
    let mut input = 0;
    for (i, (r2, r3)) in t2.iter().zip(t3.iter()).enumerate() {
        if r3.to_record() != r2.to_record() || slices(&r3) != slices(&r2) {
            return Err(format!("record {}: layout 3 {:?}\nlayout 2 {:?}", i, r3, r2));
        }
        if r2.source() != Source::Table {
            return Err(format!("record {}: layout 2 says {:?}", i, r2.source()));
        }
        let plain = r3.magic() == 2 && r3.compression() == Compression::None && !r3.control();
        if (r3.source() == Source::Input) != plain {
            return Err(format!(
                "record {}: {:?}, magic {}, {:?}, control {}",
                i,
                r3.source(),
                r3.magic(),
                r3.compression(),
                r3.control()
            ));
        }
        // The slices lie where the source says: in the frame, or (non-empty) not in it.
        for s in parts_of(&r3) {
            let ok = match r3.source() {
                Source::Input => inside(frame, s),
                Source::Table => s.is_empty() || !inside(frame, s),
            };
            if !ok {
                return Err(format!("record {}: a slice outside its {:?} source", i, r3.source()));
            }
        }
        input += usize::from(r3.source() == Source::Input);
    }
    if t3.input_records() != input {
        return Err(format!("input_records() {}, counted {}", t3.input_records(), input));
    }
    c.input_records += input;
    c.table_records += t3.len() - input;
    Ok(())
}

/// A record's key, value, header keys and header values that are not null.
fn parts_of<'a>(r: &RecordView<'a>) -> Vec<&'a [u8]> {
    let mut out: Vec<&[u8]> = r.key().into_iter().chain(r.value()).collect();
    for h in r.headers() {
        out.push(h.key);
        out.extend(h.value);
    }
    out
}

/// checks decode_*_frame_records of `frame` against decode_*_frame and records::decode:
/// the JSON apart from the records fields, then every records field record by record. A
/// frame one of whose records fields records::decode refuses must fail with that kind.
fn check_decoded(frame: &[u8], api_key: i16, version: i16, request: bool, c: &mut Counts) -> Result<(), String> {
    let plain: Value = if request {
        serde_json::to_value(kwire::decode_request_frame(frame).map_err(|e| e.to_string())?).unwrap()
    } else {
        serde_json::to_value(kwire::decode_response_frame(frame, api_key, version).map_err(|e| e.to_string())?).unwrap()
    };
    let mut fields = Vec::new();
    records_members(&plain, "", &mut fields);
    let mut want = Vec::new();
    let mut want_err = None;
    for (path, v) in &fields {
        let raw = json::bytes(v).flatten().ok_or(format!("{}: not base64", path))?;
        match records::decode(&raw, &DecodeOptions::default()) {
            Ok(set) => want.push((path.clone(), raw.len(), set)),
            Err(e) => {
                want_err = Some((path.clone(), e));
                break;
            }
        }
    }
    let got = if request {
        kwire::decode_request_frame_records(frame, &DecodeOptions::default())
    } else {
        kwire::decode_response_frame_records(frame, api_key, version, &DecodeOptions::default())
    };
    let got3 = if request {
        kwire::decode_request_frame_records_borrowed(frame, &DecodeOptions::default())
    } else {
        kwire::decode_response_frame_records_borrowed(frame, api_key, version, &DecodeOptions::default())
    };
    // Layout 3 accepts and refuses what layout 2 does, with the same error.
    let got3 = match (&got, got3) {
        (Ok(_), Ok(g3)) => Some(g3),
        (Err(e), Err(e3)) if (e.kind(), e.text()) == (e3.kind(), e3.text()) => None,
        (g, g3) => {
            return Err(format!(
                "layout 3: {:?}, layout 2: {:?}",
                g3.map(|_| ()),
                g.as_ref().map(|_| ())
            ))
        }
    };
    // Layout 4 accepts and refuses what layout 2 does, with the same error.
    let got4 = columns_of(frame, api_key, version, request);
    match (&got, &got4) {
        (Ok(_), Ok(_)) => c.columns += 1,
        (Err(e), Err(e4)) if e.text() == e4 => {}
        (g, g4) => {
            return Err(format!(
                "layout 4: {:?}, layout 2: {:?}",
                g4.as_ref().map(|_| ()),
                g.as_ref().map(|_| ())
            ))
        }
    }
    let got = match (got, want_err) {
        (Err(e), Some((path, we))) => {
            if e.kind() != we.kind() {
                return Err(format!(
                    "fails with {:?} ({}), records::decode of {} with {:?} ({})",
                    e.kind(),
                    e,
                    path,
                    we.kind(),
                    we
                ));
            }
            if !e.text().starts_with("kwire: ") || !e.text().contains("records") {
                return Err(format!("the error does not name the records field: {}", e));
            }
            c.refused += 1;
            return Ok(());
        }
        (Err(e), None) => return Err(format!("{:?}: {}", e.kind(), e)),
        (Ok(_), Some((path, we))) => return Err(format!("decodes, but records::decode of {} fails: {}", path, we)),
        (Ok(g), None) => g,
    };
    let gv = got.value().map_err(|e| e.to_string())?;
    if strip(&gv) != strip(&plain) {
        return Err(format!("the frame JSON differs:\n{}\n{}", strip(&gv), strip(&plain)));
    }
    let got3 = got3.ok_or("layout 3 refuses the frame")?;
    check_layout3(frame, &got, &got3, c)?;
    check_layout4(frame, &got4?, &got3)?;
    let gf = got.records_fields().map_err(|e| e.to_string())?;
    if gf.len() != want.len() {
        return Err(format!("{} records fields, want {}", gf.len(), want.len()));
    }
    if got3.records_fields().map_err(|e| e.to_string())? != gf {
        return Err("layout 3: other records fields".into());
    }
    let mut next = 0;
    for (f, (path, size, set)) in gf.iter().zip(&want) {
        if &f.path != path {
            return Err(format!("field path {}, want {}", f.path, path));
        }
        if (f.first_record, f.record_count, f.skipped_bytes, f.size)
            != (next, set.records.len(), set.skipped_bytes, Some(*size))
        {
            return Err(format!(
                "{}: {:?}, want {} records, {} skipped, size {}",
                path,
                f,
                set.records.len(),
                set.skipped_bytes,
                size
            ));
        }
        next += f.record_count;
        let slice = got.records(f).map_err(|e| e.to_string())?;
        if slice.len() != set.records.len() || slice.iter().len() != set.records.len() {
            return Err(format!("{}: a slice of {} records", path, slice.len()));
        }
        let slice3 = got3.records(f).map_err(|e| e.to_string())?;
        if slice3.len() != set.records.len() {
            return Err(format!("{}: a layout-3 slice of {} records", path, slice3.len()));
        }
        for (i, (r3, w)) in slice3.iter().zip(&set.records).enumerate() {
            if r3.to_record() != *w || r3.key() != w.key.as_deref() || r3.value() != w.value.as_deref() {
                return Err(format!(
                    "{} record {}: layout 3 {:?}\nwant {:?}",
                    path,
                    i,
                    r3.to_record(),
                    w
                ));
            }
        }
        for (i, (r, w)) in slice.iter().zip(&set.records).enumerate() {
            if r.to_record() != *w {
                return Err(format!("{} record {}: {:?}\nwant {:?}", path, i, r.to_record(), w));
            }
            // The borrowed accessors say the same.
            if r.key() != w.key.as_deref() || r.value() != w.value.as_deref() || r.offset() != w.offset {
                return Err(format!("{} record {}: key, value or offset differs", path, i));
            }
            if !r
                .headers()
                .map(|h| (h.key, h.value))
                .eq(w.headers.iter().map(|h| (&h.key[..], h.value.as_deref())))
            {
                return Err(format!("{} record {}: headers differ", path, i));
            }
        }
        c.fields += 1;
        c.records += set.records.len();
    }
    if next != got.table().len() {
        return Err(format!(
            "the table has {} records, the fields {}",
            got.table().len(),
            next
        ));
    }
    // partitions() sees the same fields, with topic and partition.
    if (api_key == 0 && request) || (api_key == 1 && !request) {
        let want_lens: Vec<usize> = want.iter().map(|w| w.2.records.len()).collect();
        for g in [&got, &got3] {
            let parts = g.partitions().map_err(|e| e.to_string())?;
            let lens: Vec<usize> = parts.iter().map(|p| p.records.len()).collect();
            if lens != want_lens {
                return Err(format!("partitions(): {:?} records, want {:?}", lens, want_lens));
            }
        }
    }
    // A layout-3 Produce table with records in the frame does not encode.
    if request && got3.table().input_records() > 0 {
        match kwire::encode_request_frame_records_json(got3.json(), got3.table().as_bytes()) {
            Err(e) if e.kind() == ErrorKind::Json && e.path().is_some_and(|p| p.contains("records")) => {
                c.encodes_refused += 1
            }
            r => {
                return Err(format!(
                    "encode from a layout-3 table with input records: {:?}",
                    r.map(|_| ())
                ))
            }
        }
    }
    Ok(())
}

/// For each records field of a decoded frame JSON: its reference, with baseOffset set to
/// the offset of its first record (so the rebuilt batch keeps the offsets of a contiguous
/// batch).
fn with_base_offsets(v: &mut Value, table: &RecordTable) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match (k.as_str(), RecordsField::from_value(x)) {
                    ("records", Some(f)) => {
                        if let Some(r) = table.slice(f.first_record, f.record_count).and_then(|s| s.get(0)) {
                            x["baseOffset"] = json::int64_value(r.offset());
                        }
                    }
                    _ => with_base_offsets(x, table),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| with_base_offsets(x, table)),
        _ => {}
    }
}

/// Encodes a decoded Produce frame again from its JSON and table, decodes the result and
/// compares every record: key, value, headers and timestamp byte for byte, and the offset
/// too for records whose field held contiguous offsets. Returns how many records it
/// compared and how many offsets.
fn check_reencode(frame: &[u8]) -> Result<(usize, usize), String> {
    let d = kwire::decode_request_frame_records(frame, &DecodeOptions::default()).map_err(|e| e.to_string())?;
    // As decoded: the JSON and the table encode again as they are.
    let again = kwire::encode_request_frame_records_json(d.json(), d.table().as_bytes())
        .map_err(|e| format!("encode as decoded: {:?}: {}", e.kind(), e))?;
    let back = kwire::decode_request_frame_records(&again, &DecodeOptions::default()).map_err(|e| e.to_string())?;
    if back.table().len() != d.table().len() {
        return Err(format!(
            "re-encoded: {} records of {}",
            back.table().len(),
            d.table().len()
        ));
    }
    // With each field's base offset.
    let mut v = d.value().unwrap();
    with_base_offsets(&mut v, d.table());
    let again = kwire::encode_request_frame_records_json(&v.to_string(), d.table().as_bytes())
        .map_err(|e| format!("encode with base offsets: {:?}: {}", e.kind(), e))?;
    let back = kwire::decode_request_frame_records(&again, &DecodeOptions::default()).map_err(|e| e.to_string())?;
    let (fields, back_fields) = (d.records_fields().unwrap(), back.records_fields().unwrap());
    if fields.len() != back_fields.len() {
        return Err(format!(
            "{} records fields, re-encoded {}",
            fields.len(),
            back_fields.len()
        ));
    }
    let (mut n, mut offsets) = (0, 0);
    for (f, bf) in fields.iter().zip(&back_fields) {
        let (s, bs) = (d.records(f).unwrap(), back.records(bf).unwrap());
        if s.len() != bs.len() {
            return Err(format!("{}: {} records, re-encoded {}", f.path, s.len(), bs.len()));
        }
        let base = s.get(0).map(|r| r.offset()).unwrap_or(0);
        let contiguous = s
            .iter()
            .enumerate()
            .all(|(i, r)| r.offset() == base.wrapping_add(i as i64));
        for (i, (r, b)) in s.iter().zip(bs.iter()).enumerate() {
            if r.key() != b.key() || r.value() != b.value() || r.timestamp() != b.timestamp() {
                return Err(format!(
                    "{} record {}: key, value or timestamp differs: {:?} {:?}",
                    f.path, i, r, b
                ));
            }
            if !r.headers().eq(b.headers()) {
                return Err(format!("{} record {}: headers differ", f.path, i));
            }
            if b.offset() != base.wrapping_add(i as i64) {
                return Err(format!(
                    "{} record {}: offset {}, want {}",
                    f.path,
                    i,
                    b.offset(),
                    base + i as i64
                ));
            }
            if contiguous {
                if b.offset() != r.offset() {
                    return Err(format!(
                        "{} record {}: offset {} != {}",
                        f.path,
                        i,
                        b.offset(),
                        r.offset()
                    ));
                }
                offsets += 1;
            }
            n += 1;
        }
    }
    Ok((n, offsets))
}

#[test]
fn every_produce_and_fetch_vector() {
    let files = vector_files();
    assert!(files.len() >= 2, "{} vector files", files.len());
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let (mut checked, mut skipped, mut with_records) = (0, 0, 0);
        let (mut reencoded, mut reenc_records, mut reenc_offsets) = (0, 0, 0);
        let mut c = Counts::default();
        let mut fails = Vec::new();
        for (i, v) in lines(path).iter().enumerate() {
            let api_key = v["apiKey"].as_i64().unwrap() as i16;
            let kind = v["kind"].as_str().unwrap();
            let request = match (api_key, kind) {
                (0, "request") => true,
                (1, "response") => false,
                _ => continue,
            };
            let version = v["version"].as_i64().unwrap() as i16;
            let id = v["id"].as_str().unwrap_or("?");
            let body = json::bytes(&v["bytes"]).flatten().unwrap();
            let frame = frame_around(api_key, version, request, i as i32, &body);
            let plain_ok = if request {
                kwire::decode_request_frame(&frame).is_ok()
            } else {
                kwire::decode_response_frame(&frame, api_key, version).is_ok()
            };
            if !plain_ok {
                // A version whose frame kwire refuses: the conformance tests' business; the
                // frame-records call must refuse it too.
                let r = if request {
                    kwire::decode_request_frame_records(&frame, &DecodeOptions::default())
                } else {
                    kwire::decode_response_frame_records(&frame, api_key, version, &DecodeOptions::default())
                };
                if r.is_ok() {
                    fails.push(format!(
                        "{}: decode_*_frame refuses it, the frame-records call does not",
                        id
                    ));
                }
                skipped += 1;
                continue;
            }
            checked += 1;
            let mut members = Vec::new();
            records_members(&v["json"], "", &mut members);
            if !members.is_empty() {
                with_records += 1;
            }
            let refused = c.refused;
            if let Err(m) = check_decoded(&frame, api_key, version, request, &mut c) {
                fails.push(format!("{} v{}: {}", id, version, m));
                continue;
            }
            if request && c.refused == refused {
                match check_reencode(&frame) {
                    Ok((n, o)) => {
                        reencoded += 1;
                        reenc_records += n;
                        reenc_offsets += o;
                    }
                    Err(m) => fails.push(format!("{} v{}: re-encode: {}", id, version, m)),
                }
            }
        }
        eprintln!(
            "{}: {} Produce/Fetch vectors checked ({} with a records field; {} refused by decode_*_frame, skipped): \
             {} records fields, {} records compared field by field, {} frames whose records decode_records refuses \
             (refused alike); layout 3: {} records read in the frame, {} from the table, {} Produce tables refused \
             by the encoder; {} layout-4 tables held to layout 3; {} Produce frames re-encoded, {} records compared, \
             {} offsets; {} failures",
            name,
            checked,
            with_records,
            skipped,
            c.fields,
            c.records,
            c.refused,
            c.input_records,
            c.table_records,
            c.encodes_refused,
            c.columns,
            reencoded,
            reenc_records,
            reenc_offsets,
            fails.len()
        );
        assert!(checked > 200, "{}: only {} vectors checked", name, checked);
        // (These vectors' batches are uncompressed: the record vectors below have the others.)
        assert!(
            c.input_records > 0 && c.encodes_refused > 0 && c.columns > 200,
            "{}: layout 3 read no record in the frame, or few layout-4 tables were compared: {:?}",
            name,
            c
        );
        assert!(
            fails.is_empty(),
            "{}:\n{}",
            name,
            fails[..fails.len().min(20)].join("\n")
        );
    }
}

fn fetch_body(version: i16, fields: &[Value]) -> Value {
    let partitions: Vec<Value> = fields
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({"partitionIndex": i, "errorCode": 0, "highWatermark": "100", "lastStableOffset": "100",
                   "logStartOffset": "0", "abortedTransactions": [], "preferredReadReplica": -1, "records": r})
        })
        .collect();
    let topic = if version >= 13 {
        json!({"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": partitions})
    } else {
        json!({"topic": "vectors", "partitions": partitions})
    };
    json!({"throttleTimeMs": 0, "errorCode": 0, "sessionId": 0, "responses": [topic]})
}

fn produce_header(version: i16) -> Value {
    json!({"requestApiKey": 0, "requestApiVersion": version, "correlationId": 6, "clientId": "c"})
}

fn produce_body(version: i16, fields: &[Value]) -> Value {
    let parts: Vec<Value> = fields
        .iter()
        .enumerate()
        .map(|(i, r)| json!({"index": i, "records": r}))
        .collect();
    let topic = if version >= 13 {
        json!({"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitionData": parts})
    } else {
        json!({"name": "vectors", "partitionData": parts})
    };
    json!({"transactionalId": null, "acks": -1, "timeoutMs": 30000, "topicData": [topic]})
}

#[test]
fn every_record_vector_inside_frames() {
    let vectors = record_vectors();
    let (mut frames, mut input, mut table) = (0, 0, 0);
    for v in &vectors {
        let name = v["name"].as_str().unwrap();
        let b64 = v["bytes"].clone();
        let raw = json::bytes(&b64).flatten().unwrap();
        let want = records::decode(&raw, &DecodeOptions::default()).unwrap();
        let fields = [b64.clone(), Value::Null, b64.clone()];
        for version in [4i16, 12, 16] {
            let frame = kwire::encode_response(1, version, &json!({"correlationId": 5}), &fetch_body(version, &fields))
                .unwrap_or_else(|e| panic!("{}: Fetch v{}: {}", name, version, e));
            let mut c = Counts::default();
            check_decoded(&frame, 1, version, false, &mut c)
                .unwrap_or_else(|m| panic!("{}: Fetch v{}: {}", name, version, m));
            assert_eq!((c.fields, c.records), (2, 2 * want.records.len()), "{}", name);
            let d = kwire::decode_response_frame_records(&frame, 1, version, &DecodeOptions::default()).unwrap();
            let parts = d.partitions().unwrap();
            assert_eq!(parts.len(), 2, "{}", name);
            assert_eq!(
                parts.iter().map(|p| p.partition).collect::<Vec<_>>(),
                [0, 2],
                "{}: the null field is left out",
                name
            );
            if version >= 13 {
                assert_eq!(parts[1].topic_id.as_deref(), Some("AAAAAAAAAAAAAAAAAAAAAQ"));
            } else {
                assert_eq!(parts[1].topic.as_deref(), Some("vectors"));
            }
            assert_eq!(parts[1].records.size(), Some(raw.len()));
            assert_eq!(parts[1].records.first(), want.records.len());
            (input, table) = (input + c.input_records, table + c.table_records);
            frames += 1;
        }
        for version in [3i16, 9, 12] {
            let frame = kwire::encode_request(&produce_header(version), &produce_body(version, &fields))
                .unwrap_or_else(|e| panic!("{}: Produce v{}: {}", name, version, e));
            let mut c = Counts::default();
            check_decoded(&frame, 0, version, true, &mut c)
                .unwrap_or_else(|m| panic!("{}: Produce v{}: {}", name, version, m));
            assert_eq!((c.fields, c.records), (2, 2 * want.records.len()), "{}", name);
            (input, table) = (input + c.input_records, table + c.table_records);
            frames += 1;
        }
    }
    eprintln!(
        "{} record vectors inside {} Fetch and Produce frames, every record compared field by field (layouts 2 and 3; \
         layout 3 read {} records in the frame, {} from the table)",
        vectors.len(),
        frames,
        input,
        table
    );
    assert!(vectors.len() >= 20, "only {} record vectors", vectors.len());
    assert!(
        input > 0 && table > 0,
        "layout 3: {} records in the frame, {} from the table",
        input,
        table
    );
}

/// The batch options of a vector's first batch.
fn options_of(b: &Value) -> BatchOptions {
    let compression = match b["compression"].as_str().unwrap() {
        "none" => Compression::None,
        "gzip" => Compression::Gzip,
        "snappy" => Compression::Snappy,
        "lz4" => Compression::Lz4,
        "zstd" => Compression::Zstd,
        c => panic!("unknown compression {}", c),
    };
    BatchOptions {
        compression,
        base_offset: json::int64(&b["baseOffset"]).unwrap(),
        producer_id: json::int64(&b["producerId"]).unwrap(),
        producer_epoch: b["producerEpoch"].as_i64().unwrap() as i16,
        base_sequence: b["baseSequence"].as_i64().unwrap() as i32,
        partition_leader_epoch: b["partitionLeaderEpoch"].as_i64().unwrap() as i32,
        transactional: b["transactional"] == true,
        ..Default::default()
    }
}

#[test]
fn every_record_vector_rebuilt_through_a_table() {
    let (mut rebuilt, mut exact) = (0, 0);
    for v in &record_vectors() {
        let name = v["name"].as_str().unwrap();
        let batches = v["batches"].as_array().unwrap();
        let b0 = &batches[0];
        // What a producer writes: one magic 2 batch, no control records, CreateTime.
        if batches.len() != 1
            || b0["magic"] != 2
            || b0["control"] == true
            || b0["timestampType"] != "CreateTime"
            || b0["deleteHorizonMs"] != "-1"
        {
            continue;
        }
        let raw = json::bytes(&v["bytes"]).flatten().unwrap();
        let want = records::decode(&raw, &DecodeOptions::default()).unwrap();
        let src = records::decode_table(&raw, &DecodeOptions::default()).unwrap();
        assert_eq!(src.layout(), 1);
        let mut tb = TableBuilder::new();
        let opts = options_of(b0);
        let field = tb.add_batch_views(&src, &opts);
        assert_eq!((field.first_record, field.record_count), (0, want.records.len()));
        let table = tb.build().unwrap();
        let body = produce_body(9, &[serde_json::to_value(&field).unwrap(), Value::Null]);
        let frame = kwire::encode_request_records(&produce_header(9), &body, &table)
            .unwrap_or_else(|e| panic!("{}: {:?}: {}", name, e.kind(), e));
        let d = kwire::decode_request_frame_records(&frame, &DecodeOptions::default()).unwrap();
        let parts = d.partitions().unwrap();
        assert_eq!(parts.len(), 1, "{}", name);
        let got: Vec<Record> = parts[0].records.iter().map(|r| r.to_record()).collect();
        // Every field of every record, offsets, producer, sequence and codec included.
        assert_eq!(got, want.records, "{}", name);
        // The same batch from owned Records gives the same frame.
        let mut tb2 = TableBuilder::new();
        for r in &want.records {
            tb2.add_decoded(r);
        }
        assert_eq!(tb2.build().unwrap(), table, "{}", name);
        rebuilt += 1;
        if opts.compression == Compression::None {
            // Kafka's own bytes, byte for byte.
            let kafka = kwire::encode_request(&produce_header(9), &produce_body(9, &[v["bytes"].clone(), Value::Null]))
                .unwrap();
            assert_eq!(
                frame, kafka,
                "{}: the frame differs from the one with Kafka's bytes",
                name
            );
            exact += 1;
        }
    }
    eprintln!(
        "{} record vectors rebuilt through a TableBuilder and decoded back; {} uncompressed ones byte for byte with Kafka's",
        rebuilt, exact
    );
    assert!(rebuilt >= 8, "only {} vectors rebuilt", rebuilt);
    assert!(exact >= 1, "no uncompressed vector compared byte for byte");
}

#[test]
fn table_builder_reads_back_and_encodes_per_field_codecs() {
    let p62 = (1i64 << 62) + 1;
    let recs = [
        NewRecord {
            key: Some(b"k1".to_vec()),
            value: Some(vec![1, 2, 3]),
            timestamp: p62,
            headers: vec![("h".into(), Some(b"x".to_vec())), ("n".into(), None)],
        },
        NewRecord {
            key: None,
            value: Some(Vec::new()),
            timestamp: 5,
            headers: vec![],
        },
        NewRecord {
            key: Some(Vec::new()),
            value: None,
            timestamp: -1,
            headers: vec![],
        },
    ];
    let mut tb = TableBuilder::new();
    assert!(tb.is_empty());
    let b0 = tb.add_batch(&recs, &BatchOptions::default());
    let i = tb.add_parts(Some(b"raw"), None, i64::MIN + 1, [(&[0xffu8][..], Some(&[9u8][..]))]);
    assert_eq!((b0.first_record, b0.record_count, i, tb.len()), (0, 3, 3, 4));
    let bytes = tb.build().unwrap();
    let t = RecordTable::from_bytes(bytes.clone()).unwrap();
    assert_eq!((t.layout(), t.len(), t.header_count(), t.json()), (1, 4, 3, None));
    let r: Vec<_> = t.iter().collect();
    assert_eq!((r[0].offset(), r[0].timestamp()), (0, p62));
    assert_eq!((r[0].key(), r[0].value()), (Some(&b"k1"[..]), Some(&[1u8, 2, 3][..])));
    let h: Vec<_> = r[0].headers().map(|h| (h.key_str().unwrap(), h.value)).collect();
    assert_eq!(h, [("h", Some(&b"x"[..])), ("n", None)]);
    assert_eq!(
        (r[1].key(), r[1].value()),
        (None, Some(&b""[..])),
        "null and empty differ"
    );
    assert_eq!((r[2].key(), r[2].value(), r[2].timestamp()), (Some(&b""[..]), None, -1));
    assert_eq!(r[2].timestamp_type(), TimestampType::NoTimestamp);
    assert_eq!(r[3].timestamp(), i64::MIN + 1);
    assert_eq!(
        r[3].headers().next().unwrap().key,
        [0xff],
        "header keys keep their exact bytes"
    );
    assert_eq!(r[3].headers().next().unwrap().key_str(), None);
    assert_eq!(t.iter().rev().map(|r| r.offset()).collect::<Vec<_>>(), [3, 2, 1, 0]);
    assert!(t.get(4).is_none() && t.slice(3, 2).is_none() && t.slice(4, 0).is_some());

    // Two partitions from one table, each with its own codec and batch options.
    let b1 = tb.add_batch(&recs[..2], &BatchOptions::default());
    let table = tb.build().unwrap();
    let mut gz = b0.clone();
    gz.options.compression = Compression::Gzip;
    gz.options.base_offset = p62;
    gz.options.producer_id = p62;
    gz.options.producer_epoch = 3;
    gz.options.base_sequence = 10;
    let mut lz = b1.clone();
    lz.options.compression = Compression::Lz4;
    lz.options.level = 9;
    let body = produce_body(9, &[gz.to_value(), lz.to_value(), Value::Null, json!(null)]);
    let frame = kwire::encode_request_records(&produce_header(9), &body, &table).unwrap();
    let d = kwire::decode_request_frame_records(&frame, &DecodeOptions::default()).unwrap();
    let parts = d.partitions().unwrap();
    assert_eq!(parts.len(), 2);
    assert_eq!((parts[0].partition, parts[1].partition), (0, 1));
    let p0: Vec<_> = parts[0].records.iter().collect();
    assert_eq!(p0.len(), 3);
    assert!(p0
        .iter()
        .all(|r| r.compression() == Compression::Gzip && r.producer_id() == p62));
    assert_eq!(
        p0.iter().map(|r| r.offset()).collect::<Vec<_>>(),
        [p62, p62 + 1, p62 + 2]
    );
    assert_eq!(p0.iter().map(|r| r.sequence()).collect::<Vec<_>>(), [10, 11, 12]);
    assert_eq!(p0[0].producer_epoch(), 3);
    assert_eq!(p0[0].timestamp(), p62);
    assert_eq!(p0[0].headers().count(), 2);
    assert_eq!(p0[2].value(), None);
    let p1: Vec<_> = parts[1].records.iter().collect();
    assert_eq!(p1.len(), 2);
    assert!(p1
        .iter()
        .all(|r| r.compression() == Compression::Lz4 && r.producer_id() == -1));
    assert_eq!((p1[1].key(), p1[1].value()), (None, Some(&b""[..])));

    // The typed frame path: RequestFrame in, the same bytes out.
    let mut rf = d.request_frame().unwrap();
    rf.body["topicData"][0]["partitionData"][0]["records"] = gz.to_value();
    rf.body["topicData"][0]["partitionData"][1]["records"] = lz.to_value();
    assert_eq!(kwire::encode_request_frame_records(&rf, &table).unwrap(), frame);
    // A frame without references needs no table.
    let plain = kwire::encode_request(&produce_header(9), &produce_body(9, &[Value::Null])).unwrap();
    let rf = kwire::decode_request_frame(&plain).unwrap();
    assert_eq!(kwire::encode_request_frame_records(&rf, &[]).unwrap(), plain);
}

#[test]
fn sample_fetch_response_through_the_table() {
    let frame = std::fs::read(repo().join("examples/data/fetch-response.bin")).unwrap();
    let d = kwire::decode_response_frame_records(&frame, 1, 12, &DecodeOptions::default()).unwrap();
    assert_eq!(d.table().layout(), 2);
    assert_eq!(d.table().json(), Some(d.json()));
    let rf = d.response_frame().unwrap();
    assert_eq!((rf.api_key, rf.api_version, rf.header_version), (1, 12, 1));
    let parts = d.partitions().unwrap();
    let codecs = [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];
    assert_eq!(parts.len(), 4);
    for (p, codec) in parts.iter().zip(codecs) {
        assert_eq!(p.topic.as_deref(), Some("events"));
        assert_eq!(p.records.len(), 3);
        for (i, r) in p.records.iter().enumerate() {
            assert_eq!(r.offset(), p.partition as i64 * 10 + i as i64);
            assert_eq!(r.compression(), codec);
            let want = format!("events/{} message {}", p.partition, i);
            assert_eq!(r.value(), Some(want.as_bytes()));
        }
    }
    // The table outlives the frame JSON and crosses threads.
    let (json, table) = d.into_parts();
    assert!(json.contains("\"firstRecord\""));
    let n = std::thread::spawn(move || table.iter().filter(|r| r.headers().len() == 1).count())
        .join()
        .unwrap();
    assert_eq!(n, 12);
}

#[test]
fn errors() {
    // Every cut of a Produce frame: an error with the library's text, never a panic, and the
    // same error the JSON decode gives.
    let frame = std::fs::read(repo().join("examples/data/produce-request.bin")).unwrap();
    for n in 0..frame.len() {
        let e = kwire::decode_request_frame_records(&frame[..n], &DecodeOptions::default()).unwrap_err();
        let plain = kwire::decode_request_frame(&frame[..n]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Decode, "cut at {}: {}", n, e);
        assert_eq!((e.text(), e.offset()), (plain.text(), plain.offset()), "cut at {}", n);
        assert!(e.text().starts_with("kwire: "), "{}", e);
    }
    // The same prefixes with a size prefix that agrees: cut inside the body.
    for n in 4..frame.len() {
        let mut f = frame[..n].to_vec();
        f[..4].copy_from_slice(&((n - 4) as u32).to_be_bytes());
        let e = kwire::decode_request_frame_records(&f, &DecodeOptions::default()).unwrap_err();
        let plain = kwire::decode_request_frame(&f).unwrap_err();
        assert_eq!((e.kind(), e.text()), (plain.kind(), plain.text()), "cut at {}", n);
    }
    // Every cut of a Fetch response frame, likewise.
    let fetch = std::fs::read(repo().join("examples/data/fetch-response.bin")).unwrap();
    for n in 0..fetch.len() {
        let e = kwire::decode_response_frame_records(&fetch[..n], 1, 12, &DecodeOptions::default()).unwrap_err();
        let plain = kwire::decode_response_frame(&fetch[..n], 1, 12).unwrap_err();
        assert_eq!((e.kind(), e.text()), (plain.kind(), plain.text()), "cut at {}", n);
    }
    let cut = [0u8, 0, 0, 40, 0, 0, 0, 5];
    let e = kwire::decode_response_frame_records(&cut, 1, 12, &DecodeOptions::default()).unwrap_err();
    assert_eq!((e.kind(), e.status()), (ErrorKind::Decode, -2));
    assert!(e.offset().is_some(), "{:?}", e);
    assert_eq!(
        kwire::decode_response_frame_records(&frame, 9999, 0, &DecodeOptions::default())
            .unwrap_err()
            .kind(),
        ErrorKind::UnknownApi
    );
    let zero = DecodeOptions {
        max_decompressed: Some(0),
        ..Default::default()
    };
    assert_eq!(
        kwire::decode_request_frame_records(&frame, &zero).unwrap_err().kind(),
        ErrorKind::Arg
    );

    // A records field whose batch CRC does not match: Decode naming the field; passes
    // with verify_crc off.
    let mut batch = records::encode(
        &records::BatchSpec {
            records: vec![NewRecord {
                key: Some(b"k".to_vec()),
                value: Some(b"value".to_vec()),
                ..Default::default()
            }],
            ..Default::default()
        },
        Compression::None,
    )
    .unwrap();
    let at = batch.len() - 3;
    batch[at] ^= 0xff;
    let b64 = json!(json::base64_encode(&batch));
    let f = kwire::encode_response(
        1,
        12,
        &json!({"correlationId": 1}),
        &fetch_body(12, &[Value::Null, b64]),
    )
    .unwrap();
    let e = kwire::decode_response_frame_records(&f, 1, 12, &DecodeOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Decode);
    assert!(e.text().contains("responses[0].partitions[1].records"), "{}", e);
    let skip = DecodeOptions {
        verify_crc: false,
        ..Default::default()
    };
    let d = kwire::decode_response_frame_records(&f, 1, 12, &skip).unwrap();
    assert_eq!(d.table().len(), 1);

    // A reference outside the table (none given, then a one-record table): Json at the
    // records field's path.
    let bad = produce_body(9, &[json!({"firstRecord": 3, "recordCount": 1})]);
    let mut tb = TableBuilder::new();
    tb.add_parts(None, Some(b"v"), 0, []);
    for table in [Vec::new(), tb.build().unwrap()] {
        let e = kwire::encode_request_records(&produce_header(9), &bad, &table).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Json, "{}", e);
        assert!(e.path().is_some_and(|p| p.contains("records")), "{:?}", e);
    }
    // An unknown compression name, an unknown key.
    for r in [
        json!({"firstRecord": 0, "recordCount": 1, "compression": "brotli"}),
        json!({"firstRecord": 0, "recordCount": 1, "codec": "gzip"}),
    ] {
        let e = kwire::encode_request_records(&produce_header(9), &produce_body(9, &[r]), &tb.build().unwrap())
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Json, "{}", e);
    }
    // A table shorter than its header: Arg.
    let short = [b'K', b'W', b'R', b'T', 1, 0, 0, 0];
    let e = kwire::encode_request_records(&produce_header(9), &bad, &short).unwrap_err();
    assert_eq!((e.kind(), e.status()), (ErrorKind::Arg, -1));

    // partitions() of a frame that is neither a Produce request nor a Fetch response.
    let meta = kwire::encode_request(
        &json!({"requestApiKey": 3, "requestApiVersion": 12, "correlationId": 1, "clientId": "x"}),
        &json!({"topics": [], "allowAutoTopicCreation": false, "includeTopicAuthorizedOperations": false}),
    )
    .unwrap();
    let d = kwire::decode_request_frame_records(&meta, &DecodeOptions::default()).unwrap();
    assert!(d.table().is_empty() && d.records_fields().unwrap().is_empty());
    assert_eq!(d.partitions().unwrap_err().kind(), ErrorKind::Arg);
}

#[test]
fn malformed_layout_4_tables_are_refused_not_read() {
    let frame = std::fs::read(repo().join("examples/data/fetch-response.bin")).unwrap();
    let good = raw_columns(&frame, 1, 12, false).unwrap();
    let t = RecordTable::from_bytes_with_input(good.clone(), &frame).unwrap();
    assert!(t.layout() == 4 && !t.is_empty());
    // Every single-byte change of the header, the batch table and the columns (they end
    // where the header entries begin): refused with ErrorKind::Arg, or read within
    // bounds, never a panic.
    let end = i32::from_le_bytes(good[28..32].try_into().unwrap()) as usize;
    for at in 0..end {
        for x in [0x80u8, 0xff, 0x01] {
            let mut b = good.clone();
            b[at] ^= x;
            match RecordTable::from_bytes_with_input(b, &frame) {
                Ok(t) => {
                    for r in t.iter() {
                        let _ = (r.key(), r.value(), r.headers().count(), r.to_record());
                    }
                }
                Err(e) => assert_eq!(e.kind(), ErrorKind::Arg, "byte {}: {}", at, e),
            }
        }
    }
    // A batch index past the batch table.
    let mut b = good.clone();
    let bi = i32::from_le_bytes(good[80..84].try_into().unwrap()) as usize;
    b[bi..bi + 4].copy_from_slice(&1000i32.to_le_bytes());
    let e = RecordTable::from_bytes_with_input(b, &frame).unwrap_err();
    assert!(e.text().contains("layout-4"), "{}", e);
}

#[test]
fn malformed_tables_are_refused_not_read() {
    let mut tb = TableBuilder::new();
    tb.add_parts(Some(b"k"), Some(b"v"), 1, [(&b"h"[..], None)]);
    let good = tb.build().unwrap();
    assert!(RecordTable::from_bytes(good.clone()).is_ok());
    // Every cut, and every single-byte change of the header and entries: refused or read
    // within bounds (never a panic).
    for n in 0..good.len() {
        assert_eq!(
            RecordTable::from_bytes(good[..n].to_vec()).unwrap_err().kind(),
            ErrorKind::Arg,
            "cut at {}",
            n
        );
    }
    for at in 0..good.len() {
        for x in [0x80u8, 0xff, 0x7f, 0x01] {
            let mut b = good.clone();
            b[at] ^= x;
            if let Ok(t) = RecordTable::from_bytes(b) {
                for r in t.iter() {
                    let _ = (r.key(), r.value(), r.headers().count(), r.to_record());
                }
            }
        }
    }
    // A value length past the end.
    let mut b = good.clone();
    b[40 + 36..40 + 40].copy_from_slice(&(1i32 << 20).to_le_bytes());
    let e = RecordTable::from_bytes(b).unwrap_err();
    assert!(e.text().contains("bad record table"), "{}", e);
    // An empty records field gives an empty table.
    let t = records::decode_table(&[], &DecodeOptions::default()).unwrap();
    assert_eq!((t.len(), t.skipped_bytes(), t.iter().count()), (0, 0, 0));
}

/// A table whose strides are larger than layout 1's (as a later layout may have) is read
/// by its strides: the same table as `good` with 8 more bytes per record and per header
/// entry.
#[test]
fn larger_strides_are_read_by_their_stride() {
    let mut tb = TableBuilder::new();
    tb.add_parts(Some(b"k0"), Some(b"v0"), 10, [(&b"h0"[..], Some(&b"x"[..]))]);
    tb.add_parts(
        None,
        Some(b"v1"),
        11,
        [(&b"h1"[..], None), (&b"h2"[..], Some(&b""[..]))],
    );
    let good = tb.build().unwrap();
    let rd = |at: usize| i32::from_le_bytes(good[at..at + 4].try_into().unwrap()) as usize;
    let (n, hn, hoff) = (rd(8), rd(20), rd(28));
    let data = hoff + hn * 16;
    let (stride, hstride) = (104usize, 24usize);
    let new_hoff = 40 + n * stride;
    let new_data = new_hoff + hn * hstride;
    let shift = |v: i32| if v < 0 { v } else { v + (new_data - data) as i32 };
    let mut b = good[..40].to_vec();
    for i in 0..n {
        let mut e = good[40 + i * 96..40 + (i + 1) * 96].to_vec();
        for f in [24, 32] {
            if i32::from_le_bytes(e[f + 4..f + 8].try_into().unwrap()) >= 0 {
                let v = shift(i32::from_le_bytes(e[f..f + 4].try_into().unwrap()));
                e[f..f + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        e.extend_from_slice(&[0xee; 8]);
        b.extend_from_slice(&e);
    }
    for j in 0..hn {
        let mut e = good[hoff + j * 16..hoff + (j + 1) * 16].to_vec();
        for f in [0, 8] {
            if i32::from_le_bytes(e[f + 4..f + 4 + 4].try_into().unwrap()) >= 0 {
                let v = shift(i32::from_le_bytes(e[f..f + 4].try_into().unwrap()));
                e[f..f + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        e.extend_from_slice(&[0xee; 8]);
        b.extend_from_slice(&e);
    }
    b.extend_from_slice(&good[data..]);
    for (at, v) in [(12, stride), (24, hstride), (28, new_hoff), (36, b.len())] {
        b[at..at + 4].copy_from_slice(&(v as i32).to_le_bytes());
    }
    let (wide, narrow) = (
        RecordTable::from_bytes(b).unwrap(),
        RecordTable::from_bytes(good).unwrap(),
    );
    let recs = |t: &RecordTable| t.iter().map(|r| r.to_record()).collect::<Vec<_>>();
    assert_eq!(recs(&wide), recs(&narrow));
    assert_eq!(wide.get(1).unwrap().headers().nth(1).unwrap().key, b"h2");
    // And the library reads it the same way.
    let field = BatchRef {
        first_record: 0,
        record_count: wide.len(),
        options: BatchOptions::default(),
    };
    let frame = kwire::encode_request_records(
        &produce_header(9),
        &produce_body(9, &[field.to_value()]),
        wide.as_bytes(),
    )
    .unwrap();
    let d = kwire::decode_request_frame_records(&frame, &DecodeOptions::default()).unwrap();
    let got: Vec<_> = d
        .table()
        .iter()
        .map(|r| (r.key(), r.value(), r.timestamp(), r.headers().count()))
        .collect();
    assert_eq!(
        got,
        [
            (Some(&b"k0"[..]), Some(&b"v0"[..]), 10, 1),
            (None, Some(&b"v1"[..]), 11, 2)
        ]
    );
}

/// Layout 3 borrows the frame: the records of an uncompressed batch are slices of it, those
/// of a compressed one of the table; the table's bytes read again only with the frame (or
/// an equal copy of it, whose slices they then are); a bad source is refused.
#[test]
fn layout_3_tables_borrow_the_frame() {
    let vectors = record_vectors();
    let by_name = |n: &str| {
        vectors
            .iter()
            .find(|v| v["name"] == n)
            .unwrap_or_else(|| panic!("no vector {}", n))
    };
    let (plain, zstd) = (by_name("v2-none"), by_name("v2-zstd"));
    let body = fetch_body(12, &[plain["bytes"].clone(), zstd["bytes"].clone()]);
    let frame = kwire::encode_response(1, 12, &json!({"correlationId": 5}), &body).unwrap();
    let d = kwire::decode_response_frame_records_borrowed(&frame, 1, 12, &DecodeOptions::default()).unwrap();
    let owned = kwire::decode_response_frame_records(&frame, 1, 12, &DecodeOptions::default()).unwrap();
    let parts = d.partitions().unwrap();
    assert_eq!(parts.len(), 2);
    let (n_plain, n_zstd) = (parts[0].records.len(), parts[1].records.len());
    assert!(n_plain > 0 && n_zstd > 0);
    let mut values = 0;
    for r in parts[0].records {
        assert_eq!((r.source(), r.compression()), (Source::Input, Compression::None));
        if let Some(v) = r.value().filter(|v| !v.is_empty()) {
            assert!(frame.as_ptr_range().contains(&v.as_ptr()), "a value outside the frame");
            values += 1;
        }
        assert!(
            parts_of(&r).iter().all(|s| inside(&frame, s)),
            "a slice outside the frame"
        );
    }
    assert!(values > 0);
    for r in parts[1].records {
        assert_eq!((r.source(), r.compression()), (Source::Table, Compression::Zstd));
        assert!(
            parts_of(&r).iter().all(|s| inside(d.table().as_bytes(), s)),
            "a decompressed slice outside the table"
        );
    }
    assert_eq!(d.table().input_records(), n_plain);
    assert!(d.table().as_bytes().len() < owned.table().as_bytes().len());
    assert!(format!("{:?}", d.table()).contains("input_records"));

    // The bytes alone are not a readable table; with the frame, or an equal copy, they are.
    let bytes = d.table().as_bytes().to_vec();
    let e = RecordTable::from_bytes(bytes.clone()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Arg);
    assert!(e.text().contains("no frame was given"), "{}", e);
    let copy = frame.clone();
    let t = RecordTable::from_bytes_with_input(bytes.clone(), &copy).unwrap();
    assert_eq!(t.layout(), 3);
    let recs = |t: &RecordTable<'_>| t.iter().map(|r| r.to_record()).collect::<Vec<_>>();
    assert_eq!(recs(&t), recs(owned.table()));
    assert!(t
        .iter()
        .take(n_plain)
        .all(|r| parts_of(&r).iter().all(|s| inside(&copy, s))));
    // A frame too short for the spans, and an unknown source, are refused.
    let e = RecordTable::from_bytes_with_input(bytes.clone(), &frame[..frame.len() / 2]).unwrap_err();
    assert!(e.text().contains("outside the frame"), "{}", e);
    let rd = |at: usize| i32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let src0 = rd(16) + 92;
    let mut bad = bytes.clone();
    bad[src0..src0 + 4].copy_from_slice(&7i32.to_le_bytes());
    let e = RecordTable::from_bytes_with_input(bad, &frame).unwrap_err();
    assert!(e.text().contains("unknown source"), "{}", e);
    // An input record claiming a codec cannot be read from the frame.
    let mut bad = bytes.clone();
    bad[src0 - 92 + 64..src0 - 92 + 68].copy_from_slice(&1i32.to_le_bytes());
    assert!(RecordTable::from_bytes_with_input(bad, &frame).is_err());
    // Layout 2 bytes ignore the input.
    let t2 = RecordTable::from_bytes_with_input(owned.table().as_bytes().to_vec(), &frame).unwrap();
    assert_eq!(recs(&t2), recs(owned.table()));
    assert!(t2.input().is_empty() && t2.input_records() == 0);

    // Every cut and every single-byte change of the table: refused or read within bounds.
    for n in 0..bytes.len() {
        assert!(
            RecordTable::from_bytes_with_input(bytes[..n].to_vec(), &frame).is_err(),
            "cut at {}",
            n
        );
    }
    // (The table header, and the entries: the data area before them holds bytes only.)
    let entries = rd(16)..rd(28) + rd(20) * rd(24);
    for at in (0..48).chain(entries) {
        for x in [0x80u8, 0x01, 0xff] {
            let mut b = bytes.clone();
            b[at] ^= x;
            if let Ok(t) = RecordTable::from_bytes_with_input(b, &frame) {
                for r in t.iter() {
                    let _ = (r.key(), r.value(), r.headers().count(), r.to_record());
                }
            }
        }
    }

    // Threads may read a borrowed table while the frame lives (scoped threads).
    let n = std::thread::scope(|s| {
        s.spawn(|| d.table().iter().filter(|r| r.source() == Source::Input).count())
            .join()
    });
    assert_eq!(n.unwrap(), n_plain);

    // A Produce request of the compressed batch only: nothing points into the frame, so the
    // layout-3 table encodes like layout 2's; with the uncompressed one it is refused.
    let produce = kwire::encode_request(&produce_header(9), &produce_body(9, &[zstd["bytes"].clone()])).unwrap();
    let p3 = kwire::decode_request_frame_records_borrowed(&produce, &DecodeOptions::default()).unwrap();
    let p2 = kwire::decode_request_frame_records(&produce, &DecodeOptions::default()).unwrap();
    assert_eq!(p3.table().input_records(), 0);
    assert_eq!(
        kwire::encode_request_frame_records_json(p3.json(), p3.table().as_bytes()).unwrap(),
        kwire::encode_request_frame_records_json(p2.json(), p2.table().as_bytes()).unwrap()
    );
    let produce = kwire::encode_request(&produce_header(9), &produce_body(9, &[plain["bytes"].clone()])).unwrap();
    let p3 = kwire::decode_request_frame_records_borrowed(&produce, &DecodeOptions::default()).unwrap();
    let e = kwire::encode_request_frame_records_json(p3.json(), p3.table().as_bytes()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Json, "{}", e);
    // Copied through a TableBuilder, its records encode.
    let mut tb = TableBuilder::new();
    let field = tb.add_batch_views(p3.table(), &BatchOptions::default());
    let again = kwire::encode_request_records(
        &produce_header(9),
        &produce_body(9, &[field.to_value()]),
        &tb.build().unwrap(),
    )
    .unwrap();
    let back = kwire::decode_request_frame_records(&again, &DecodeOptions::default()).unwrap();
    assert_eq!(
        back.table()
            .iter()
            .map(|r| (r.to_record().key, r.to_record().value))
            .collect::<Vec<_>>(),
        p3.table()
            .iter()
            .map(|r| (r.to_record().key, r.to_record().value))
            .collect::<Vec<_>>()
    );

    // Options apply to the borrowed calls too.
    let zero = DecodeOptions {
        max_decompressed: Some(0),
        ..Default::default()
    };
    assert_eq!(
        kwire::decode_response_frame_records_borrowed(&frame, 1, 12, &zero)
            .unwrap_err()
            .kind(),
        ErrorKind::Arg
    );
    let small = DecodeOptions {
        max_decompressed: Some(16),
        ..Default::default()
    };
    let e = kwire::decode_response_frame_records_borrowed(&frame, 1, 12, &small).unwrap_err();
    let e2 = kwire::decode_response_frame_records(&frame, 1, 12, &small).unwrap_err();
    assert_eq!((e.kind(), e.text()), (e2.kind(), e2.text()));
}
