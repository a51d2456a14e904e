//! Record tables: the library's flat binary form of records (kwire.h, "record table"), and
//! whole frames decoded with their records in one table (ABI 1.1).
//!
//! [`crate::decode_request_frame_records`] and [`crate::decode_response_frame_records`]
//! decode a frame and every records field in it (the record batches of Produce requests,
//! Fetch and ShareFetch responses, ...) in one call. The result, a [`FrameRecords`], holds
//! the frame's JSON form, in which each records field that is not null is a small object
//! naming a range of the table ([`RecordsField`]), and the [`RecordTable`] itself, whose
//! records ([`RecordView`]) lend out their keys, values and headers as slices of the
//! table's bytes: nothing is copied per record.
//!
//! [`crate::decode_request_frame_records_borrowed`] and
//! [`crate::decode_response_frame_records_borrowed`] (ABI 1.2) go one step further: the
//! table (layout 3) holds only the records that had to be decompressed, and every record
//! stored uncompressed in the frame lends out slices of the frame itself
//! ([`Source::Input`]). Such a [`FrameRecords`] borrows the frame (its lifetime `'f`) and
//! cannot outlive it.
//!
//! [`crate::encode_request_frame_records`] goes the other way: a request frame whose records
//! fields refer to a table — one a decode returned, or one built with [`TableBuilder`] —
//! with the batch options of each field ([`BatchOptions`]: compression, level, magic,
//! producer fields, ...).
//!
//! ```
//! use kwire::records::{Compression, NewRecord};
//! use kwire::table::{BatchOptions, TableBuilder};
//! use serde_json::json;
//!
//! // A Produce request whose one partition carries two records, compressed with zstd.
//! let mut table = TableBuilder::new();
//! let batch = table.add_batch(
//!     &[
//!         NewRecord { key: Some(b"k1".to_vec()), value: Some(b"v1".to_vec()), timestamp: 1_700_000_000_000, ..Default::default() },
//!         NewRecord { key: None, value: Some(b"v2".to_vec()), timestamp: 1_700_000_000_001, ..Default::default() },
//!     ],
//!     &BatchOptions { compression: Compression::Zstd, base_offset: 41, ..Default::default() },
//! );
//! let header = json!({"requestApiKey": 0, "requestApiVersion": 9, "correlationId": 1, "clientId": "doc"});
//! let body = json!({"acks": -1, "timeoutMs": 1000,
//!                   "topicData": [{"name": "t", "partitionData": [{"index": 0, "records": batch}]}]});
//! let frame = kwire::encode_request_records(&header, &body, &table.build().unwrap()).unwrap();
//!
//! // And back: one table for the whole frame.
//! let decoded = kwire::decode_request_frame_records(&frame, &Default::default()).unwrap();
//! let parts = decoded.partitions().unwrap();
//! assert_eq!((parts[0].topic.as_deref(), parts[0].partition), (Some("t"), 0));
//! let recs: Vec<_> = parts[0].records.iter().collect();
//! assert_eq!(recs[1].offset(), 42);
//! assert_eq!(recs[1].key(), None);
//! assert_eq!(recs[1].value(), Some(&b"v2"[..]));
//! assert_eq!(recs[1].compression(), Compression::Zstd);
//! ```

use std::ops::Range;

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};
use crate::records::{Compression, Header, NewRecord, Record, SchemaSource, TimestampType};
use crate::{LibBuf, RequestFrame, ResponseFrame};

/// The record table's layout: byte offsets of the fields of its header, of a record entry
/// and of a header entry, as kwire.h defines them (`KW_TABLE_*`, `KW_REC_*`, `KW_HDR_*`,
/// `KW_SOURCE_*`; the crate's tests hold every name here to kwire.h's value). Integers are
/// little-endian; an entry's (offset, length) pair has length -1 for null.
pub mod layout {
    /// The 4 bytes a table starts with.
    pub const TABLE_MAGIC: &[u8; 4] = crate::abi::KW_TABLE_MAGIC;
    /// i32: the layout version (1, 2 or 3).
    pub const TABLE_LAYOUT: usize = crate::abi::KW_TABLE_LAYOUT as usize;
    /// i32: the number of record entries.
    pub const TABLE_RECORD_COUNT: usize = crate::abi::KW_TABLE_RECORD_COUNT as usize;
    /// i32: bytes per record entry.
    pub const TABLE_RECORD_STRIDE: usize = crate::abi::KW_TABLE_RECORD_STRIDE as usize;
    /// i32: the offset of record entry 0.
    pub const TABLE_RECORDS_OFFSET: usize = crate::abi::KW_TABLE_RECORDS_OFFSET as usize;
    /// i32: the number of header entries (of all records together).
    pub const TABLE_HEADER_COUNT: usize = crate::abi::KW_TABLE_HEADER_COUNT as usize;
    /// i32: bytes per header entry.
    pub const TABLE_HEADER_STRIDE: usize = crate::abi::KW_TABLE_HEADER_STRIDE as usize;
    /// i32: the offset of header entry 0.
    pub const TABLE_HEADERS_OFFSET: usize = crate::abi::KW_TABLE_HEADERS_OFFSET as usize;
    /// i32: the size of a partial batch at the end of the input (layout 1).
    pub const TABLE_SKIPPED_BYTES: usize = crate::abi::KW_TABLE_SKIPPED_BYTES as usize;
    /// i32: the table's size in bytes.
    pub const TABLE_TOTAL_SIZE: usize = crate::abi::KW_TABLE_TOTAL_SIZE as usize;
    /// i32: the offset of the frame JSON (layouts 2 and 3).
    pub const TABLE_JSON_OFFSET: usize = crate::abi::KW_TABLE_JSON_OFFSET as usize;
    /// i32: the length of the frame JSON (layouts 2 and 3).
    pub const TABLE_JSON_LENGTH: usize = crate::abi::KW_TABLE_JSON_LENGTH as usize;
    /// The size of the table header of layout 1.
    pub const TABLE_HEADER_SIZE_1: usize = crate::abi::KW_TABLE_HEADER_SIZE_1 as usize;
    /// The size of the table header of layouts 2 and 3.
    pub const TABLE_HEADER_SIZE_2: usize = crate::abi::KW_TABLE_HEADER_SIZE_2 as usize;

    /// i64: the record's offset.
    pub const REC_OFFSET: usize = crate::abi::KW_REC_OFFSET as usize;
    /// i64: its timestamp.
    pub const REC_TIMESTAMP: usize = crate::abi::KW_REC_TIMESTAMP as usize;
    /// i64: the batch's producer id.
    pub const REC_PRODUCER_ID: usize = crate::abi::KW_REC_PRODUCER_ID as usize;
    /// i32: the key's offset.
    pub const REC_KEY_OFFSET: usize = crate::abi::KW_REC_KEY_OFFSET as usize;
    /// i32: the key's length (-1: null).
    pub const REC_KEY_LENGTH: usize = crate::abi::KW_REC_KEY_LENGTH as usize;
    /// i32: the value's offset.
    pub const REC_VALUE_OFFSET: usize = crate::abi::KW_REC_VALUE_OFFSET as usize;
    /// i32: the value's length (-1: null).
    pub const REC_VALUE_LENGTH: usize = crate::abi::KW_REC_VALUE_LENGTH as usize;
    /// i32: the index of the record's first header entry.
    pub const REC_FIRST_HEADER: usize = crate::abi::KW_REC_FIRST_HEADER as usize;
    /// i32: the number of its header entries.
    pub const REC_HEADER_COUNT: usize = crate::abi::KW_REC_HEADER_COUNT as usize;
    /// i32: the record's sequence.
    pub const REC_SEQUENCE: usize = crate::abi::KW_REC_SEQUENCE as usize;
    /// i32: the batch's partition leader epoch.
    pub const REC_LEADER_EPOCH: usize = crate::abi::KW_REC_LEADER_EPOCH as usize;
    /// i32: the batch's producer epoch.
    pub const REC_PRODUCER_EPOCH: usize = crate::abi::KW_REC_PRODUCER_EPOCH as usize;
    /// i32: 0, 1 or 2.
    pub const REC_MAGIC: usize = crate::abi::KW_REC_MAGIC as usize;
    /// i32: the codec (`KW_COMPRESSION_*`).
    pub const REC_COMPRESSION: usize = crate::abi::KW_REC_COMPRESSION as usize;
    /// i32: -1 none, 0 CreateTime, 1 LogAppendTime.
    pub const REC_TIMESTAMP_TYPE: usize = crate::abi::KW_REC_TIMESTAMP_TYPE as usize;
    /// i32: bit 0 transactional, bit 1 control.
    pub const REC_FLAGS: usize = crate::abi::KW_REC_FLAGS as usize;
    /// i32: the control record's type, -1 for a data record.
    pub const REC_CONTROL_TYPE: usize = crate::abi::KW_REC_CONTROL_TYPE as usize;
    /// i32: where a schema reference was found (0 none, 1 value prefix, 2 headers).
    pub const REC_SCHEMA_SOURCE: usize = crate::abi::KW_REC_SCHEMA_SOURCE as usize;
    /// i32: the schema id (-1 when unknown).
    pub const REC_SCHEMA_ID: usize = crate::abi::KW_REC_SCHEMA_ID as usize;
    /// i32: the schema version (-1 when unknown).
    pub const REC_SCHEMA_VERSION: usize = crate::abi::KW_REC_SCHEMA_VERSION as usize;
    /// i32, layout 3: where the record's key, value and header spans point
    /// ([`SOURCE_TABLE`], [`SOURCE_INPUT`]); 0 in layouts 1 and 2.
    pub const REC_SOURCE: usize = crate::abi::KW_REC_SOURCE as usize;
    /// The record stride of layouts 1 to 3 (a table may have a larger one).
    pub const REC_STRIDE: usize = crate::abi::KW_REC_STRIDE as usize;

