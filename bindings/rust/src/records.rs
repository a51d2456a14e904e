//! Record batches (magic 2) and legacy message sets (magic 0 and 1): the `records` field
//! of Produce requests and Fetch responses.
//!
//! ```
//! use kwire::records::{self, BatchSpec, Compression, NewRecord};
//! let batch = BatchSpec {
//!     base_offset: 100,
//!     records: vec![NewRecord {
//!         key: Some(b"k".to_vec()),
//!         value: Some(b"v".to_vec()),
//!         timestamp: 1_700_000_000_000,
//!         headers: vec![("trace".into(), Some(b"t1".to_vec()))],
//!     }],
//!     ..Default::default()
//! };
//! let bytes = records::encode(&batch, Compression::Zstd).unwrap();
//! let set = records::decode(&bytes, &Default::default()).unwrap();
//! assert_eq!(set.records[0].offset, 100);
//! assert_eq!(set.records[0].compression, Compression::Zstd);
//! assert_eq!(set.records[0].headers[0].key, b"trace");
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::table::layout::*;
use crate::table::RecordTable;
use crate::{abi, call, ffi, len32, parse, ptr, to_json};

/// A batch's compression codec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// Uncompressed.
    #[default]
    None,
    /// gzip.
    Gzip,
    /// snappy (Kafka's xerial framing for legacy sets).
    Snappy,
    /// lz4 (frame format).
    Lz4,
    /// zstd.
    Zstd,
}

impl Compression {
    /// The codec number of a batch's attributes (KW_COMPRESSION_*).
    pub fn code(self) -> i32 {
        match self {
            Compression::None => abi::KW_COMPRESSION_NONE,
            Compression::Gzip => abi::KW_COMPRESSION_GZIP,
            Compression::Snappy => abi::KW_COMPRESSION_SNAPPY,
            Compression::Lz4 => abi::KW_COMPRESSION_LZ4,
            Compression::Zstd => abi::KW_COMPRESSION_ZSTD,
        }
    }
    /// The codec of a codec number.
    pub fn from_code(code: i32) -> Option<Compression> {
        Some(match code {
            abi::KW_COMPRESSION_NONE => Compression::None,
            abi::KW_COMPRESSION_GZIP => Compression::Gzip,
            abi::KW_COMPRESSION_SNAPPY => Compression::Snappy,
            abi::KW_COMPRESSION_LZ4 => Compression::Lz4,
            abi::KW_COMPRESSION_ZSTD => Compression::Zstd,
            _ => return None,
        })
    }
    /// "none", "gzip", "snappy", "lz4" or "zstd".
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a record's timestamp means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum TimestampType {
    /// Magic 0: no timestamp.
    #[serde(rename = "NoTimestampType")]
    NoTimestamp,
    /// Set by the producer.
    #[default]
    CreateTime,
    /// Set by the broker when appending.
    LogAppendTime,
}

/// Where a record's schema reference was found (schema-registry conventions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SchemaSource {
    /// No schema reference.
    #[default]
    None,
    /// A prefix of the value (magic byte and schema id).
    ValuePrefix,
    /// A record header.
    Header,
}

/// A record header, with its exact bytes (Kafka's header keys are strings; see
/// [`Header::key_str`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Header {
    /// The key's bytes.
    pub key: Vec<u8>,
    /// The value; None when null.
    pub value: Option<Vec<u8>>,
}

impl Header {
    /// The key as a string, when it is valid UTF-8.
    pub fn key_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.key).ok()
    }
}

/// One record, with the fields of the batch it came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    /// The record's offset.
    pub offset: i64,
    /// Its timestamp (-1 for magic 0).
    pub timestamp: i64,
    /// What the timestamp means.
    pub timestamp_type: TimestampType,
    /// The key; None when null (null and empty differ).
    pub key: Option<Vec<u8>>,
    /// The value; None when null.
    pub value: Option<Vec<u8>>,
    /// Headers in wire order, duplicates kept.
    pub headers: Vec<Header>,
    /// The batch's producer id (-1 when none).
    pub producer_id: i64,
    /// The batch's producer epoch (-1 when none).
    pub producer_epoch: i16,
    /// The record's sequence (-1 when none).
    pub sequence: i32,
    /// The batch's partition leader epoch (-1 for legacy messages).
    pub leader_epoch: i32,
    /// 0, 1 or 2.
    pub magic: i8,
    /// The codec of the batch (or legacy wrapper) that held the record.
    pub compression: Compression,
    /// Part of a transaction.
    pub transactional: bool,
    /// A control record (transaction marker, leader change, ...).
    pub control: bool,
    /// The control record's type (0 ABORT, 1 COMMIT, 2 LEADER_CHANGE, ...); None otherwise.
    pub control_type: Option<i16>,
    /// Where a schema reference was found.
    pub schema_source: SchemaSource,
    /// The schema id, when found.
    pub schema_id: Option<i32>,
    /// The schema version, when found.
    pub schema_version: Option<i32>,
}

