//! kwire: Apache Kafka's wire protocol — request and response frames, message bodies,
//! headers and record batches — decoded and encoded byte for byte as Kafka's own Java
//! code does, through libkwire (kwire's C library, linked statically by default).
//!
//! Messages are exchanged in kwire's JSON form as [`serde_json::Value`]: field names in
//! lowerCamelCase, int64 values as decimal strings (exact: read them with
//! [`json::int64`]), bytes and records as base64, unknown tagged fields under
//! `"_unknownTaggedFields"`. Record batches are read into plain structs
//! ([`records::Record`]) with exact int64 offsets, timestamps and producer ids.
//!
//! ```
//! // A Produce v9 request frame: decode, inspect, encode back byte for byte.
//! let frame = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/produce-request.bin")).unwrap();
//! let req = kwire::decode_request_frame(&frame).unwrap();
//! assert_eq!((req.api_key, req.api_version), (0, 9));
//! assert_eq!(req.header["clientId"], "kwire-example");
//! assert_eq!(kwire::encode_request_frame(&req).unwrap(), frame);
//!
//! // The records of its first partition.
//! let records = kwire::json::bytes(&req.body["topicData"][0]["partitionData"][0]["records"]).unwrap().unwrap();
//! let set = kwire::records::decode(&records, &Default::default()).unwrap();
//! assert_eq!(set.records[0].key.as_deref(), Some(&b"key-0"[..]));
//! ```
//!
//! Every function may be called from any thread. Errors are [`Error`] values carrying the
//! library's status ([`ErrorKind`]), its text, and the field path and byte offset when
//! known.
//!
//! libkwire contains a Go runtime, and a process may hold only one: do not link this
//! crate into a program that also loads another library built by Go as a c-shared or
//! c-archive library (the `links = "kwire"` key keeps cargo from linking libkwire twice).

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

// The ABI's constants and export list, generated from the ABI table.
#[allow(dead_code)]
mod abi;
pub mod constants;
mod error;
mod ffi;
pub mod json;
pub mod records;
pub mod table;

use std::os::raw::c_char;

use serde::{Deserialize, Serialize};
/// The serde_json crate this one exchanges values with, re-exported so that a program can
/// build them (`kwire::serde_json::json!`) without naming the dependency itself.
pub use serde_json;
pub use serde_json::Value;

pub use constants::{api_key, api_key_name, error_code, error_code_name, error_code_retriable};
pub use error::{Error, ErrorKind, Result};
pub use table::{FrameRecords, ProduceVerdict, RecordTable};

// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

/// The ABI major version this crate was written for; [`abi_version`] must report the same.
pub const ABI_MAJOR: u16 = abi::KW_ABI_MAJOR as u16;
/// The ABI minor version this crate needs at least.
pub const ABI_MINOR: u16 = abi::KW_ABI_MINOR as u16;

/// The ABI version of the linked library, (major, minor).
pub fn abi_version() -> (u16, u16) {
    // SAFETY: no arguments, never fails.
    let v = unsafe { ffi::kw_abi_version() };
    ((v >> 16) as u16, (v & 0xffff) as u16)
}

/// Whether the linked library serves this crate: same major, minor at least ours.
#[allow(clippy::absurd_extreme_comparisons)] // ABI_MINOR may be 0
pub fn abi_compatible() -> bool {
    let (major, minor) = abi_version();
    major == ABI_MAJOR && minor >= ABI_MINOR
}

// ---- calling convention ----------------------------------------------------------------

/// A buffer the library allocated; freed with kw_free when dropped.
struct LibBuf {
    ptr: *mut u8,
    len: usize,
}

impl LibBuf {
    fn as_slice(&self) -> &[u8] {
        if self.ptr.is_null() || self.len == 0 {
            return &[];
        }
        // SAFETY: the library returned ptr with len readable bytes, valid until kw_free.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

// SAFETY: the buffer is owned by this value alone and only read; the library allows a
// buffer to be freed by a thread other than the one that got it (kwire.h, THREADS).
unsafe impl Send for LibBuf {}
// SAFETY: shared access only reads the buffer.
unsafe impl Sync for LibBuf {}

impl Drop for LibBuf {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: ptr came from the library and is freed exactly once.
            unsafe { ffi::kw_free(self.ptr.cast()) };
        }
    }
}

/// len32 checks that an input fits the ABI's int32 lengths.
fn len32(what: &str, n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| {
        Error::new(
            ErrorKind::Arg,
            format!("kwire: {} of {} bytes exceeds the ABI's 2 GiB limit", what, n),
        )
    })
}

/// ptr gives the library NULL for an empty input (a dangling slice pointer is not NULL).
fn ptr(s: &[u8]) -> *const u8 {
    if s.is_empty() {
        std::ptr::null()
    } else {
        s.as_ptr()
    }
}

/// call runs a kw_ function with (out, out_len) out-params and returns its output.
fn call(f: impl FnOnce(*mut *mut u8, *mut i32) -> i32) -> Result<LibBuf> {
    let mut out: *mut u8 = std::ptr::null_mut();
    let mut n: i32 = 0;
    let st = f(&mut out, &mut n);
    let buf = LibBuf {
        ptr: out,
        len: n.max(0) as usize,
    };
    if st != abi::KW_OK {
        return Err(Error::last(st));
    }
    Ok(buf)
}