    /// i32: the header key's offset.
    pub const HDR_KEY_OFFSET: usize = crate::abi::KW_HDR_KEY_OFFSET as usize;
    /// i32: the header key's length.
    pub const HDR_KEY_LENGTH: usize = crate::abi::KW_HDR_KEY_LENGTH as usize;
    /// i32: the header value's offset.
    pub const HDR_VALUE_OFFSET: usize = crate::abi::KW_HDR_VALUE_OFFSET as usize;
    /// i32: the header value's length (-1: null).
    pub const HDR_VALUE_LENGTH: usize = crate::abi::KW_HDR_VALUE_LENGTH as usize;
    /// The header stride of layouts 1 to 3 (a table may have a larger one).
    pub const HDR_STRIDE: usize = crate::abi::KW_HDR_STRIDE as usize;

    /// [`REC_SOURCE`]: the spans are offsets into the table.
    pub const SOURCE_TABLE: i32 = crate::abi::KW_SOURCE_TABLE;
    /// [`REC_SOURCE`]: the spans are offsets into the input the decode call was given.
    pub const SOURCE_INPUT: i32 = crate::abi::KW_SOURCE_INPUT;

    /// The layout of a table of one records field (`kw_records_decode_table`).
    pub const LAYOUT_RECORDS: i32 = 1;
    /// The layout of a frame's table (`kw_decode_*_frame_records`).
    pub const LAYOUT_FRAME: i32 = 2;
    /// The layout of a frame's table whose uncompressed records stay in the frame
    /// (`KW_RECORDS_INPUT_SPANS`).
    pub const LAYOUT_INPUT: i32 = 3;
    /// The layout of a frame's table as columns (`KW_RECORDS_COLUMNS`, ABI 1.4).
    pub const LAYOUT_COLUMNS: i32 = 4;
    /// The flag of `kw_decode_*_frame_records` that asks for layout 3.
    pub const RECORDS_INPUT_SPANS: i32 = crate::abi::KW_RECORDS_INPUT_SPANS;
    /// The flag of `kw_decode_*_frame_records` that asks for layout 4.
    pub const RECORDS_COLUMNS: i32 = crate::abi::KW_RECORDS_COLUMNS;

    /// Layout 4, i32: the number of batch entries.
    pub const TABLE_BATCH_COUNT: usize = crate::abi::KW_TABLE_BATCH_COUNT as usize;
    /// Layout 4, i32: bytes per batch entry.
    pub const TABLE_BATCH_STRIDE: usize = crate::abi::KW_TABLE_BATCH_STRIDE as usize;
    /// Layout 4, i32: the offset of batch entry 0.
    pub const TABLE_BATCHES_OFFSET: usize = crate::abi::KW_TABLE_BATCHES_OFFSET as usize;
    /// Layout 4, i32: the offset of the i64 offsets column.
    pub const TABLE_COL_OFFSETS: usize = crate::abi::KW_TABLE_COL_OFFSETS as usize;
    /// Layout 4, i32: the offset of the i64 timestamps column.
    pub const TABLE_COL_TIMESTAMPS: usize = crate::abi::KW_TABLE_COL_TIMESTAMPS as usize;
    /// Layout 4, i32: the offset of the keys column, (offset, length) pairs.
    pub const TABLE_COL_KEYS: usize = crate::abi::KW_TABLE_COL_KEYS as usize;
    /// Layout 4, i32: the offset of the values column, (offset, length) pairs.
    pub const TABLE_COL_VALUES: usize = crate::abi::KW_TABLE_COL_VALUES as usize;
    /// Layout 4, i32: the offset of the header index column, (first header, count) pairs.
    pub const TABLE_COL_HEADER_INDEX: usize = crate::abi::KW_TABLE_COL_HEADER_INDEX as usize;
    /// Layout 4, i32: the offset of the i32 batch index column.
    pub const TABLE_COL_BATCH_INDEX: usize = crate::abi::KW_TABLE_COL_BATCH_INDEX as usize;
    /// Layout 4, i32: the offset of the u8 sources column.
    pub const TABLE_COL_SOURCES: usize = crate::abi::KW_TABLE_COL_SOURCES as usize;
    /// Layout 4, i32: the offset of the i32 control types column.
    pub const TABLE_COL_CONTROL_TYPES: usize = crate::abi::KW_TABLE_COL_CONTROL_TYPES as usize;
    /// Layout 4, i32: the offset of the schemas column, (source, id, version) triples.
    pub const TABLE_COL_SCHEMAS: usize = crate::abi::KW_TABLE_COL_SCHEMAS as usize;
    /// The size of the table header of layout 4.
    pub const TABLE_HEADER_SIZE_4: usize = crate::abi::KW_TABLE_HEADER_SIZE_4 as usize;

    /// A layout-4 batch entry, i64: its base offset.
    pub const RB_BASE_OFFSET: usize = crate::abi::KW_RB_BASE_OFFSET as usize;
    /// i64: the producer id (-1 when none).
    pub const RB_PRODUCER_ID: usize = crate::abi::KW_RB_PRODUCER_ID as usize;
    /// i32: the index of its first record.
    pub const RB_FIRST_RECORD: usize = crate::abi::KW_RB_FIRST_RECORD as usize;
    /// i32: its number of records.
    pub const RB_RECORD_COUNT: usize = crate::abi::KW_RB_RECORD_COUNT as usize;
    /// i32: the base sequence (-1 when none).
    pub const RB_BASE_SEQUENCE: usize = crate::abi::KW_RB_BASE_SEQUENCE as usize;
    /// i32: the partition leader epoch.
    pub const RB_LEADER_EPOCH: usize = crate::abi::KW_RB_LEADER_EPOCH as usize;
    /// i32: the producer epoch.
    pub const RB_PRODUCER_EPOCH: usize = crate::abi::KW_RB_PRODUCER_EPOCH as usize;
    /// i32: 0, 1 or 2.
    pub const RB_MAGIC: usize = crate::abi::KW_RB_MAGIC as usize;
    /// i32: the codec.
    pub const RB_COMPRESSION: usize = crate::abi::KW_RB_COMPRESSION as usize;
    /// i32: the timestamp type.
    pub const RB_TIMESTAMP_TYPE: usize = crate::abi::KW_RB_TIMESTAMP_TYPE as usize;
    /// i32: bit 0 transactional, bit 1 control.
    pub const RB_FLAGS: usize = crate::abi::KW_RB_FLAGS as usize;
    /// i32: where its records' spans point.
    pub const RB_SOURCE: usize = crate::abi::KW_RB_SOURCE as usize;
    /// The batch entry's size.
    pub const RB_STRIDE: usize = crate::abi::KW_RB_STRIDE as usize;
}

