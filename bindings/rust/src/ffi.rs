//! The kw_ functions of kwire.h. Private: the crate's public API wraps each of them.

#![allow(dead_code)]

use std::os::raw::{c_char, c_void};

pub const KW_OK: i32 = 0;
pub const KW_ERR_ARG: i32 = -1;
pub const KW_ERR_DECODE: i32 = -2;
pub const KW_ERR_ENCODE: i32 = -3;
pub const KW_ERR_JSON: i32 = -4;
pub const KW_ERR_UNKNOWN_API: i32 = -5;
pub const KW_ERR_VERSION: i32 = -6;
pub const KW_ERR_TOO_LARGE: i32 = -7;
pub const KW_ERR_NOMEM: i32 = -8;
pub const KW_ERR_UNSUPPORTED: i32 = -9;
pub const KW_ERR_INTERNAL: i32 = -10;

/// The header version this crate was written against (KW_ABI_MAJOR, KW_ABI_MINOR).
pub const KW_ABI_MAJOR: i32 = 1;
pub const KW_ABI_MINOR: i32 = 2;

pub const KW_MAX_ALLOC: i32 = 512 * 1024 * 1024;
pub const KW_RECORDS_SKIP_CRC: i32 = 1;
pub const KW_RECORDS_INPUT_SPANS: i32 = 2;

#[repr(C)]
#[derive(Default, Clone, Copy, Debug)]
pub struct KwPeekHeader {
    pub frame_size: i32,
    pub api_key: i32,
    pub api_version: i32,
    pub correlation_id: i32,
    pub header_version: i32,
    pub client_id_offset: i32,
    pub client_id_length: i32,
    pub reserved: i32,
}

extern "C" {
    pub fn kw_abi_version() -> i32;
    pub fn kw_alloc(size: i32) -> *mut u8;
    pub fn kw_free(ptr: *mut c_void) -> i32;
    pub fn kw_last_error(out: *mut *const u8, out_len: *mut i32) -> i32;
    pub fn kw_last_error_json(out: *mut *const u8, out_len: *mut i32) -> i32;
    pub fn kw_api_catalogue(out: *mut *mut u8, out_len: *mut i32) -> i32;
    pub fn kw_header_versions(api_key: i32, api_version: i32, req: *mut i32, resp: *mut i32) -> i32;
    pub fn kw_decode_message(
        name: *const c_char,
        name_len: i32,
        version: i32,
        input: *const u8,
        in_len: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
    pub fn kw_encode_message(
        name: *const c_char,
        name_len: i32,
        version: i32,
        json: *const u8,
        json_len: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
    pub fn kw_decode_request_frame(input: *const u8, in_len: i32, out: *mut *mut u8, out_len: *mut i32) -> i32;
    pub fn kw_encode_request_frame(json: *const u8, json_len: i32, out: *mut *mut u8, out_len: *mut i32) -> i32;
    pub fn kw_decode_response_frame(
        input: *const u8,
        in_len: i32,
        api_key: i32,
        api_version: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
    pub fn kw_encode_response_frame(
        json: *const u8,
        json_len: i32,
        api_key: i32,
        api_version: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
    pub fn kw_peek_request_header(input: *const u8, in_len: i32, out: *mut KwPeekHeader) -> i32;
    pub fn kw_records_decode_json(
        input: *const u8,
        in_len: i32,
        flags: i32,
        max_decompressed: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
    pub fn kw_records_decode_table(
        input: *const u8,
        in_len: i32,
        flags: i32,
        max_decompressed: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
    pub fn kw_decode_request_frame_records(
        input: *const u8,
        in_len: i32,
        flags: i32,
        max_decompressed: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
    pub fn kw_decode_response_frame_records(
        input: *const u8,
        in_len: i32,
        api_key: i32,
        api_version: i32,
        flags: i32,
        max_decompressed: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
    pub fn kw_encode_request_frame_records(
        json: *const u8,
        json_len: i32,
        table: *const u8,
        table_len: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
    pub fn kw_runtime_stats(out: *mut *mut u8, out_len: *mut i32) -> i32;
    pub fn kw_records_encode(
        json: *const u8,
        json_len: i32,
        compression: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
}