fn parse<T: for<'de> Deserialize<'de>>(what: &str, b: &LibBuf) -> Result<T> {
    serde_json::from_slice(b.as_slice()).map_err(|e| {
        Error::new(
            ErrorKind::Internal,
            format!("kwire: the library's {} is not the expected JSON: {}", what, e),
        )
    })
}

fn to_text(b: &LibBuf) -> Result<String> {
    String::from_utf8(b.as_slice().to_vec())
        .map_err(|_| Error::new(ErrorKind::Internal, "kwire: the library's JSON output is not UTF-8"))
}

fn to_json<T: Serialize + ?Sized>(v: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(|e| Error::new(ErrorKind::Json, format!("kwire: cannot write the JSON input: {}", e)))
}

// ---- catalogue -------------------------------------------------------------------------

/// Every api and message the library knows ([`catalogue`]).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Catalogue {
    /// "major.minor" of the library's ABI.
    pub abi_version: String,
    /// The Kafka releases whose descriptors the codec is generated from.
    pub spec_releases: Vec<String>,
    /// Every api key, in api key order.
    pub apis: Vec<ApiInfo>,
    /// Requests, responses, the two headers and the data types, sorted by name.
    pub messages: Vec<MessageInfo>,
}

impl Catalogue {
    /// The api of an api key.
    pub fn api(&self, api_key: i16) -> Option<&ApiInfo> {
        self.apis.iter().find(|a| a.api_key == api_key)
    }
    /// A message by its name ("ProduceRequest").
    pub fn message(&self, name: &str) -> Option<&MessageInfo> {
        self.messages.iter().find(|m| m.name == name)
    }
}

/// One api key.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ApiInfo {
    /// The api key.
    pub api_key: i16,
    /// Its name ("Produce").
    pub name: String,
    /// The request message's name.
    pub request: String,
    /// The response message's name.
    pub response: String,
    /// Oldest valid version.
    pub min_version: i16,
    /// Newest valid version.
    pub max_version: i16,
    /// First flexible version, -1 when never flexible.
    pub flexible_min: i16,
    /// Whether the newest version is not final yet.
    pub latest_version_unstable: bool,
    /// Listeners the api is served on.
    #[serde(default)]
    pub listeners: Vec<String>,
}

/// One message.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MessageInfo {
    /// The descriptor name ("ProduceRequest").
    pub name: String,
    /// Api key (-1 for headers and data types).
    pub api_key: i16,
    /// "request", "response", "header" or "data".
    pub kind: String,
    /// Oldest valid version.
    pub min_version: i16,
    /// Newest valid version.
    pub max_version: i16,
    /// First flexible version, -1 when never flexible.
    pub flexible_min: i16,
    /// Deprecated version range, -1 when none.
    pub deprecated_min: i16,
    /// Deprecated version range, -1 when none.
    pub deprecated_max: i16,
    /// Whether the newest version is not final yet.
    pub latest_version_unstable: bool,
    /// The releases that define the message.
    #[serde(default)]
    pub releases: Vec<String>,
    /// Fields a newer release renamed (kwire writes the new name and reads both).
    #[serde(default)]
    pub renames: Vec<FieldRename>,
    /// Versions an older release marked unstable that a newer release redefined.
    #[serde(default)]
    pub superseded: Vec<Superseded>,
}

/// A field a newer Kafka release renamed.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct FieldRename {
    /// Where the field lives ("topics[].partitions[]"; "" at the top).
    pub path: String,
    /// The older name.
    pub old: String,
    /// The newer name, which kwire writes.
    pub new: String,
}

/// A version an older release marked unstable and a newer release redefined.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Superseded {
    /// The older release.
    pub release: String,
    /// The version.
    pub version: i16,
}

/// Every api key and message the library knows.
pub fn catalogue() -> Result<Catalogue> {
    // SAFETY: valid out-params.
    let b = call(|o, n| unsafe { ffi::kw_api_catalogue(o, n) })?;
    parse("catalogue", &b)
}

/// Request and response header versions of an (api key, version).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderVersions {
    /// The request header version (0, 1 or 2).
    pub request: i16,
    /// The response header version (0 or 1).
    pub response: i16,
}

/// The header versions of (api key, version), with Kafka's two special cases
/// (ApiVersions responses always use response header v0; ControlledShutdown v0 uses
/// request header v0).
pub fn header_versions(api_key: i16, api_version: i16) -> Result<HeaderVersions> {
    let (mut rq, mut rs) = (0i32, 0i32);
    // SAFETY: valid out-params.
    let st = unsafe { ffi::kw_header_versions(api_key as i32, api_version as i32, &mut rq, &mut rs) };
    if st != abi::KW_OK {
        return Err(Error::last(st));
    }
    Ok(HeaderVersions {
        request: rq as i16,
        response: rs as i16,
    })
}

// ---- message bodies --------------------------------------------------------------------