use layout::*;

/// Where a record's key, value and headers are ([`RecordView::source`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// In the table's own bytes: every record of layouts 1 and 2, and the records of
    /// layout 3 that were decompressed, copied from a legacy message or a control batch.
    Table,
    /// In the frame the table was decoded from (layout 3: a record stored uncompressed).
    Input,
}

enum Bytes {
    Lib(LibBuf),
    Owned(Vec<u8>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Lib(b) => b.as_slice(),
            Bytes::Owned(v) => v,
        }
    }
}

/// A record table: records with their keys, values and headers in one buffer, read in
/// place. The library's tables are freed (with the library's `kw_free`) when the
/// `RecordTable` is dropped; the records it lends out ([`RecordView`]) cannot outlive it.
///
/// A layout-3 table ([`crate::decode_request_frame_records_borrowed`]) also borrows the
/// frame it was decoded from, for `'f`: the records that were stored uncompressed lend
/// out slices of the frame. Every other table owns all its bytes and is a
/// `RecordTable<'static>`.
///
/// Every entry is checked when the table is made, so reading it never fails and never
/// reads outside the buffer (or the frame).
pub struct RecordTable<'f> {
    bytes: Bytes,
    input: &'f [u8],
    input_records: usize,
    layout: i32,
    count: usize,
    stride: usize,
    records_offset: usize,
    header_count: usize,
    header_stride: usize,
    headers_offset: usize,
    skipped_bytes: usize,
    json: Option<Range<usize>>,
}

impl std::fmt::Debug for RecordTable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordTable")
            .field("layout", &self.layout)
            .field("records", &self.count)
            .field("headers", &self.header_count)
            .field("skipped_bytes", &self.skipped_bytes)
            .field("size", &self.bytes.as_slice().len())
            .field("input_records", &self.input_records)
            .field("input_size", &self.input.len())
            .finish()
    }
}

fn rd32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn rd64(b: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_le_bytes(b.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

fn rdusize(b: &[u8], at: usize) -> Option<usize> {
    usize::try_from(rd32(b, at)?).ok()
}

/// Checks a (offset, length) pair stored at `at` of `b`: length -1 (null; then offset
/// 0 is not required) or a range inside `base`.
fn span_ok(b: &[u8], at: usize, base: &[u8], nullable: bool) -> Option<()> {
    let len = rd32(b, at + 4)?;
    if len == -1 {
        return nullable.then_some(());
    }
    let off = rdusize(b, at)?;
    (off.checked_add(usize::try_from(len).ok()?)? <= base.len()).then_some(())
}

/// The bytes of a layout-4 table with record entries (layout 3's format, stride
/// [`REC_STRIDE`]) appended, made from its columns and batch table, and its header's
/// record stride, records offset and total size set to them. Every column and the batch
/// table must lie inside the table, and every record name a batch that holds it; the
/// entries are then checked as any table's are.
fn rows_of_columns(b: &[u8]) -> std::result::Result<Vec<u8>, &'static str> {
    let bad = "a layout-4 column or batch entry runs past the end, or a record names no batch that holds it";
    let head = |at| rd32(b, at).and_then(|v| usize::try_from(v).ok()).ok_or(bad);
    if b.len() < TABLE_HEADER_SIZE_4 {
        return Err("a layout-4 table shorter than its 96-byte header");
    }
    let (n, nb, bstride) = (
        head(TABLE_RECORD_COUNT)?,
        head(TABLE_BATCH_COUNT)?,
        head(TABLE_BATCH_STRIDE)?,
    );
    if bstride < RB_STRIDE {
        return Err("a layout-4 batch stride below 56");
    }
    let col = |field: usize, per: usize, count: usize| -> std::result::Result<usize, &'static str> {
        let at = head(field)?;
        let end = count.checked_mul(per).and_then(|s| s.checked_add(at)).ok_or(bad)?;
        if end > b.len() {
            return Err(bad);
        }
        Ok(at)
    };
    let batches = col(TABLE_BATCHES_OFFSET, bstride, nb)?;
    let offsets = col(TABLE_COL_OFFSETS, 8, n)?;
    let timestamps = col(TABLE_COL_TIMESTAMPS, 8, n)?;
    let keys = col(TABLE_COL_KEYS, 8, n)?;
    let values = col(TABLE_COL_VALUES, 8, n)?;
    let hidx = col(TABLE_COL_HEADER_INDEX, 8, n)?;
    let bidx = col(TABLE_COL_BATCH_INDEX, 4, n)?;
    let sources = col(TABLE_COL_SOURCES, 1, n)?;
    let ctl = col(TABLE_COL_CONTROL_TYPES, 4, n)?;
    let schemas = col(TABLE_COL_SCHEMAS, 12, n)?;
    let mut out = b.to_vec();
    out.resize(b.len().next_multiple_of(8), 0);
    let recs = out.len();
    let w = |at: usize| rd32(b, at).unwrap_or(-1);
    let q = |at: usize| rd64(b, at).unwrap_or(-1);
    for i in 0..n {
        let bi = usize::try_from(w(bidx + 4 * i)).ok().filter(|&bi| bi < nb).ok_or(bad)?;
        let be = batches + bi * bstride;
        let first = usize::try_from(w(be + RB_FIRST_RECORD)).map_err(|_| bad)?;
        let count = usize::try_from(w(be + RB_RECORD_COUNT)).map_err(|_| bad)?;
        if i < first || i - first >= count {
            return Err(bad);
        }
        let source = i32::from(b[sources + i]);
        if source != w(be + RB_SOURCE) {
            return Err("a layout-4 record's source differs from its batch's");
        }
        let offset = q(offsets + 8 * i);
        let base = w(be + RB_BASE_SEQUENCE);
        let delta = offset.wrapping_sub(q(be + RB_BASE_OFFSET)) as i32;
        // Kafka's int arithmetic, which wraps.
        let sequence = if base < 0 {
            -1
        } else if base > i32::MAX.wrapping_sub(delta) {
            delta.wrapping_sub(i32::MAX - base).wrapping_sub(1)
        } else {
            base.wrapping_add(delta)
        };
        let mut e = [0u8; REC_STRIDE];
        e[REC_OFFSET..REC_OFFSET + 8].copy_from_slice(&offset.to_le_bytes());
        e[REC_TIMESTAMP..REC_TIMESTAMP + 8].copy_from_slice(&q(timestamps + 8 * i).to_le_bytes());
        e[REC_PRODUCER_ID..REC_PRODUCER_ID + 8].copy_from_slice(&q(be + RB_PRODUCER_ID).to_le_bytes());
        let words = [
            (REC_KEY_OFFSET, w(keys + 8 * i)),
            (REC_KEY_LENGTH, w(keys + 8 * i + 4)),
            (REC_VALUE_OFFSET, w(values + 8 * i)),
            (REC_VALUE_LENGTH, w(values + 8 * i + 4)),
            (REC_FIRST_HEADER, w(hidx + 8 * i)),
            (REC_HEADER_COUNT, w(hidx + 8 * i + 4)),
            (REC_SEQUENCE, sequence),
            (REC_LEADER_EPOCH, w(be + RB_LEADER_EPOCH)),
            (REC_PRODUCER_EPOCH, w(be + RB_PRODUCER_EPOCH)),
            (REC_MAGIC, w(be + RB_MAGIC)),
            (REC_COMPRESSION, w(be + RB_COMPRESSION)),
            (REC_TIMESTAMP_TYPE, w(be + RB_TIMESTAMP_TYPE)),
            (REC_FLAGS, w(be + RB_FLAGS)),
            (REC_CONTROL_TYPE, w(ctl + 4 * i)),
            (REC_SCHEMA_SOURCE, w(schemas + 12 * i)),
            (REC_SCHEMA_ID, w(schemas + 12 * i + 4)),
            (REC_SCHEMA_VERSION, w(schemas + 12 * i + 8)),
            (REC_SOURCE, source),
        ];
        for (at, v) in words {
            e[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&e);
    }
    let total = i32::try_from(out.len()).map_err(|_| "a layout-4 table too large to read")?;
    for (at, v) in [
        (TABLE_RECORD_STRIDE, REC_STRIDE as i32),
        (TABLE_RECORDS_OFFSET, recs as i32),
        (TABLE_TOTAL_SIZE, total),
    ] {
        out[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    Ok(out)
}

impl RecordTable<'static> {
    /// Reads a table from its bytes — one the library returned, or one built on the host
    /// ([`TableBuilder::build`]). A table whose header or entries do not fit the buffer, or
    /// whose entries hold values outside their ranges, is [`ErrorKind::Arg`]; so is a
    /// layout-3 table with records in the frame it was decoded from (read it with
    /// [`RecordTable::from_bytes_with_input`]).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<RecordTable<'static>> {
        RecordTable::new(Bytes::Owned(bytes), None)
            .map_err(|why| Error::new(ErrorKind::Arg, format!("kwire: bad record table: {}", why)))
    }

    /// A table the library returned: a malformed one is the library's bug.
    pub(crate) fn from_lib(buf: LibBuf) -> Result<RecordTable<'static>> {
        RecordTable::new(Bytes::Lib(buf), None).map_err(lib_error)
    }
}