impl Record {
    /// The key as UTF-8 text, decoded now: `Ok(None)` when null, an error when the bytes
    /// are not UTF-8 (`String::from_utf8_lossy(r.key.as_deref().unwrap_or_default())`
    /// when invalid bytes should become U+FFFD).
    pub fn key_str(&self) -> std::result::Result<Option<&str>, std::str::Utf8Error> {
        self.key.as_deref().map(std::str::from_utf8).transpose()
    }
    /// The value as UTF-8 text, as [`Record::key_str`].
    pub fn value_str(&self) -> std::result::Result<Option<&str>, std::str::Utf8Error> {
        self.value.as_deref().map(std::str::from_utf8).transpose()
    }
}

/// The records of a records field.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RecordSet {
    /// Every record, batch after batch.
    pub records: Vec<Record>,
    /// The size of a partial batch at the end of the input, which Kafka's readers skip (a
    /// Fetch response may end with one).
    pub skipped_bytes: usize,
}

/// How to decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Verify batch checksums (CRC32C for magic 2, CRC32 for magic 0/1). Default true.
    pub verify_crc: bool,
    /// The most one compressed batch may decompress to; None: the library's 100 MiB.
    pub max_decompressed: Option<u32>,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            verify_crc: true,
            max_decompressed: None,
        }
    }
}

impl DecodeOptions {
    pub(crate) fn args(&self) -> Result<(i32, i32)> {
        let flags = if self.verify_crc { 0 } else { abi::KW_RECORDS_SKIP_CRC };
        let max = match self.max_decompressed {
            None => 0,
            Some(0) => return Err(Error::new(ErrorKind::Arg, "kwire: max_decompressed of 0")),
            Some(m) => {
                i32::try_from(m).map_err(|_| Error::new(ErrorKind::Arg, "kwire: max_decompressed above 2 GiB"))?
            }
        };
        Ok((flags, max))
    }
}

/// Decodes every batch and legacy message of `bytes`, decompressing gzip, snappy, lz4 and
/// zstd, through the library's binary record table (no JSON on the way).
pub fn decode(bytes: &[u8], opts: &DecodeOptions) -> Result<RecordSet> {
    let (flags, max) = opts.args()?;
    let il = len32("records", bytes.len())?;
    // SAFETY: bytes is valid for il bytes during the call; valid out-params.
    let b = call(|o, n| unsafe { ffi::kw_records_decode_table(ptr(bytes), il, flags, max, o, n) })?;
    read_table(b.as_slice()).ok_or_else(|| {
        Error::new(
            ErrorKind::Internal,
            "kwire: the library returned a malformed record table",
        )
    })
}

/// Decodes every batch and legacy message of `bytes` into a [`RecordTable`] (layout 1),
/// read in place: keys, values and headers are slices of the table, nothing is copied per
/// record.
///
/// ```
/// use kwire::records::{self, BatchSpec, NewRecord};
/// let batch = BatchSpec {
///     base_offset: 7,
///     records: vec![NewRecord { value: Some(b"v".to_vec()), ..Default::default() }],
///     ..Default::default()
/// };
/// let table = records::decode_table(&records::encode(&batch, Default::default()).unwrap(), &Default::default()).unwrap();
/// let r = table.get(0).unwrap();
/// assert_eq!((r.offset(), r.key(), r.value()), (7, None, Some(&b"v"[..])));
/// ```
pub fn decode_table(bytes: &[u8], opts: &DecodeOptions) -> Result<RecordTable<'static>> {
    let (flags, max) = opts.args()?;
    let il = len32("records", bytes.len())?;
    // SAFETY: bytes is valid for il bytes during the call; valid out-params.
    let b = call(|o, n| unsafe { ffi::kw_records_decode_table(ptr(bytes), il, flags, max, o, n) })?;
    RecordTable::from_lib(b)
}