/// Decodes `bytes`, exactly one message `name` ("ProduceRequest", "RequestHeader",
/// "ConsumerProtocolSubscription", ...) at `version`, into its JSON text.
pub fn decode_message_json(name: &str, version: i16, bytes: &[u8]) -> Result<String> {
    let nl = len32("name", name.len())?;
    let il = len32("input", bytes.len())?;
    // SAFETY: name and bytes are valid for their lengths during the call; valid out-params.
    let b = call(|o, n| unsafe {
        ffi::kw_decode_message(name.as_ptr() as *const c_char, nl, version as i32, ptr(bytes), il, o, n)
    })?;
    to_text(&b)
}

/// Decodes `bytes`, exactly one message `name` at `version`, into its JSON form.
pub fn decode_message(name: &str, version: i16, bytes: &[u8]) -> Result<Value> {
    let nl = len32("name", name.len())?;
    let il = len32("input", bytes.len())?;
    // SAFETY: as in decode_message_json.
    let b = call(|o, n| unsafe {
        ffi::kw_decode_message(name.as_ptr() as *const c_char, nl, version as i32, ptr(bytes), il, o, n)
    })?;
    parse("message JSON", &b)
}

/// Encodes the JSON text of message `name` at `version` (the body only: no size prefix,
/// no header).
pub fn encode_message_json(name: &str, version: i16, json: &str) -> Result<Vec<u8>> {
    let nl = len32("name", name.len())?;
    let jl = len32("JSON", json.len())?;
    // SAFETY: name and json are valid for their lengths during the call; valid out-params.
    let b = call(|o, n| unsafe {
        ffi::kw_encode_message(
            name.as_ptr() as *const c_char,
            nl,
            version as i32,
            ptr(json.as_bytes()),
            jl,
            o,
            n,
        )
    })?;
    Ok(b.as_slice().to_vec())
}

/// Encodes message `name` at `version` from its JSON form.
pub fn encode_message(name: &str, version: i16, message: &Value) -> Result<Vec<u8>> {
    let json = to_json(message)?;
    let nl = len32("name", name.len())?;
    let jl = len32("JSON", json.len())?;
    // SAFETY: as in encode_message_json.
    let b = call(|o, n| unsafe {
        ffi::kw_encode_message(name.as_ptr() as *const c_char, nl, version as i32, ptr(&json), jl, o, n)
    })?;
    Ok(b.as_slice().to_vec())
}

// ---- frames ----------------------------------------------------------------------------

/// A request frame: header and body in the JSON form.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RequestFrame {
    /// The api key (from the header).
    pub api_key: i16,
    /// The api version (from the header).
    pub api_version: i16,
    /// The request header version, by Kafka's rules.
    pub header_version: i16,
    /// The RequestHeader.
    pub header: Value,
    /// The request body.
    pub body: Value,
}

/// A response frame: header and body in the JSON form.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ResponseFrame {
    /// The api key of the request it answers.
    pub api_key: i16,
    /// The api version of the request it answers.
    pub api_version: i16,
    /// The response header version, by Kafka's rules.
    pub header_version: i16,
    /// The ResponseHeader.
    pub header: Value,
    /// The response body.
    pub body: Value,
}

/// Decodes one complete request frame (4-byte size prefix, header, body).
pub fn decode_request_frame(frame: &[u8]) -> Result<RequestFrame> {
    let il = len32("frame", frame.len())?;
    // SAFETY: frame is valid for il bytes during the call; valid out-params.
    let b = call(|o, n| unsafe { ffi::kw_decode_request_frame(ptr(frame), il, o, n) })?;
    parse("frame JSON", &b)
}

/// Encodes a request frame, size prefix included. The api key and version are the
/// header's `requestApiKey` and `requestApiVersion`; the frame's `api_key`, `api_version`
/// and `header_version` must agree with them.
pub fn encode_request_frame(frame: &RequestFrame) -> Result<Vec<u8>> {
    encode_request_frame_value(&to_json(frame)?)
}

/// Encodes a request frame from a header and a body, size prefix included.
pub fn encode_request(header: &Value, body: &Value) -> Result<Vec<u8>> {
    #[derive(Serialize)]
    struct F<'a> {
        header: &'a Value,
        body: &'a Value,
    }
    encode_request_frame_value(&to_json(&F { header, body })?)
}

fn encode_request_frame_value(json: &[u8]) -> Result<Vec<u8>> {
    let jl = len32("JSON", json.len())?;
    // SAFETY: json is valid for jl bytes during the call; valid out-params.
    let b = call(|o, n| unsafe { ffi::kw_encode_request_frame(ptr(json), jl, o, n) })?;
    Ok(b.as_slice().to_vec())
}

/// Decodes one complete response frame answering a request of (api key, version) — a
/// response does not carry them.
pub fn decode_response_frame(frame: &[u8], api_key: i16, api_version: i16) -> Result<ResponseFrame> {
    let il = len32("frame", frame.len())?;
    // SAFETY: frame is valid for il bytes during the call; valid out-params.
    let b = call(|o, n| unsafe {
        ffi::kw_decode_response_frame(ptr(frame), il, api_key as i32, api_version as i32, o, n)
    })?;
    parse("frame JSON", &b)
}

/// Encodes a response frame for the frame's api key and version, size prefix included.
pub fn encode_response_frame(frame: &ResponseFrame) -> Result<Vec<u8>> {
    encode_response_frame_value(&to_json(frame)?, frame.api_key, frame.api_version)
}