fn lib_error(why: &str) -> Error {
    Error::new(
        ErrorKind::Internal,
        format!("kwire: the library returned a malformed record table: {}", why),
    )
}

impl<'f> RecordTable<'f> {
    /// Reads a table from its bytes and the input it was decoded from: a layout-3 table's
    /// records with [`Source::Input`] have their spans in `input` (the frame given to the
    /// decode call, unchanged). Tables of other layouts ignore `input`. Errors as
    /// [`RecordTable::from_bytes`]; a span outside `input` is [`ErrorKind::Arg`] too.
    pub fn from_bytes_with_input(bytes: Vec<u8>, input: &'f [u8]) -> Result<RecordTable<'f>> {
        RecordTable::new(Bytes::Owned(bytes), Some(input))
            .map_err(|why| Error::new(ErrorKind::Arg, format!("kwire: bad record table: {}", why)))
    }

    /// A layout-3 table the library returned for the frame `input`.
    pub(crate) fn from_lib_input(buf: LibBuf, input: &'f [u8]) -> Result<RecordTable<'f>> {
        RecordTable::new(Bytes::Lib(buf), Some(input)).map_err(lib_error)
    }

    fn new(bytes: Bytes, input: Option<&'f [u8]>) -> std::result::Result<RecordTable<'f>, &'static str> {
        // A layout-4 table (columns) is read through record entries made from its
        // columns, appended to a copy; its spans, header entries and JSON stay in place.
        let bytes = if rd32(bytes.as_slice(), TABLE_LAYOUT) == Some(LAYOUT_COLUMNS)
            && bytes.as_slice().starts_with(TABLE_MAGIC)
        {
            Bytes::Owned(rows_of_columns(bytes.as_slice())?)
        } else {
            bytes
        };
        let b = bytes.as_slice();
        let head = |at| rd32(b, at).ok_or("shorter than its header");
        if b.len() < TABLE_HEADER_SIZE_1 || &b[..4] != TABLE_MAGIC {
            return Err("no \"KWRT\" magic and 40-byte header");
        }
        let layout = head(TABLE_LAYOUT)?;
        if layout < LAYOUT_RECORDS {
            return Err("unknown layout version");
        }
        let nonneg = |v: i32| usize::try_from(v).map_err(|_| "a negative count, stride or offset");
        let count = nonneg(head(TABLE_RECORD_COUNT)?)?;
        let stride = nonneg(head(TABLE_RECORD_STRIDE)?)?;
        let records_offset = nonneg(head(TABLE_RECORDS_OFFSET)?)?;
        let header_count = nonneg(head(TABLE_HEADER_COUNT)?)?;
        let header_stride = nonneg(head(TABLE_HEADER_STRIDE)?)?;
        let headers_offset = nonneg(head(TABLE_HEADERS_OFFSET)?)?;
        let skipped_bytes = nonneg(head(TABLE_SKIPPED_BYTES)?)?;
        if nonneg(head(TABLE_TOTAL_SIZE)?)? != b.len() {
            return Err("total size differs from the buffer's length");
        }
        if stride < REC_STRIDE || header_stride < HDR_STRIDE {
            return Err("strides below layout 1's");
        }
        let fits = |off: usize, n: usize, stride: usize| {
            n.checked_mul(stride)
                .and_then(|s| s.checked_add(off))
                .is_some_and(|end| end <= b.len())
        };
        if !fits(records_offset, count, stride) || !fits(headers_offset, header_count, header_stride) {
            return Err("record or header entries run past the end");
        }
        let json = if layout >= LAYOUT_FRAME {
            if b.len() < TABLE_HEADER_SIZE_2 {
                return Err("a layout-2 table shorter than its 48-byte header");
            }
            let (off, len) = (nonneg(head(TABLE_JSON_OFFSET)?)?, nonneg(head(TABLE_JSON_LENGTH)?)?);
            if off.checked_add(len).is_none_or(|end| end > b.len()) {
                return Err("the frame JSON runs past the end");
            }
            if std::str::from_utf8(&b[off..off + len]).is_err() {
                return Err("the frame JSON is not UTF-8");
            }
            Some(off..off + len)
        } else {
            None
        };
        let mut input_records = 0;
        for i in 0..count {
            let e = records_offset + i * stride;
            // Layout 3 says per record where its spans point; layouts 1 and 2 hold 0 there.
            let source = if layout >= LAYOUT_INPUT {
                match rd32(b, e + REC_SOURCE) {
                    Some(SOURCE_TABLE) => Source::Table,
                    Some(SOURCE_INPUT) => Source::Input,
                    _ => return Err("a record entry of a layout-3 table names an unknown source"),
                }
            } else {
                Source::Table
            };
            let base = match (source, input) {
                (Source::Table, _) => b,
                (Source::Input, Some(input)) => input,
                (Source::Input, None) => {
                    return Err("a record points into the frame the table was decoded from, and no frame was given")
                }
            };
            let ok = (|| {
                span_ok(b, e + REC_KEY_OFFSET, base, true)?;
                span_ok(b, e + REC_VALUE_OFFSET, base, true)?;
                let (h0, hn) = (rdusize(b, e + REC_FIRST_HEADER)?, rdusize(b, e + REC_HEADER_COUNT)?);
                (h0.checked_add(hn)? <= header_count).then_some(())?;
                for j in h0..h0 + hn {
                    let h = headers_offset + j * header_stride;
                    span_ok(b, h + HDR_KEY_OFFSET, base, false)?;
                    span_ok(b, h + HDR_VALUE_OFFSET, base, true)?;
                }
                let compression = Compression::from_code(rd32(b, e + REC_COMPRESSION)?)?;
                // Only records stored uncompressed can be read from the frame.
                (source == Source::Table || compression == Compression::None).then_some(())?;
                (-1..=1).contains(&rd32(b, e + REC_TIMESTAMP_TYPE)?).then_some(())?;
                i16::try_from(rd32(b, e + REC_PRODUCER_EPOCH)?).ok()?;
                i8::try_from(rd32(b, e + REC_MAGIC)?).ok()?;
                let ct = rd32(b, e + REC_CONTROL_TYPE)?;
                (ct == -1 || i16::try_from(ct).is_ok()).then_some(())
            })();
            if ok.is_none() {
                return Err(if source == Source::Input {
                    "a record entry holds a range outside the frame, a value out of range, or is compressed"
                } else {
                    "a record entry holds a range outside the table or a value out of range"
                });
            }
            input_records += usize::from(source == Source::Input);
        }
        // Layouts 1 and 2: every header entry indexes the table, also one no record names.
        if layout < LAYOUT_INPUT {
            for j in 0..header_count {
                let h = headers_offset + j * header_stride;
                if span_ok(b, h + HDR_KEY_OFFSET, b, false)
                    .and_then(|_| span_ok(b, h + HDR_VALUE_OFFSET, b, true))
                    .is_none()
                {
                    return Err("a header entry holds a range outside the table (or a null key)");
                }
            }
        }
        Ok(RecordTable {
            bytes,
            input: if layout >= LAYOUT_INPUT {
                input.unwrap_or_default()
            } else {
                &[]
            },
            input_records,
            layout,
            count,
            stride,
            records_offset,
            header_count,
            header_stride,
            headers_offset,
            skipped_bytes,
            json,
        })
    }

    /// The table's bytes (to pass to [`crate::encode_request_frame_records`], or to keep;
    /// a layout-3 table's input records point into [`RecordTable::input`]).
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }

    /// The layout version: 1 for a table of one records field, 2 for a frame's table, 3
    /// for a frame's table whose uncompressed records stay in the frame, 4 for a frame's
    /// table as columns (another host's `KW_RECORDS_COLUMNS` call; the crate reads it
    /// through record entries made from the columns, appended to a copy that
    /// [`RecordTable::as_bytes`] returns).
    pub fn layout(&self) -> i32 {
        self.layout
    }

    /// Layout 3: the frame the table was decoded from, whose bytes the records with
    /// [`Source::Input`] lend out; empty for other tables.
    pub fn input(&self) -> &'f [u8] {
        self.input
    }

