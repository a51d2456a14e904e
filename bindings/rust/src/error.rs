//! The error type: the library's status, its category and its text.

use std::fmt;

use crate::{abi, ffi};

/// What went wrong, by the library's status codes (kwire.h's `KW_ERR_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A bad argument (for instance an input longer than the ABI's 2 GiB limit).
    Arg,
    /// The bytes are not a valid encoding; the error names field path and byte offset.
    Decode,
    /// The message cannot be encoded at that version; the error names the field path.
    Encode,
    /// The JSON input is malformed or does not match the message; path is the JSON path.
    Json,
    /// Unknown api key or message name.
    UnknownApi,
    /// The version is not valid for that message.
    Version,
    /// A size above a limit (frame above 100 MiB, decompression cap, allocation cap).
    TooLarge,
    /// The library could not allocate memory.
    NoMem,
    /// A feature the library does not read or write.
    Unsupported,
    /// A bug inside the library, caught; the library stays usable.
    Internal,
    /// A status this crate does not know (a newer library); treat it as a generic error.
    Other(i32),
}

impl ErrorKind {
    /// The kind of a (negative) library status.
    pub fn from_status(status: i32) -> ErrorKind {
        match status {
            abi::KW_ERR_ARG => ErrorKind::Arg,
            abi::KW_ERR_DECODE => ErrorKind::Decode,
            abi::KW_ERR_ENCODE => ErrorKind::Encode,
            abi::KW_ERR_JSON => ErrorKind::Json,
            abi::KW_ERR_UNKNOWN_API => ErrorKind::UnknownApi,
            abi::KW_ERR_VERSION => ErrorKind::Version,
            abi::KW_ERR_TOO_LARGE => ErrorKind::TooLarge,
            abi::KW_ERR_NOMEM => ErrorKind::NoMem,
            abi::KW_ERR_UNSUPPORTED => ErrorKind::Unsupported,
            abi::KW_ERR_INTERNAL => ErrorKind::Internal,
            s => ErrorKind::Other(s),
        }
    }

    /// The library's status code for this kind.
    pub fn status(self) -> i32 {
        match self {
            ErrorKind::Arg => abi::KW_ERR_ARG,
            ErrorKind::Decode => abi::KW_ERR_DECODE,
            ErrorKind::Encode => abi::KW_ERR_ENCODE,
            ErrorKind::Json => abi::KW_ERR_JSON,
            ErrorKind::UnknownApi => abi::KW_ERR_UNKNOWN_API,
            ErrorKind::Version => abi::KW_ERR_VERSION,
            ErrorKind::TooLarge => abi::KW_ERR_TOO_LARGE,
            ErrorKind::NoMem => abi::KW_ERR_NOMEM,
            ErrorKind::Unsupported => abi::KW_ERR_UNSUPPORTED,
            ErrorKind::Internal => abi::KW_ERR_INTERNAL,
            ErrorKind::Other(s) => s,
        }
    }
}

/// A failed kwire call: the status, the library's text and, when the library knows them,
/// the message, version, field or JSON path and byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub(crate) kind: ErrorKind,
    pub(crate) text: String,
    pub(crate) message: Option<String>,
    pub(crate) version: Option<i16>,
    pub(crate) path: Option<String>,
    pub(crate) offset: Option<i64>,
    pub(crate) hint: Option<String>,
    pub(crate) hint_version: Option<i16>,
}

impl Error {
    /// The category.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// The library's status code (negative).
    pub fn status(&self) -> i32 {
        self.kind.status()
    }
    /// The library's text, e.g. `"kwire: decode ProduceRequest v9 field topicData[0].name at
    /// offset 17: truncated input"`.
    pub fn text(&self) -> &str {
        &self.text
    }
    /// The message the error is about ("ProduceRequest"), when known.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }
    /// The name of the message the error is about: [`Error::message`], under the name the
    /// other bindings use (JavaScript's `messageName`, Python's `message_name`).
    pub fn message_name(&self) -> Option<&str> {
        self.message.as_deref()
    }
    /// For a response that failed to decode: `"the bytes decode as FetchResponse v12: was
    /// the request v12?"`, when exactly one other version of its api decodes the frame.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }
    /// The version the hint names (12 above).
    pub fn hint_version(&self) -> Option<i16> {
        self.hint_version
    }
    /// The version the error is about, when known.
    pub fn version(&self) -> Option<i16> {
        self.version
    }
    /// The field path (decode/encode: `"topicData[0].name"`), the JSON path (JSON errors:
    /// `"$.topicData[0].name"`) or the record position, when known.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }
    /// The byte offset in the input (or in the JSON text for JSON errors), when known.
    pub fn offset(&self) -> Option<i64> {
        self.offset
    }

    pub(crate) fn new(kind: ErrorKind, text: impl Into<String>) -> Error {
        Error {
            kind,
            text: text.into(),
            message: None,
            version: None,
            path: None,
            offset: None,
            hint: None,
            hint_version: None,
        }
    }

    /// The calling thread's last error (read right after a failed call on this thread).
    pub(crate) fn last(status: i32) -> Error {
        let mut e = Error::new(ErrorKind::from_status(status), String::new());
        let mut p: *const u8 = std::ptr::null();
        let mut n: i32 = 0;
        // SAFETY: valid out-params; the library owns the text, valid until the next kw_
        // call on this thread, and it is copied before any other call.
        let st = unsafe { ffi::kw_last_error_json(&mut p, &mut n) };
        if st == abi::KW_OK && !p.is_null() && n > 0 {
            // SAFETY: the library returned p with n readable bytes.
            let bytes = unsafe { std::slice::from_raw_parts(p, n as usize) };
            if let Ok(serde_json::Value::Object(o)) = serde_json::from_slice::<serde_json::Value>(bytes) {
                e.text = o.get("text").and_then(|v| v.as_str()).unwrap_or_default().to_string();
                e.message = o.get("message").and_then(|v| v.as_str()).map(str::to_string);
                e.version = o
                    .get("version")
                    .and_then(|v| v.as_i64())
                    .and_then(|v| i16::try_from(v).ok());
                e.path = o.get("path").and_then(|v| v.as_str()).map(str::to_string);
                e.offset = o.get("offset").and_then(|v| v.as_i64());
                if let Some(h) = o.get("hint").and_then(|v| v.as_object()) {
                    e.hint = h.get("text").and_then(|v| v.as_str()).map(str::to_string);
                    e.hint_version = h
                        .get("version")
                        .and_then(|v| v.as_i64())
                        .and_then(|v| i16::try_from(v).ok());
                }
            }
        }
        if e.text.is_empty() {
            e.text = format!("kwire: status {}", status);
        }
        e
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for Error {}

/// The result of every kwire call.
pub type Result<T> = std::result::Result<T, Error>;