/// Encodes a response frame answering (api key, version) from a header and a body.
pub fn encode_response(api_key: i16, api_version: i16, header: &Value, body: &Value) -> Result<Vec<u8>> {
    #[derive(Serialize)]
    struct F<'a> {
        header: &'a Value,
        body: &'a Value,
    }
    encode_response_frame_value(&to_json(&F { header, body })?, api_key, api_version)
}

fn encode_response_frame_value(json: &[u8], api_key: i16, api_version: i16) -> Result<Vec<u8>> {
    let jl = len32("JSON", json.len())?;
    // SAFETY: json is valid for jl bytes during the call; valid out-params.
    let b =
        call(|o, n| unsafe { ffi::kw_encode_response_frame(ptr(json), jl, api_key as i32, api_version as i32, o, n) })?;
    Ok(b.as_slice().to_vec())
}

// ---- frames with their records in a record table (ABI 1.1) -----------------------------

/// Decodes one complete request frame as [`decode_request_frame`] does, except that every
/// records field (a Produce request's record batches) is decoded, once, into one
/// [`RecordTable`] instead of travelling as base64 in the JSON: see [`table`]. `opts`
/// are those of [`records::decode`] (CRC checks, decompression cap). A records field that
/// cannot be read fails the call ([`ErrorKind::Decode`] naming the field, e.g.
/// `topicData[0].partitionData[1].records`, and the batch).
pub fn decode_request_frame_records(frame: &[u8], opts: &records::DecodeOptions) -> Result<FrameRecords<'static>> {
    let (flags, max) = opts.args()?;
    let il = len32("frame", frame.len())?;
    // SAFETY: frame is valid for il bytes during the call; valid out-params.
    let b = call(|o, n| unsafe { ffi::kw_decode_request_frame_records(ptr(frame), il, flags, max, o, n) })?;
    FrameRecords::from_lib(b, true)
}

/// As [`decode_request_frame_records`], but the records stored uncompressed in the frame
/// are not copied (ABI 1.2, a layout-3 table): their keys, values and headers are slices
/// of `frame`, which the result borrows ([`table::Source::Input`]). Only records that had
/// to be decompressed (and legacy messages and control records, which the library reads
/// one by one) are in the table's own bytes. The fastest way to read a frame's records;
/// the table cannot go back into [`encode_request_frame_records`] when a record points
/// into the frame ([`RecordTable::input_records`]).
///
/// ```
/// use kwire::table::Source;
/// let frame = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/produce-request.bin")).unwrap();
/// let d = kwire::decode_request_frame_records_borrowed(&frame, &Default::default()).unwrap();
/// assert_eq!(d.table().layout(), 3);
/// let r = d.table().get(0).unwrap();
/// assert_eq!((r.source(), r.key()), (Source::Input, Some(&b"key-0"[..])));
/// assert!(frame.as_ptr_range().contains(&r.key().unwrap().as_ptr()));
/// ```
///
/// The records cannot outlive the frame:
///
/// ```compile_fail
/// let frame = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/produce-request.bin")).unwrap();
/// let d = kwire::decode_request_frame_records_borrowed(&frame, &Default::default()).unwrap();
/// drop(frame);
/// println!("{:?}", d.table().get(0).unwrap().key());
/// ```
pub fn decode_request_frame_records_borrowed<'f>(
    frame: &'f [u8],
    opts: &records::DecodeOptions,
) -> Result<FrameRecords<'f>> {
    let (flags, max) = opts.args()?;
    let il = len32("frame", frame.len())?;
    let flags = flags | abi::KW_RECORDS_INPUT_SPANS;
    // SAFETY: frame is valid for il bytes during the call; valid out-params.
    let b = call(|o, n| unsafe { ffi::kw_decode_request_frame_records(ptr(frame), il, flags, max, o, n) })?;
    FrameRecords::from_lib_input(b, frame, true)
}

/// Decodes one complete response frame answering a request of (api key, version) as
/// [`decode_response_frame`] does, with every records field (Fetch and ShareFetch
/// responses' record batches) decoded into one [`RecordTable`]; as
/// [`decode_request_frame_records`].
///
/// ```
/// let frame = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/fetch-response.bin")).unwrap();
/// let fetch = kwire::decode_response_frame_records(&frame, 1, 12, &Default::default()).unwrap();
/// for p in fetch.partitions().unwrap() {
///     for r in p.records {
///         assert!(r.value().unwrap().starts_with(b"events/"));
///         assert_eq!(r.headers().next().unwrap().key, b"trace-id");
///     }
/// }
/// ```
pub fn decode_response_frame_records(
    frame: &[u8],
    api_key: i16,
    api_version: i16,
    opts: &records::DecodeOptions,
) -> Result<FrameRecords<'static>> {
    let (flags, max) = opts.args()?;
    let il = len32("frame", frame.len())?;
    // SAFETY: frame is valid for il bytes during the call; valid out-params.
    let b = call(|o, n| unsafe {
        ffi::kw_decode_response_frame_records(ptr(frame), il, api_key as i32, api_version as i32, flags, max, o, n)
    })?;
    FrameRecords::from_lib(b, false)
}