    /// The number of records with [`Source::Input`] (0 but in layout 3). A table with such
    /// records cannot be passed to [`crate::encode_request_frame_records`] (the library
    /// refuses it with [`ErrorKind::Json`]): decode the frame with
    /// [`crate::decode_request_frame_records`] for that, or copy the records into a
    /// [`TableBuilder`].
    pub fn input_records(&self) -> usize {
        self.input_records
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the table holds no record.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The number of record headers of all records together.
    pub fn header_count(&self) -> usize {
        self.header_count
    }

    /// Layout 1: the size of a partial batch at the end of the input, which Kafka's readers
    /// skip. Layout 2 reports 0 here; each records field has its own
    /// ([`RecordsField::skipped_bytes`]).
    pub fn skipped_bytes(&self) -> usize {
        self.skipped_bytes
    }

    /// Layout 2: the frame's JSON text stored in the table.
    pub fn json(&self) -> Option<&str> {
        let r = self.json.clone()?;
        std::str::from_utf8(self.bytes.as_slice().get(r)?).ok()
    }

    /// Record `i`, or None past the end.
    pub fn get(&self, i: usize) -> Option<RecordView<'_>> {
        (i < self.count).then(|| RecordView {
            t: self,
            e: self.records_offset + i * self.stride,
        })
    }

    /// Every record, in table order.
    pub fn iter(&self) -> RecordIter<'_> {
        RecordIter {
            t: self,
            next: 0,
            end: self.count,
        }
    }

    /// Records `first .. first + count`, or None when they are not all in the table.
    pub fn slice(&self, first: usize, count: usize) -> Option<RecordSlice<'_>> {
        (first.checked_add(count)? <= self.count).then_some(RecordSlice {
            t: self,
            first,
            count,
            skipped_bytes: 0,
            size: None,
        })
    }

    /// The records a records field of the frame JSON names, with its skipped bytes and
    /// size; None when they are not all in the table.
    pub fn field(&self, f: &RecordsField) -> Option<RecordSlice<'_>> {
        let mut s = self.slice(f.first_record, f.record_count)?;
        s.skipped_bytes = f.skipped_bytes;
        s.size = f.size;
        Some(s)
    }

    fn b(&self) -> &[u8] {
        self.bytes.as_slice()
    }
    fn i32_at(&self, at: usize) -> i32 {
        rd32(self.b(), at).unwrap_or(-1)
    }
    fn i64_at(&self, at: usize) -> i64 {
        rd64(self.b(), at).unwrap_or(-1)
    }
    /// Where the spans of the record entry at `e` point.
    fn source(&self, e: usize) -> Source {
        if self.layout >= LAYOUT_INPUT && self.i32_at(e + REC_SOURCE) == SOURCE_INPUT {
            Source::Input
        } else {
            Source::Table
        }
    }
    /// The bytes the spans of the record entry at `e` (and of its headers) index.
    fn base(&self, e: usize) -> &[u8] {
        match self.source(e) {
            Source::Input => self.input,
            Source::Table => self.b(),
        }
    }
    /// The bytes of an (offset, length) pair of the table, checked in `new`, in `base`.
    fn span<'s>(&self, at: usize, base: &'s [u8]) -> Option<&'s [u8]> {
        let len = usize::try_from(self.i32_at(at + 4)).ok()?;
        let off = usize::try_from(self.i32_at(at)).ok()?;
        Some(base.get(off..off + len).unwrap_or_default())
    }
}

impl<'a, 'f> IntoIterator for &'a RecordTable<'f> {
    type Item = RecordView<'a>;
    type IntoIter = RecordIter<'a>;
    fn into_iter(self) -> RecordIter<'a> {
        self.iter()
    }
}

/// One record of a [`RecordTable`], read in place: its key, value and headers are slices
/// of the table's bytes, or — a layout-3 table's [`Source::Input`] records — of the frame
/// the table was decoded from.
#[derive(Clone, Copy)]
pub struct RecordView<'a> {
    t: &'a RecordTable<'a>,
    e: usize,
}

