//! The kw_ functions of kwire.h. Private: the crate's public API wraps each of them. Their
//! constants are the generated `abi` module's.

#![allow(dead_code)]

use std::os::raw::{c_char, c_void};

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
    pub fn kw_rules_check(
        rules: *const u8,
        rules_len: i32,
        frame: *const u8,
        frame_len: i32,
        error_code: i32,
        out: *mut *mut u8,
        out_len: *mut i32,
    ) -> i32;
}