/// As [`decode_response_frame_records`], with the records stored uncompressed read in
/// place in `frame`, which the result borrows; see
/// [`decode_request_frame_records_borrowed`].
///
/// ```
/// use kwire::table::Source;
/// let frame = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/fetch-response.bin")).unwrap();
/// let fetch = kwire::decode_response_frame_records_borrowed(&frame, 1, 12, &Default::default()).unwrap();
/// for p in fetch.partitions().unwrap() {
///     for r in p.records {
///         // This sample's batches are all compressed: their records are in the table.
///         assert_eq!(r.source(), Source::Table);
///         assert!(r.value().unwrap().starts_with(b"events/"));
///     }
/// }
/// ```
pub fn decode_response_frame_records_borrowed<'f>(
    frame: &'f [u8],
    api_key: i16,
    api_version: i16,
    opts: &records::DecodeOptions,
) -> Result<FrameRecords<'f>> {
    let (flags, max) = opts.args()?;
    let il = len32("frame", frame.len())?;
    let flags = flags | abi::KW_RECORDS_INPUT_SPANS;
    // SAFETY: frame is valid for il bytes during the call; valid out-params.
    let b = call(|o, n| unsafe {
        ffi::kw_decode_response_frame_records(ptr(frame), il, api_key as i32, api_version as i32, flags, max, o, n)
    })?;
    FrameRecords::from_lib_input(b, frame, false)
}

/// Encodes a request frame (size prefix included) as [`encode_request_frame`] does, with
/// records taken from a record table: in the frame's JSON a records field may be null,
/// base64 text (the raw bytes), or a table reference — a [`table::BatchRef`] (records of
/// `table` built into one batch with its [`table::BatchOptions`]: compression per field,
/// level, magic, producer fields, ...) or a decoded frame's [`table::RecordsField`]
/// object (then built with the default options). `table` is the bytes of a table that a
/// decode returned ([`RecordTable::as_bytes`]) or that [`table::TableBuilder::build`]
/// wrote; it may be empty when no field refers to it. Only the records' keys, values,
/// headers and timestamps are read from it.
///
/// A bad reference (records outside the table, an unknown key or compression) or a batch
/// that cannot be built is [`ErrorKind::Json`] with the records field's JSON path; a table
/// whose header does not fit its bytes is [`ErrorKind::Arg`].
pub fn encode_request_frame_records(frame: &RequestFrame, table: &[u8]) -> Result<Vec<u8>> {
    encode_request_frame_records_raw(&to_json(frame)?, table)
}

/// Encodes a request frame from a header and a body whose records fields may refer to
/// `table`; see [`encode_request_frame_records`].
pub fn encode_request_records(header: &Value, body: &Value, table: &[u8]) -> Result<Vec<u8>> {
    #[derive(Serialize)]
    struct F<'a> {
        header: &'a Value,
        body: &'a Value,
    }
    encode_request_frame_records_raw(&to_json(&F { header, body })?, table)
}

/// Encodes a request frame from its JSON text (for instance [`FrameRecords::json`], with
/// the table it came with: the frame encodes again as it was decoded, each records field
/// rebuilt as one batch); see [`encode_request_frame_records`].
pub fn encode_request_frame_records_json(json: &str, table: &[u8]) -> Result<Vec<u8>> {
    encode_request_frame_records_raw(json.as_bytes(), table)
}

fn encode_request_frame_records_raw(json: &[u8], table: &[u8]) -> Result<Vec<u8>> {
    let jl = len32("JSON", json.len())?;
    let tl = len32("record table", table.len())?;
    // SAFETY: json and table are valid for their lengths during the call; valid out-params.
    let b = call(|o, n| unsafe { ffi::kw_encode_request_frame_records(ptr(json), jl, ptr(table), tl, o, n) })?;
    Ok(b.as_slice().to_vec())
}

// ---- runtime figures (ABI 1.2) ---------------------------------------------------------

/// The figures of libkwire's Go runtime and of the library's buffers ([`runtime_stats`]).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct RuntimeStats {
    /// Garbage collection cycles completed so far.
    pub gc_cycles: u64,
    /// Heap objects allocated so far.
    pub heap_allocs: u64,
    /// Bytes allocated so far.
    pub heap_alloc_bytes: u64,
    /// Bytes of heap objects, live or not yet swept.
    pub heap_live_bytes: u64,
    /// Memory the runtime has mapped.
    pub runtime_bytes: u64,
    /// Library buffers not freed yet (outputs this crate holds: tables, ...).
    pub live_buffers: u64,
    /// Their bytes.
    pub live_buffer_bytes: u64,
}

/// The library's runtime figures: for monitoring a long-running program, and to see
/// that steady-state calls allocate nothing.
pub fn runtime_stats() -> Result<RuntimeStats> {
    // SAFETY: valid out-params.
    let b = call(|o, n| unsafe { ffi::kw_runtime_stats(o, n) })?;
    parse("runtime figures", &b)
}