impl std::fmt::Debug for RecordView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordView")
            .field("offset", &self.offset())
            .field("timestamp", &self.timestamp())
            .field("key", &self.key())
            .field("value", &self.value())
            .field("headers", &self.headers().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl<'a> RecordView<'a> {
    /// The record's offset.
    pub fn offset(&self) -> i64 {
        self.t.i64_at(self.e + REC_OFFSET)
    }
    /// Its timestamp (-1 for magic 0).
    pub fn timestamp(&self) -> i64 {
        self.t.i64_at(self.e + REC_TIMESTAMP)
    }
    /// The batch's producer id (-1 when none).
    pub fn producer_id(&self) -> i64 {
        self.t.i64_at(self.e + REC_PRODUCER_ID)
    }
    /// Where its key, value and headers are: the table, or the frame the table was decoded
    /// from (layout 3).
    pub fn source(&self) -> Source {
        self.t.source(self.e)
    }
    /// The key; None when null (null and empty differ).
    pub fn key(&self) -> Option<&'a [u8]> {
        self.t.span(self.e + REC_KEY_OFFSET, self.t.base(self.e))
    }
    /// The value; None when null.
    pub fn value(&self) -> Option<&'a [u8]> {
        self.t.span(self.e + REC_VALUE_OFFSET, self.t.base(self.e))
    }
    /// The key as UTF-8 text, decoded now (no copy): `Ok(None)` when null, an error when
    /// the bytes are not UTF-8 (use `String::from_utf8_lossy` on [`RecordView::key`] to
    /// replace invalid bytes instead).
    pub fn key_str(&self) -> std::result::Result<Option<&'a str>, std::str::Utf8Error> {
        self.key().map(std::str::from_utf8).transpose()
    }
    /// The value as UTF-8 text, as [`RecordView::key_str`].
    pub fn value_str(&self) -> std::result::Result<Option<&'a str>, std::str::Utf8Error> {
        self.value().map(std::str::from_utf8).transpose()
    }
    /// The record's headers in wire order, duplicates kept.
    pub fn headers(&self) -> Headers<'a> {
        let first = usize::try_from(self.t.i32_at(self.e + REC_FIRST_HEADER)).unwrap_or(0);
        let n = usize::try_from(self.t.i32_at(self.e + REC_HEADER_COUNT)).unwrap_or(0);
        Headers {
            t: self.t,
            base: self.t.base(self.e),
            next: first,
            end: first + n,
        }
    }
    /// The record's sequence (-1 when none).
    pub fn sequence(&self) -> i32 {
        self.t.i32_at(self.e + REC_SEQUENCE)
    }
    /// The batch's partition leader epoch (-1 for legacy messages).
    pub fn leader_epoch(&self) -> i32 {
        self.t.i32_at(self.e + REC_LEADER_EPOCH)
    }
    /// The batch's producer epoch (-1 when none).
    pub fn producer_epoch(&self) -> i16 {
        self.t.i32_at(self.e + REC_PRODUCER_EPOCH) as i16
    }
    /// 0, 1 or 2.
    pub fn magic(&self) -> i8 {
        self.t.i32_at(self.e + REC_MAGIC) as i8
    }
    /// The codec of the batch (or legacy wrapper) that held the record.
    pub fn compression(&self) -> Compression {
        Compression::from_code(self.t.i32_at(self.e + REC_COMPRESSION)).unwrap_or_default()
    }
    /// What the timestamp means.
    pub fn timestamp_type(&self) -> TimestampType {
        match self.t.i32_at(self.e + REC_TIMESTAMP_TYPE) {
            -1 => TimestampType::NoTimestamp,
            1 => TimestampType::LogAppendTime,
            _ => TimestampType::CreateTime,
        }
    }
    /// Part of a transaction.
    pub fn transactional(&self) -> bool {
        self.t.i32_at(self.e + REC_FLAGS) & 1 != 0
    }
    /// A control record (transaction marker, leader change, ...).
    pub fn control(&self) -> bool {
        self.t.i32_at(self.e + REC_FLAGS) & 2 != 0
    }
    /// The control record's type (0 ABORT, 1 COMMIT, 2 LEADER_CHANGE, ...); None otherwise.
    pub fn control_type(&self) -> Option<i16> {
        match self.t.i32_at(self.e + REC_CONTROL_TYPE) {
            -1 => None,
            c => Some(c as i16),
        }
    }
    /// Where a schema reference was found.
    pub fn schema_source(&self) -> SchemaSource {
        match self.t.i32_at(self.e + REC_SCHEMA_SOURCE) {
            1 => SchemaSource::ValuePrefix,
            2 => SchemaSource::Header,
            _ => SchemaSource::None,
        }
    }
    /// The schema id, when found.
    pub fn schema_id(&self) -> Option<i32> {
        Some(self.t.i32_at(self.e + REC_SCHEMA_ID)).filter(|&v| v != -1)
    }
    /// The schema version, when found.
    pub fn schema_version(&self) -> Option<i32> {
        Some(self.t.i32_at(self.e + REC_SCHEMA_VERSION)).filter(|&v| v != -1)
    }
    /// The record as an owned [`Record`] (keys, values and headers copied).
    pub fn to_record(&self) -> Record {
        Record {
            offset: self.offset(),
            timestamp: self.timestamp(),
            timestamp_type: self.timestamp_type(),
            key: self.key().map(<[u8]>::to_vec),
            value: self.value().map(<[u8]>::to_vec),
            headers: self
                .headers()
                .map(|h| Header {
                    key: h.key.to_vec(),
                    value: h.value.map(<[u8]>::to_vec),
                })
                .collect(),
            producer_id: self.producer_id(),
            producer_epoch: self.producer_epoch(),
            sequence: self.sequence(),
            leader_epoch: self.leader_epoch(),
            magic: self.magic(),
            compression: self.compression(),
            transactional: self.transactional(),
            control: self.control(),
            control_type: self.control_type(),
            schema_source: self.schema_source(),
            schema_id: self.schema_id(),
            schema_version: self.schema_version(),
        }
    }
}

/// A record header, read in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HeaderView<'a> {
    /// The key's bytes (Kafka's header keys are strings; see [`HeaderView::key_str`]).
    pub key: &'a [u8],
    /// The value; None when null.
    pub value: Option<&'a [u8]>,
}

impl<'a> HeaderView<'a> {
    /// The key as a string, when it is valid UTF-8.
    pub fn key_str(&self) -> Option<&'a str> {
        std::str::from_utf8(self.key).ok()
    }
}

/// The headers of one record ([`RecordView::headers`]).
#[derive(Clone)]
pub struct Headers<'a> {
    t: &'a RecordTable<'a>,
    base: &'a [u8],
    next: usize,
    end: usize,
}

impl<'a> Iterator for Headers<'a> {
    type Item = HeaderView<'a>;
    fn next(&mut self) -> Option<HeaderView<'a>> {
        if self.next >= self.end {
            return None;
        }
        let h = self.t.headers_offset + self.next * self.t.header_stride;
        self.next += 1;
        Some(HeaderView {
            key: self.t.span(h + HDR_KEY_OFFSET, self.base).unwrap_or_default(),
            value: self.t.span(h + HDR_VALUE_OFFSET, self.base),
        })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end.saturating_sub(self.next);
        (n, Some(n))
    }
}

impl ExactSizeIterator for Headers<'_> {}

/// A range of a table's records: the records of one records field, or any range.
#[derive(Clone, Copy, Debug)]
pub struct RecordSlice<'a> {
    t: &'a RecordTable<'a>,
    first: usize,
    count: usize,
    skipped_bytes: usize,
    size: Option<usize>,
}

impl<'a> RecordSlice<'a> {
    /// The number of records.
    pub fn len(&self) -> usize {
        self.count
    }
    /// Whether the range is empty.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// The index in the table of the range's first record.
    pub fn first(&self) -> usize {
        self.first
    }
    /// Record `i` of the range, or None past its end.
    pub fn get(&self, i: usize) -> Option<RecordView<'a>> {
        if i < self.count {
            self.t.get(self.first + i)
        } else {
            None
        }
    }
    /// The records of the range.
    pub fn iter(&self) -> RecordIter<'a> {
        RecordIter {
            t: self.t,
            next: self.first,
            end: self.first + self.count,
        }
    }
    /// For a records field: the size of a partial batch at its end, which Kafka's readers
    /// skip (0 otherwise).
    pub fn skipped_bytes(&self) -> usize {
        self.skipped_bytes
    }
    /// For a records field: its length on the wire.
    pub fn size(&self) -> Option<usize> {
        self.size
    }
    /// The table the records live in.
    pub fn table(&self) -> &'a RecordTable<'a> {
        self.t
    }
}

impl<'a> IntoIterator for RecordSlice<'a> {
    type Item = RecordView<'a>;
    type IntoIter = RecordIter<'a>;
    fn into_iter(self) -> RecordIter<'a> {
        self.iter()
    }
}

/// An iterator over records of a table.
#[derive(Clone)]
pub struct RecordIter<'a> {
    t: &'a RecordTable<'a>,
    next: usize,
    end: usize,
}

impl<'a> Iterator for RecordIter<'a> {
    type Item = RecordView<'a>;
    fn next(&mut self) -> Option<RecordView<'a>> {
        if self.next >= self.end {
            return None;
        }
        self.next += 1;
        self.t.get(self.next - 1)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end.saturating_sub(self.next);
        (n, Some(n))
    }
}

impl DoubleEndedIterator for RecordIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.next >= self.end {
            return None;
        }
        self.end -= 1;
        self.t.get(self.end)
    }
}

impl ExactSizeIterator for RecordIter<'_> {}

// ---- frames with their records in a table ------------------------------------------------

/// A records field of a decoded frame's JSON: the object
/// `{"firstRecord": i, "recordCount": n, "skippedBytes": s, "size": bytes}` naming records
/// `i .. i+n` of the frame's table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordsField {
    /// Where the field is in the frame JSON (`"body.responses[0].partitions[2].records"`);
    /// empty when read with [`RecordsField::from_value`].
    pub path: String,
    /// The index of its first record in the table.
    pub first_record: usize,
    /// The number of its records.
    pub record_count: usize,
    /// The size of a partial batch at the end of the field, which Kafka's readers skip.
    pub skipped_bytes: usize,
    /// The field's length on the wire, when the JSON says it.
    pub size: Option<usize>,
    /// For a partition of a Produce request (v3 on): None when its records pass Kafka's
    /// validateRecords, else why a broker refuses them.
    pub invalid: Option<ProduceVerdict>,
}

/// Kafka's verdict on the records of a Produce partition that a broker refuses
/// (ProduceRequest.validateRecords): from v3 on, exactly one complete batch of magic 2,
/// and no zstd before v7.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProduceVerdict {
    /// Kafka's error code for the partition: 87 INVALID_RECORD, 76
    /// UNSUPPORTED_COMPRESSION_TYPE, 2 CORRUPT_MESSAGE, -1 UNKNOWN_SERVER_ERROR (see
    /// [`crate::error_code`]).
    pub error_code: i16,
    /// Kafka's name of the code.
    pub error: String,
    /// Why, in words.
    pub reason: String,
}