/// Decodes the records of `bytes` into the library's JSON form of records (int64 values
/// as strings, keys and values as base64).
pub fn decode_json(bytes: &[u8], opts: &DecodeOptions) -> Result<Value> {
    let (flags, max) = opts.args()?;
    let il = len32("records", bytes.len())?;
    // SAFETY: as in decode.
    let b = call(|o, n| unsafe { ffi::kw_records_decode_json(ptr(bytes), il, flags, max, o, n) })?;
    parse("records JSON", &b)
}

struct Table<'a>(&'a [u8]);

impl Table<'_> {
    fn i32(&self, at: usize) -> Option<i32> {
        Some(i32::from_le_bytes(self.0.get(at..at.checked_add(4)?)?.try_into().ok()?))
    }
    fn i64(&self, at: usize) -> Option<i64> {
        Some(i64::from_le_bytes(self.0.get(at..at.checked_add(8)?)?.try_into().ok()?))
    }
    fn usize(&self, at: usize) -> Option<usize> {
        usize::try_from(self.i32(at)?).ok()
    }
    /// bytes at (offset, length) stored at `at`; None inside Some for length -1.
    fn bytes(&self, at: usize) -> Option<Option<Vec<u8>>> {
        let len = self.i32(at + 4)?;
        if len == -1 {
            return Some(None);
        }
        let off = self.usize(at)?;
        Some(Some(
            self.0.get(off..off.checked_add(usize::try_from(len).ok()?)?)?.to_vec(),
        ))
    }
}

fn read_table(buf: &[u8]) -> Option<RecordSet> {
    let t = Table(buf);
    if buf.get(0..4)? != TABLE_MAGIC || t.usize(TABLE_TOTAL_SIZE)? != buf.len() {
        return None;
    }
    let (count, stride, first) = (
        t.usize(TABLE_RECORD_COUNT)?,
        t.usize(TABLE_RECORD_STRIDE)?,
        t.usize(TABLE_RECORDS_OFFSET)?,
    );
    let (hcount, hstride, hfirst) = (
        t.usize(TABLE_HEADER_COUNT)?,
        t.usize(TABLE_HEADER_STRIDE)?,
        t.usize(TABLE_HEADERS_OFFSET)?,
    );
    if stride < REC_STRIDE || hstride < HDR_STRIDE {
        return None;
    }
    let mut records = Vec::with_capacity(count.min(buf.len() / stride));
    for i in 0..count {
        let e = first.checked_add(i.checked_mul(stride)?)?;
        let (h0, hn) = (t.usize(e + REC_FIRST_HEADER)?, t.usize(e + REC_HEADER_COUNT)?);
        if h0.checked_add(hn)? > hcount {
            return None;
        }
        let mut headers = Vec::with_capacity(hn);
        for j in h0..h0 + hn {
            let he = hfirst.checked_add(j.checked_mul(hstride)?)?;
            headers.push(Header {
                key: t.bytes(he + HDR_KEY_OFFSET)??,
                value: t.bytes(he + HDR_VALUE_OFFSET)?,
            });
        }
        let optional = |v: i32| if v == -1 { None } else { Some(v) };
        let flags = t.i32(e + REC_FLAGS)?;
        records.push(Record {
            offset: t.i64(e + REC_OFFSET)?,
            timestamp: t.i64(e + REC_TIMESTAMP)?,
            producer_id: t.i64(e + REC_PRODUCER_ID)?,
            key: t.bytes(e + REC_KEY_OFFSET)?,
            value: t.bytes(e + REC_VALUE_OFFSET)?,
            headers,
            sequence: t.i32(e + REC_SEQUENCE)?,
            leader_epoch: t.i32(e + REC_LEADER_EPOCH)?,
            producer_epoch: i16::try_from(t.i32(e + REC_PRODUCER_EPOCH)?).ok()?,
            magic: i8::try_from(t.i32(e + REC_MAGIC)?).ok()?,
            compression: Compression::from_code(t.i32(e + REC_COMPRESSION)?)?,
            timestamp_type: match t.i32(e + REC_TIMESTAMP_TYPE)? {
                -1 => TimestampType::NoTimestamp,
                0 => TimestampType::CreateTime,
                1 => TimestampType::LogAppendTime,
                _ => return None,
            },
            transactional: flags & 1 != 0,
            control: flags & 2 != 0,
            control_type: optional(t.i32(e + REC_CONTROL_TYPE)?).map(|c| c as i16),
            schema_source: match t.i32(e + REC_SCHEMA_SOURCE)? {
                1 => SchemaSource::ValuePrefix,
                2 => SchemaSource::Header,
                _ => SchemaSource::None,
            },
            schema_id: optional(t.i32(e + REC_SCHEMA_ID)?),
            schema_version: optional(t.i32(e + REC_SCHEMA_VERSION)?),
        });
    }
    Some(RecordSet {
        records,
        skipped_bytes: t.usize(TABLE_SKIPPED_BYTES)?,
    })
}