/// The verdict of [`rules_check`] on one request frame.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct RulesVerdict {
    /// Every rule holds: the request goes on; the other fields are empty.
    pub allowed: bool,
    /// The index of the broken rule in the rule set; -1 when the request's body could
    /// not be read (rules fail closed).
    #[serde(default)]
    pub rule: i32,
    /// The rule's api, as configured ("*" for every api).
    #[serde(default)]
    pub api: String,
    /// The rule's field path, as configured ("topics[].replicationFactor").
    #[serde(default)]
    pub field: String,
    /// Where the rule failed, with indices ("topics[1].replicationFactor").
    #[serde(default)]
    pub path: String,
    /// What was there: a number, a quoted string, "null", an array's length, or ""
    /// when the field was missing.
    #[serde(default)]
    pub value: String,
    /// The refusal's message.
    #[serde(default)]
    pub message: String,
    /// Where the error lands in the api's response: "perEntity", "topLevel", or
    /// "nowhere" (no response can carry it: close the connection instead).
    #[serde(default)]
    pub place: String,
    /// The whole response frame to send in the broker's place (the request's correlation
    /// id, every error field set); None for place "nowhere" and for Produce with acks=0.
    #[serde(default, with = "json::base64_bytes")]
    pub response: Option<Vec<u8>>,
}

/// Applies a rule set on request fields (a JSON array, see kwire.h's kw_rules_check:
/// `[{"api":"CreateTopics","field":"topics[].replicationFactor","min":3}]`) to one whole
/// request frame, as kwire's proxy filter does, answering a refused request with
/// `error_code` (44, POLICY_VIOLATION, is what brokers answer a policy refusal with). The
/// same rule set passed again is not parsed again. A bad rule set is an error of kind
/// Json naming the JSON path; a frame whose header cannot be read, of kind Decode.
pub fn rules_check(rules: &str, frame: &[u8], error_code: i16) -> Result<RulesVerdict> {
    let rl = len32("rules", rules.len())?;
    let fl = len32("frame", frame.len())?;
    // SAFETY: rules and frame are valid for their lengths during the call; valid out-params.
    let b = call(|o, n| unsafe { ffi::kw_rules_check(rules.as_ptr(), rl, ptr(frame), fl, error_code as i32, o, n) })?;
    parse("rules verdict", &b)
}

/// What [`peek_request_header`] reads from the start of a request frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeekedHeader<'a> {
    /// The size prefix: the number of bytes after it.
    pub frame_size: i32,
    /// The api key.
    pub api_key: i16,
    /// The api version (not checked against the api's range).
    pub api_version: i16,
    /// The correlation id.
    pub correlation_id: i32,
    /// The request header version (0, 1 or 2), by Kafka's rules.
    pub header_version: i16,
    /// The client id, borrowed from the frame; None when null or absent (header v0).
    pub client_id: Option<&'a [u8]>,
}

/// Reads the size, api key, version, correlation id and client id of a request frame
/// without decoding the rest and without allocating. `frame` may stop anywhere after the
/// client id (a proxy can peek at the first bytes it received).
pub fn peek_request_header(frame: &[u8]) -> Result<PeekedHeader<'_>> {
    let il = len32("frame", frame.len())?;
    let mut h = ffi::KwPeekHeader::default();
    // SAFETY: frame is valid for il bytes during the call; h is writable storage.
    let st = unsafe { ffi::kw_peek_request_header(ptr(frame), il, &mut h) };
    if st != abi::KW_OK {
        return Err(Error::last(st));
    }
    let client_id = if h.client_id_length < 0 {
        None
    } else {
        let start = h.client_id_offset as usize;
        let end = start.checked_add(h.client_id_length as usize);
        match end.and_then(|end| frame.get(start..end)) {
            Some(s) => Some(s),
            None => {
                return Err(Error::new(
                    ErrorKind::Internal,
                    "kwire: peek returned a client id outside the frame",
                ))
            }
        }
    };
    Ok(PeekedHeader {
        frame_size: h.frame_size,
        api_key: h.api_key as i16,
        api_version: h.api_version as i16,
        correlation_id: h.correlation_id,
        header_version: h.header_version as i16,
        client_id,
    })
}

/// The crate's copies of kwire.h's constants, held to the header itself.
#[cfg(test)]
mod header_check {
    use std::collections::BTreeMap;

    use crate::abi;
    use crate::records::Compression;
    use crate::table::layout::*;