impl ProduceVerdict {
    fn from_value(v: &Value) -> Option<ProduceVerdict> {
        let o = v.as_object()?;
        Some(ProduceVerdict {
            error_code: o.get("errorCode")?.as_i64().and_then(|c| i16::try_from(c).ok())?,
            error: o.get("error")?.as_str()?.to_string(),
            reason: o.get("reason").and_then(Value::as_str).unwrap_or_default().to_string(),
        })
    }
}

impl RecordsField {
    /// Reads a records field's value in a decoded frame's JSON; None when it is not such an
    /// object (null, or base64 text).
    pub fn from_value(v: &Value) -> Option<RecordsField> {
        let o = v.as_object()?;
        let n = |k: &str| o.get(k).and_then(Value::as_u64).and_then(|x| usize::try_from(x).ok());
        Some(RecordsField {
            path: String::new(),
            first_record: n("firstRecord")?,
            record_count: n("recordCount")?,
            skipped_bytes: n("skippedBytes").unwrap_or(0),
            size: n("size"),
            invalid: o.get("invalid").and_then(ProduceVerdict::from_value),
        })
    }
}

/// Walks `v`, collecting every member "records" that is a table reference.
fn collect_fields(v: &Value, path: &mut String, out: &mut Vec<RecordsField>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
                match (k.as_str(), RecordsField::from_value(x)) {
                    ("records", Some(mut f)) => {
                        f.path = path.clone();
                        out.push(f);
                    }
                    _ => collect_fields(x, path, out),
                }
                path.truncate(len);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{}]", i));
                collect_fields(x, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// The records of one partition of a Produce request or a Fetch response
/// ([`FrameRecords::partitions`]).
#[derive(Clone, Debug)]
pub struct PartitionRecords<'a> {
    /// The topic's name (Produce `name`, Fetch `topic`), when the version carries it.
    pub topic: Option<String>,
    /// The topic's id in the JSON form (22-character URL-safe base64), when the version
    /// carries it (Produce v13+, Fetch v13+).
    pub topic_id: Option<String>,
    /// The partition index.
    pub partition: i32,
    /// Its records.
    pub records: RecordSlice<'a>,
    /// For a Produce request (v3 on): None, or why a broker refuses these records.
    pub invalid: Option<ProduceVerdict>,
}

/// Which call decoded a [`FrameRecords`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Request,
    Response,
}

/// A frame decoded with its records in one record table
/// ([`crate::decode_request_frame_records`], [`crate::decode_response_frame_records`]:
/// `FrameRecords<'static>`, owning every byte), or in a layout-3 table that borrows the
/// frame for `'f` ([`crate::decode_request_frame_records_borrowed`],
/// [`crate::decode_response_frame_records_borrowed`]).
#[derive(Debug)]
pub struct FrameRecords<'f> {
    json: String,
    table: RecordTable<'f>,
    side: Side,
}

impl FrameRecords<'static> {
    pub(crate) fn from_lib(buf: LibBuf, request: bool) -> Result<FrameRecords<'static>> {
        FrameRecords::with_table(RecordTable::from_lib(buf)?, request)
    }
}

impl<'f> FrameRecords<'f> {
    pub(crate) fn from_lib_input(buf: LibBuf, frame: &'f [u8], request: bool) -> Result<FrameRecords<'f>> {
        FrameRecords::with_table(RecordTable::from_lib_input(buf, frame)?, request)
    }

    fn with_table(table: RecordTable<'f>, request: bool) -> Result<FrameRecords<'f>> {
        let json = table.json().map(str::to_string).ok_or_else(|| {
            Error::new(
                ErrorKind::Internal,
                format!(
                    "kwire: the library returned a layout {} record table, without the frame JSON",
                    table.layout()
                ),
            )
        })?;
        Ok(FrameRecords {
            json,
            table,
            side: if request { Side::Request } else { Side::Response },
        })
    }

    /// The frame's JSON form (as [`crate::decode_request_frame`] or
    /// [`crate::decode_response_frame`] writes it), except that each records field that is
    /// not null is a [`RecordsField`] object instead of base64.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The frame's JSON parsed into a [`Value`].
    pub fn value(&self) -> Result<Value> {
        parse(&self.json)
    }

    /// The frame JSON as a [`RequestFrame`] (a request frame's decode).
    pub fn request_frame(&self) -> Result<RequestFrame> {
        parse(&self.json)
    }

    /// The frame JSON as a [`ResponseFrame`] (a response frame's decode).
    pub fn response_frame(&self) -> Result<ResponseFrame> {
        parse(&self.json)
    }

    /// The record table holding every records field's records.
    pub fn table(&self) -> &RecordTable<'f> {
        &self.table
    }

    /// The frame a layout-3 table borrows (empty for layout 2).
    pub fn input(&self) -> &'f [u8] {
        self.table.input()
    }

    /// Every records field of the frame that is not null, in frame order, with its path.
    pub fn records_fields(&self) -> Result<Vec<RecordsField>> {
        let mut out = Vec::new();
        collect_fields(&self.value()?, &mut String::new(), &mut out);
        Ok(out)
    }

    /// The records of a records field; an error when the field names records outside the
    /// table.
    pub fn records(&self, f: &RecordsField) -> Result<RecordSlice<'_>> {
        self.table.field(f).ok_or_else(|| {
            Error::new(
                ErrorKind::Internal,
                format!(
                    "kwire: records field {} names records {}..{} of a table of {}",
                    f.path,
                    f.first_record,
                    f.first_record.saturating_add(f.record_count),
                    self.table.len()
                ),
            )
        })
    }

    /// For a Produce request or a Fetch response: topic, partition and records of every
    /// partition whose records field is not null, in frame order. Other frames are
    /// [`ErrorKind::Arg`] (use [`FrameRecords::records_fields`]).
    pub fn partitions(&self) -> Result<Vec<PartitionRecords<'_>>> {
        let v = self.value()?;
        let api_key = v["apiKey"].as_i64();
        let (topics, parts, index, name) = match (self.side, api_key) {
            (Side::Request, Some(0)) => ("topicData", "partitionData", "index", "name"),
            (Side::Response, Some(1)) => ("responses", "partitions", "partitionIndex", "topic"),
            _ => {
                return Err(Error::new(
                    ErrorKind::Arg,
                    format!(
                        "kwire: partitions() reads Produce requests and Fetch responses, not a {} of api key {}",
                        if self.side == Side::Request {
                            "request"
                        } else {
                            "response"
                        },
                        api_key.unwrap_or(-1)
                    ),
                ))
            }
        };
        let mut out = Vec::new();
        let empty = Vec::new();
        for (ti, t) in v["body"][topics].as_array().unwrap_or(&empty).iter().enumerate() {
            for (pi, p) in t[parts].as_array().unwrap_or(&empty).iter().enumerate() {
                let Some(mut f) = RecordsField::from_value(&p["records"]) else {
                    continue;
                };
                f.path = format!("body.{}[{}].{}[{}].records", topics, ti, parts, pi);
                out.push(PartitionRecords {
                    topic: t[name].as_str().map(str::to_string),
                    topic_id: t["topicId"].as_str().map(str::to_string),
                    partition: p[index].as_i64().and_then(|x| i32::try_from(x).ok()).unwrap_or(-1),
                    records: self.records(&f)?,
                    invalid: f.invalid.clone(),
                });
            }
        }
        Ok(out)
    }

    /// For a Produce request: the partitions a broker would refuse by Kafka's
    /// validateRecords (v3 on), in frame order; empty when none.
    pub fn invalid_partitions(&self) -> Result<Vec<PartitionRecords<'_>>> {
        Ok(self.partitions()?.into_iter().filter(|p| p.invalid.is_some()).collect())
    }

    /// The frame JSON and the table, taken apart.
    pub fn into_parts(self) -> (String, RecordTable<'f>) {
        (self.json, self.table)
    }
}