/// A record to encode.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize)]
pub struct NewRecord {
    /// The key; None for null.
    #[serde(with = "crate::json::base64_bytes")]
    pub key: Option<Vec<u8>>,
    /// The value; None for null.
    #[serde(with = "crate::json::base64_bytes")]
    pub value: Option<Vec<u8>>,
    /// Its timestamp (milliseconds).
    #[serde(with = "crate::json::int64_string")]
    pub timestamp: i64,
    /// Headers: key and value (None for null). Magic 2 only.
    #[serde(serialize_with = "ser_headers")]
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

fn ser_headers<S: serde::Serializer>(h: &[(String, Option<Vec<u8>>)], s: S) -> std::result::Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct H<'a> {
        key: &'a str,
        #[serde(with = "crate::json::base64_bytes")]
        value: &'a Option<Vec<u8>>,
    }
    s.collect_seq(h.iter().map(|(k, v)| H { key: k, value: v }))
}

/// A batch to encode ([`encode`]): what Kafka's producer puts in a batch header, and the
/// records. `Default` gives a plain magic 2 batch at offset 0 without a producer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchSpec {
    /// 2, or 0/1 for a legacy message set.
    pub magic: i8,
    /// The first record's offset.
    #[serde(with = "crate::json::int64_string")]
    pub base_offset: i64,
    /// -1 when unknown.
    pub partition_leader_epoch: i32,
    /// -1 when none.
    #[serde(with = "crate::json::int64_string")]
    pub producer_id: i64,
    /// -1 when none.
    pub producer_epoch: i16,
    /// -1 when none.
    pub base_sequence: i32,
    /// Part of a transaction.
    pub transactional: bool,
    /// CreateTime or LogAppendTime.
    pub timestamp_type: TimestampType,
    /// The broker's append time for LogAppendTime (-1 otherwise).
    #[serde(with = "crate::json::int64_string")]
    pub log_append_time: i64,
    /// Compression level on the codec's scale; 0 = the codec's default.
    pub level: i32,
    /// The records: record i gets offset base_offset + i.
    pub records: Vec<NewRecord>,
}

impl Default for BatchSpec {
    fn default() -> Self {
        BatchSpec {
            magic: 2,
            base_offset: 0,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            transactional: false,
            timestamp_type: TimestampType::CreateTime,
            log_append_time: -1,
            level: 0,
            records: Vec::new(),
        }
    }
}

/// Encodes one record batch (or legacy message set) the way Kafka's producer does,
/// compressed with `compression`: the bytes of a ProduceRequest partition's records.
pub fn encode(batch: &BatchSpec, compression: Compression) -> Result<Vec<u8>> {
    encode_raw(&to_json(batch)?, compression)
}

/// Encodes a batch from the library's JSON input form (see kwire.h, kw_records_encode).
pub fn encode_json(batch: &Value, compression: Compression) -> Result<Vec<u8>> {
    encode_raw(&to_json(batch)?, compression)
}

fn encode_raw(json: &[u8], compression: Compression) -> Result<Vec<u8>> {
    let jl = len32("JSON", json.len())?;
    // SAFETY: json is valid for jl bytes during the call; valid out-params.
    let b = call(|o, n| unsafe { ffi::kw_records_encode(ptr(json), jl, compression.code(), o, n) })?;
    Ok(b.as_slice().to_vec())
}