    /// Every `#define KW_... value` of capi/kwire.h whose value is an integer (or an integer
    /// product, or a string), by name.
    fn defines() -> BTreeMap<String, String> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../capi/kwire.h");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {}", path, e));
        let mut out = BTreeMap::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("#define KW_") else {
                continue;
            };
            let rest = rest.split("/*").next().unwrap_or_default();
            let (name, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            out.insert(format!("KW_{}", name), value.trim().to_string());
        }
        assert!(out.len() > 50, "only {} defines read from {}", out.len(), path);
        out
    }

    /// An integer define's value: `4`, `(-1)`, `(512 * 1024 * 1024)`.
    fn int(v: &str) -> Option<i64> {
        let v = v.trim().trim_start_matches('(').trim_end_matches(')');
        v.split('*').map(|f| f.trim().parse::<i64>().ok()).product()
    }

    /// Checks that the defines of kwire.h with one of `prefixes` are exactly `ours`, with
    /// the same values.
    fn same(prefixes: &[&str], ours: &[(&str, i64)]) {
        let defs = defines();
        let theirs: BTreeMap<&str, i64> = defs
            .iter()
            .filter(|(k, _)| prefixes.iter().any(|p| k.starts_with(p)))
            .filter_map(|(k, v)| int(v).map(|n| (k.as_str(), n)))
            .collect();
        let ours: BTreeMap<&str, i64> = ours.iter().copied().collect();
        assert_eq!(
            ours, theirs,
            "the crate's {:?} constants and kwire.h's differ",
            prefixes
        );
    }

    #[test]
    fn table_layout_matches_kwire_h() {
        let u = |x: usize| x as i64;
        same(
            &["KW_TABLE_", "KW_REC_", "KW_HDR_", "KW_SOURCE_"],
            &[
                ("KW_TABLE_LAYOUT", u(TABLE_LAYOUT)),
                ("KW_TABLE_RECORD_COUNT", u(TABLE_RECORD_COUNT)),
                ("KW_TABLE_RECORD_STRIDE", u(TABLE_RECORD_STRIDE)),
                ("KW_TABLE_RECORDS_OFFSET", u(TABLE_RECORDS_OFFSET)),
                ("KW_TABLE_HEADER_COUNT", u(TABLE_HEADER_COUNT)),
                ("KW_TABLE_HEADER_STRIDE", u(TABLE_HEADER_STRIDE)),
                ("KW_TABLE_HEADERS_OFFSET", u(TABLE_HEADERS_OFFSET)),
                ("KW_TABLE_SKIPPED_BYTES", u(TABLE_SKIPPED_BYTES)),
                ("KW_TABLE_TOTAL_SIZE", u(TABLE_TOTAL_SIZE)),
                ("KW_TABLE_JSON_OFFSET", u(TABLE_JSON_OFFSET)),
                ("KW_TABLE_JSON_LENGTH", u(TABLE_JSON_LENGTH)),
                ("KW_TABLE_HEADER_SIZE_1", u(TABLE_HEADER_SIZE_1)),
                ("KW_TABLE_HEADER_SIZE_2", u(TABLE_HEADER_SIZE_2)),
                ("KW_TABLE_BATCH_COUNT", u(TABLE_BATCH_COUNT)),
                ("KW_TABLE_BATCH_STRIDE", u(TABLE_BATCH_STRIDE)),
                ("KW_TABLE_BATCHES_OFFSET", u(TABLE_BATCHES_OFFSET)),
                ("KW_TABLE_COL_OFFSETS", u(TABLE_COL_OFFSETS)),
                ("KW_TABLE_COL_TIMESTAMPS", u(TABLE_COL_TIMESTAMPS)),
                ("KW_TABLE_COL_KEYS", u(TABLE_COL_KEYS)),
                ("KW_TABLE_COL_VALUES", u(TABLE_COL_VALUES)),
                ("KW_TABLE_COL_HEADER_INDEX", u(TABLE_COL_HEADER_INDEX)),
                ("KW_TABLE_COL_BATCH_INDEX", u(TABLE_COL_BATCH_INDEX)),
                ("KW_TABLE_COL_SOURCES", u(TABLE_COL_SOURCES)),
                ("KW_TABLE_COL_CONTROL_TYPES", u(TABLE_COL_CONTROL_TYPES)),
                ("KW_TABLE_COL_SCHEMAS", u(TABLE_COL_SCHEMAS)),
                ("KW_TABLE_HEADER_SIZE_4", u(TABLE_HEADER_SIZE_4)),
                ("KW_REC_OFFSET", u(REC_OFFSET)),
                ("KW_REC_TIMESTAMP", u(REC_TIMESTAMP)),
                ("KW_REC_PRODUCER_ID", u(REC_PRODUCER_ID)),
                ("KW_REC_KEY_OFFSET", u(REC_KEY_OFFSET)),
                ("KW_REC_KEY_LENGTH", u(REC_KEY_LENGTH)),
                ("KW_REC_VALUE_OFFSET", u(REC_VALUE_OFFSET)),
                ("KW_REC_VALUE_LENGTH", u(REC_VALUE_LENGTH)),
                ("KW_REC_FIRST_HEADER", u(REC_FIRST_HEADER)),
                ("KW_REC_HEADER_COUNT", u(REC_HEADER_COUNT)),
                ("KW_REC_SEQUENCE", u(REC_SEQUENCE)),
                ("KW_REC_LEADER_EPOCH", u(REC_LEADER_EPOCH)),
                ("KW_REC_PRODUCER_EPOCH", u(REC_PRODUCER_EPOCH)),
                ("KW_REC_MAGIC", u(REC_MAGIC)),
                ("KW_REC_COMPRESSION", u(REC_COMPRESSION)),
                ("KW_REC_TIMESTAMP_TYPE", u(REC_TIMESTAMP_TYPE)),
                ("KW_REC_FLAGS", u(REC_FLAGS)),
                ("KW_REC_CONTROL_TYPE", u(REC_CONTROL_TYPE)),
                ("KW_REC_SCHEMA_SOURCE", u(REC_SCHEMA_SOURCE)),
                ("KW_REC_SCHEMA_ID", u(REC_SCHEMA_ID)),
                ("KW_REC_SCHEMA_VERSION", u(REC_SCHEMA_VERSION)),
                ("KW_REC_SOURCE", u(REC_SOURCE)),
                ("KW_REC_STRIDE", u(REC_STRIDE)),
                ("KW_HDR_KEY_OFFSET", u(HDR_KEY_OFFSET)),
                ("KW_HDR_KEY_LENGTH", u(HDR_KEY_LENGTH)),
                ("KW_HDR_VALUE_OFFSET", u(HDR_VALUE_OFFSET)),
                ("KW_HDR_VALUE_LENGTH", u(HDR_VALUE_LENGTH)),
                ("KW_HDR_STRIDE", u(HDR_STRIDE)),
                ("KW_SOURCE_TABLE", SOURCE_TABLE.into()),
                ("KW_SOURCE_INPUT", SOURCE_INPUT.into()),
            ],
        );
        same(
            &["KW_RB_"],
            &[
                ("KW_RB_BASE_OFFSET", u(RB_BASE_OFFSET)),
                ("KW_RB_PRODUCER_ID", u(RB_PRODUCER_ID)),
                ("KW_RB_FIRST_RECORD", u(RB_FIRST_RECORD)),
                ("KW_RB_RECORD_COUNT", u(RB_RECORD_COUNT)),
                ("KW_RB_BASE_SEQUENCE", u(RB_BASE_SEQUENCE)),
                ("KW_RB_LEADER_EPOCH", u(RB_LEADER_EPOCH)),
                ("KW_RB_PRODUCER_EPOCH", u(RB_PRODUCER_EPOCH)),
                ("KW_RB_MAGIC", u(RB_MAGIC)),
                ("KW_RB_COMPRESSION", u(RB_COMPRESSION)),
                ("KW_RB_TIMESTAMP_TYPE", u(RB_TIMESTAMP_TYPE)),
                ("KW_RB_FLAGS", u(RB_FLAGS)),
                ("KW_RB_SOURCE", u(RB_SOURCE)),
                ("KW_RB_STRIDE", u(RB_STRIDE)),
            ],
        );
        let magic = format!("\"{}\"", std::str::from_utf8(TABLE_MAGIC).unwrap());
        assert_eq!(defines()["KW_TABLE_MAGIC"], magic);
    }

    #[test]
    fn statuses_flags_and_versions_match_kwire_h() {
        same(
            &["KW_OK", "KW_ERR_"],
            &[
                ("KW_OK", abi::KW_OK.into()),
                ("KW_ERR_ARG", abi::KW_ERR_ARG.into()),
                ("KW_ERR_DECODE", abi::KW_ERR_DECODE.into()),
                ("KW_ERR_ENCODE", abi::KW_ERR_ENCODE.into()),
                ("KW_ERR_JSON", abi::KW_ERR_JSON.into()),
                ("KW_ERR_UNKNOWN_API", abi::KW_ERR_UNKNOWN_API.into()),
                ("KW_ERR_VERSION", abi::KW_ERR_VERSION.into()),
                ("KW_ERR_TOO_LARGE", abi::KW_ERR_TOO_LARGE.into()),
                ("KW_ERR_NOMEM", abi::KW_ERR_NOMEM.into()),
                ("KW_ERR_UNSUPPORTED", abi::KW_ERR_UNSUPPORTED.into()),
                ("KW_ERR_INTERNAL", abi::KW_ERR_INTERNAL.into()),
            ],
        );
        same(
            &["KW_RECORDS_", "KW_ABI_MAJOR", "KW_ABI_MINOR", "KW_MAX_ALLOC"],
            &[
                ("KW_RECORDS_SKIP_CRC", abi::KW_RECORDS_SKIP_CRC.into()),
                ("KW_RECORDS_INPUT_SPANS", abi::KW_RECORDS_INPUT_SPANS.into()),
                ("KW_RECORDS_COLUMNS", abi::KW_RECORDS_COLUMNS.into()),
                ("KW_RECORDS_HOST_GZIP", abi::KW_RECORDS_HOST_GZIP.into()),
                ("KW_RECORDS_HOST_SNAPPY", abi::KW_RECORDS_HOST_SNAPPY.into()),
                ("KW_RECORDS_HOST_LZ4", abi::KW_RECORDS_HOST_LZ4.into()),
                ("KW_RECORDS_HOST_ZSTD", abi::KW_RECORDS_HOST_ZSTD.into()),
                ("KW_ABI_MAJOR", abi::KW_ABI_MAJOR.into()),
                ("KW_ABI_MINOR", abi::KW_ABI_MINOR.into()),
                ("KW_MAX_ALLOC", abi::KW_MAX_ALLOC.into()),
            ],
        );
        let codecs = [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ];
        let ours: Vec<(String, i64)> = codecs
            .iter()
            .map(|c| (format!("KW_COMPRESSION_{}", c.name().to_uppercase()), c.code().into()))
            .collect();
        same(
            &["KW_COMPRESSION_"],
            &ours.iter().map(|(k, v)| (k.as_str(), *v)).collect::<Vec<_>>(),
        );
    }
}