fn parse<T: for<'de> serde::Deserialize<'de>>(json: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| {
        Error::new(
            ErrorKind::Internal,
            format!("kwire: the library's frame JSON is not the expected JSON: {}", e),
        )
    })
}

// ---- building a table on the host ---------------------------------------------------------

/// How [`crate::encode_request_frame_records`] builds one records field's batch: the
/// codec, and what Kafka's producer puts in a batch header. `Default` gives an
/// uncompressed magic 2 batch at offset 0 without a producer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchOptions {
    /// The batch's codec (chosen per records field).
    #[serde(serialize_with = "ser_compression")]
    pub compression: Compression,
    /// Compression level on the codec's scale; 0 = the codec's default.
    pub level: i32,
    /// 2, or 0/1 for a legacy message set (which has no headers).
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
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            compression: Compression::None,
            level: 0,
            magic: 2,
            base_offset: 0,
            partition_leader_epoch: -1,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            transactional: false,
            timestamp_type: TimestampType::CreateTime,
            log_append_time: -1,
        }
    }
}

fn ser_compression<S: serde::Serializer>(c: &Compression, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(c.name())
}

/// The value of a records field that [`crate::encode_request_frame_records`] turns into one
/// batch of table records `first_record .. first_record + record_count`. It serializes to
/// the ABI's object (`{"firstRecord": i, "recordCount": n, "compression": "zstd", ...}`),
/// so it goes straight into a body built with `serde_json::json!`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchRef {
    /// The index of the batch's first record in the table.
    pub first_record: usize,
    /// The number of records in the batch.
    pub record_count: usize,
    /// How the batch is built.
    #[serde(flatten)]
    pub options: BatchOptions,
}

impl BatchRef {
    /// The records field's JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// (offset, length) of bytes in a [`TableBuilder`]'s data.
type Span = (usize, usize);

struct Entry {
    timestamp: i64,
    key: Option<Span>,
    value: Option<Span>,
    first_header: usize,
    header_count: usize,
}

/// Builds a record table (layout 1) on the host: the records input of
/// [`crate::encode_request_frame_records`]. Only what the encoder reads is stored: key,
/// value, timestamp and headers; record `i` gets offset `i` in the table (the batch's
/// offsets come from [`BatchOptions::base_offset`]).
#[derive(Default)]
pub struct TableBuilder {
    records: Vec<Entry>,
    headers: Vec<(Span, Option<Span>)>,
    data: Vec<u8>,
}

impl TableBuilder {
    /// An empty builder.
    pub fn new() -> TableBuilder {
        TableBuilder::default()
    }

    /// The number of records added so far (the index the next one gets).
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether no record was added.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    fn put(&mut self, b: Option<&[u8]>) -> Option<Span> {
        let b = b?;
        self.data.extend_from_slice(b);
        Some((self.data.len() - b.len(), b.len()))
    }

    /// Adds one record from its parts (headers: key and value, None for a null value) and
    /// returns its index.
    pub fn add_parts<'h>(
        &mut self,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        timestamp: i64,
        headers: impl IntoIterator<Item = (&'h [u8], Option<&'h [u8]>)>,
    ) -> usize {
        let first_header = self.headers.len();
        let key = self.put(key);
        let value = self.put(value);
        for (k, v) in headers {
            let k = self.put(Some(k)).unwrap_or_default();
            let v = self.put(v);
            self.headers.push((k, v));
        }
        self.records.push(Entry {
            timestamp,
            key,
            value,
            first_header,
            header_count: self.headers.len() - first_header,
        });
        self.records.len() - 1
    }

    /// Adds a [`NewRecord`] and returns its index.
    pub fn add(&mut self, r: &NewRecord) -> usize {
        self.add_parts(
            r.key.as_deref(),
            r.value.as_deref(),
            r.timestamp,
            r.headers.iter().map(|(k, v)| (k.as_bytes(), v.as_deref())),
        )
    }

    /// Adds an owned decoded [`Record`]'s key, value, timestamp and headers (its other
    /// fields come from the batch options) and returns its index.
    pub fn add_decoded(&mut self, r: &Record) -> usize {
        self.add_parts(
            r.key.as_deref(),
            r.value.as_deref(),
            r.timestamp,
            r.headers.iter().map(|h| (&h.key[..], h.value.as_deref())),
        )
    }

    /// Adds a copy of a decoded record's key, value, timestamp and headers and returns its
    /// index.
    pub fn add_view(&mut self, r: &RecordView<'_>) -> usize {
        self.add_parts(r.key(), r.value(), r.timestamp(), r.headers().map(|h| (h.key, h.value)))
    }

    /// Adds records as one batch and returns the records field's value.
    pub fn add_batch(&mut self, records: &[NewRecord], options: &BatchOptions) -> BatchRef {
        let first = self.len();
        for r in records {
            self.add(r);
        }
        BatchRef {
            first_record: first,
            record_count: self.len() - first,
            options: options.clone(),
        }
    }

    /// Adds copies of decoded records as one batch and returns the records field's value.
    pub fn add_batch_views<'r>(
        &mut self,
        records: impl IntoIterator<Item = RecordView<'r>>,
        options: &BatchOptions,
    ) -> BatchRef {
        let first = self.len();
        for r in records {
            self.add_view(&r);
        }
        BatchRef {
            first_record: first,
            record_count: self.len() - first,
            options: options.clone(),
        }
    }

    /// The table's bytes. A table above the ABI's 2 GiB is [`ErrorKind::Arg`].
    pub fn build(&self) -> Result<Vec<u8>> {
        let too_large = || Error::new(ErrorKind::Arg, "kwire: a record table above 2 GiB");
        let n = self.records.len();
        let hn = self.headers.len();
        let headers_offset = n
            .checked_mul(REC_STRIDE)
            .and_then(|x| x.checked_add(TABLE_HEADER_SIZE_1))
            .ok_or_else(too_large)?;
        let data_offset = hn
            .checked_mul(HDR_STRIDE)
            .and_then(|x| x.checked_add(headers_offset))
            .ok_or_else(too_large)?;
        let total = data_offset.checked_add(self.data.len()).ok_or_else(too_large)?;
        let i32of = |x: usize| i32::try_from(x).map_err(|_| too_large());
        i32of(total)?;
        let mut b = Vec::with_capacity(total);
        b.extend_from_slice(TABLE_MAGIC);
        // The header's fields in their order, KW_TABLE_LAYOUT .. KW_TABLE_TOTAL_SIZE.
        for v in [
            LAYOUT_RECORDS as usize,
            n,
            REC_STRIDE,
            TABLE_HEADER_SIZE_1,
            hn,
            HDR_STRIDE,
            headers_offset,
            0,
            total,
        ] {
            b.extend_from_slice(&(v as i32).to_le_bytes());
        }
        // total <= i32::MAX, so every offset and count below fits an i32.
        let span = |s: Option<Span>| match s {
            None => [0, -1],
            Some((o, l)) => [(data_offset + o) as i32, l as i32],
        };
        for (i, r) in self.records.iter().enumerate() {
            b.extend_from_slice(&(i as i64).to_le_bytes());
            b.extend_from_slice(&r.timestamp.to_le_bytes());
            b.extend_from_slice(&(-1i64).to_le_bytes());
            let [ko, kl] = span(r.key);
            let [vo, vl] = span(r.value);
            let ts_type = if r.timestamp == -1 { -1 } else { 0 };
            let ints: [i32; 18] = [
                ko,
                kl,
                vo,
                vl,
                r.first_header as i32,
                r.header_count as i32,
                -1, // sequence
                -1, // leader epoch
                -1, // producer epoch
                2,  // magic
                0,  // compression
                ts_type,
                0,  // flags
                -1, // control type
                0,  // schema source
                -1, // schema id
                -1, // schema version
                SOURCE_TABLE,
            ];
            for v in ints {
                b.extend_from_slice(&v.to_le_bytes());
            }
        }
        for (k, v) in &self.headers {
            for x in span(Some(*k)).into_iter().chain(span(*v)) {
                b.extend_from_slice(&x.to_le_bytes());
            }
        }
        b.extend_from_slice(&self.data);
        debug_assert_eq!(b.len(), total);
        Ok(b)
    }
}
