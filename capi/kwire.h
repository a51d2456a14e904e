/*
 * kwire.h — the kwire flat ABI.
 *
 * This header is the single definition of the ABI shared by
 *   - build/kwire.wasm   (GOOS=wasip1 reactor; every kw_ function below is a wasm export)
 *   - build/libkwire.so  and build/libkwire.a (C; link with `pkg-config --libs kwire`).
 * Both export the same names with the same meaning. Only 32-bit integers cross the
 * boundary: in wasm every pointer below is an i32 offset into the module's linear
 * memory, every int32_t an i32. No int64 and no float crosses it, so a JavaScript host
 * never needs BigInt.
 *
 * ---------------------------------------------------------------------------------
 * VERSION AND COMPATIBILITY
 *
 * kw_abi_version() returns (KW_ABI_MAJOR << 16) | KW_ABI_MINOR of the library. A host
 * built against major M, minor n works with a library whose major is M and whose minor
 * is >= n. Minor versions only add: new functions, new status codes (hosts must treat an
 * unknown negative status as a generic error), new keys in output JSON objects, new
 * fields at the end of binary records (the record table carries its strides). A change
 * to an existing function's meaning or signature bumps the major.
 *
 * ---------------------------------------------------------------------------------
 * CALLING CONVENTION
 *
 * - Every operation returns an int32_t status: KW_OK (0) or a negative KW_ERR_* code.
 *   (Exceptions, documented where they occur: kw_abi_version returns the version and
 *   kw_alloc returns a pointer.)
 * - Inputs are (pointer, length) pairs; the library reads them during the call only and
 *   never keeps or modifies them. A NULL pointer is allowed only with length 0. A
 *   negative length is KW_ERR_ARG. Names (message names) are (pointer, length) too and
 *   need no NUL terminator.
 * - Results come back through out-params: `uint8_t **out` receives a pointer to a buffer
 *   the library allocated, `int32_t *out_len` its length in bytes. The caller owns that
 *   buffer and must release it with kw_free exactly once. On failure *out is set to NULL
 *   and *out_len to 0 (when the out-params themselves are valid) and nothing needs freeing.
 *   Out-params must not be NULL (KW_ERR_ARG). Output JSON is UTF-8 with no NUL terminator.
 * - On failure, kw_last_error / kw_last_error_json describe what went wrong.
 * - Small integer parameters that Kafka keeps as int16 (api keys, versions) are passed as
 *   int32_t; a value outside the valid set gives KW_ERR_UNKNOWN_API or KW_ERR_VERSION.
 *
 * MEMORY OWNERSHIP (summary)
 *   input buffers ............ caller's; read during the call only
 *   *out buffers ............. caller's after the call; free with kw_free, once
 *   kw_alloc buffers ......... caller's; free with kw_free, once
 *   kw_last_error(_json) text  library's; valid until the next kw_ call on the same
 *                              thread (C) / instance (wasm); never freed by the caller
 *   kw_peek_header struct .... caller's (caller-provided storage, filled in place)
 *
 * THREADS
 *   C library: every function may be called from any thread at the same time. The
 *   last error is per thread. A buffer may be freed by a thread other than the one that
 *   got it.
 *   wasm module: an instance is single-threaded (wasm has no threads here); the last
 *   error is per instance. Use one instance per thread (or a lock) in a threaded host.
 *
 * ONE GO RUNTIME PER PROCESS (C library)
 *   libkwire contains a Go runtime. A process must not load two Go c-shared libraries
 *   (libkwire and another library built with Go's -buildmode=c-shared or c-archive):
 *   two Go runtimes in one process conflict over signal handlers and threads. Link
 *   libkwire.a or libkwire.so, not both. The runtime starts when the library is loaded;
 *   the library spawns a few threads of its own and never calls exit.
 *
 * WASM SPECIFICS
 *   - The module is a WASI reactor: the host must call the export `_initialize` once,
 *     before any kw_ function. It imports only wasi_snapshot_preview1 functions that the
 *     Go runtime needs; it exports `memory` and the kw_ functions.
 *   - Every pointer passed to a kw_ function (inputs and out-param slots) must lie inside
 *     a live buffer obtained from kw_alloc or returned by the library; anything else
 *     (a stray offset, a range running past the buffer's end, a freed buffer) is
 *     KW_ERR_ARG and nothing is read or written. A host therefore copies its input into
 *     a kw_alloc buffer and keeps one small kw_alloc'd scratch buffer for out-param slots.
 *   - An out-param `uint8_t **out` is a 4-byte slot receiving an i32 (little-endian)
 *     offset; `int32_t *out_len` a 4-byte slot receiving an i32. Slots need not be
 *     aligned.
 *   - Linear memory may grow during any kw_ call: a host must re-read the memory buffer
 *     (e.g. re-create its Uint8Array/DataView) after every call and never keep a view
 *     across one.
 *   - A status is always returned, never a trap: a failure inside the library becomes
 *     KW_ERR_INTERNAL and the instance stays usable. If a host ever sees a trap, it
 *     must discard the instance and create a new one.
 *
 * C SPECIFICS
 *   - Output buffers are malloc'ed by the library (never Go memory), so they stay valid
 *     until kw_free regardless of Go's garbage collector. Free them with kw_free, not
 *     with free(): kw_free checks them against the library's table of live buffers.
 *   - The library cannot check arbitrary C pointers: a non-NULL pointer with a length
 *     must be readable for that length (out-params writable), as with memcpy.
 *   - A panic inside the library never escapes: it becomes KW_ERR_INTERNAL.
 *
 * ---------------------------------------------------------------------------------
 * JSON FORMS
 *
 * Message bodies and headers use kwire's JSON form (codec/JSON.md in the kwire
 * repository): lowerCamelCase field names, int64 as decimal strings, bytes/records as
 * standard base64, uuid as 22-character URL-safe base64, unknown tagged fields under
 * "_unknownTaggedFields". Decoding JSON is strict: an unknown key, a duplicate key or a
 * wrong type is KW_ERR_JSON with the JSON path ("$.topicData[0].name") in the error.
 */
#ifndef KWIRE_H
#define KWIRE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------------ */

#define KW_ABI_MAJOR 1
#define KW_ABI_MINOR 5
#define KW_ABI_VERSION ((KW_ABI_MAJOR << 16) | KW_ABI_MINOR)

/* ---- status codes ------------------------------------------------------------- */

/* Success. */
#define KW_OK 0
/* A bad argument: NULL pointer with a non-zero length, negative length, NULL out-param,
 * (wasm) a pointer or range outside every live buffer, kw_free of a pointer that is not
 * a live buffer (double free, stray pointer), an unknown compression or flag. */
#define KW_ERR_ARG (-1)
/* The input bytes are not a valid encoding: truncated, bad length, bad varint, bad
 * tagged fields, trailing bytes, bad record batch, CRC mismatch. The error names the
 * message, version, field path and byte offset. */
#define KW_ERR_DECODE (-2)
/* The message cannot be encoded at that version: e.g. a non-default value in a
 * non-ignorable field the version lacks, a null where the version forbids it. The error
 * names the field path. */
#define KW_ERR_ENCODE (-3)
/* The JSON input is malformed or does not match the message: syntax error, unknown key,
 * duplicate key, wrong type, number out of range. The error names the JSON path and the
 * byte offset in the JSON text. */
#define KW_ERR_JSON (-4)
/* Unknown api key or unknown message name. */
#define KW_ERR_UNKNOWN_API (-5)
/* The version is not valid for that message (or header). */
#define KW_ERR_VERSION (-6)
/* A size above a limit: a frame whose size prefix exceeds 100 MiB (Kafka's default
 * socket.request.max.bytes), a batch that decompresses beyond the cap, a kw_alloc above
 * KW_MAX_ALLOC. */
#define KW_ERR_TOO_LARGE (-7)
/* The library could not allocate memory (C: malloc failed). */
#define KW_ERR_NOMEM (-8)
/* A feature the library does not read or write (a record batch magic other than 0-2, a
 * compression codec it does not know). */
#define KW_ERR_UNSUPPORTED (-9)
/* A bug inside the library, caught (e.g. a recovered panic). The library stays usable. */
#define KW_ERR_INTERNAL (-10)

/* The largest size kw_alloc accepts, and the largest output the library returns. */
#define KW_MAX_ALLOC (512 * 1024 * 1024)

/* ---- compression codecs (kw_records_encode), as in a batch's attributes ---------- */

#define KW_COMPRESSION_NONE 0
#define KW_COMPRESSION_GZIP 1
#define KW_COMPRESSION_SNAPPY 2
#define KW_COMPRESSION_LZ4 3
#define KW_COMPRESSION_ZSTD 4

/* ---- record decoding flags (kw_records_decode_json / _table) --------------------- */

/* Do not verify batch checksums (CRC32C for magic 2, CRC32 for magic 0/1). */
#define KW_RECORDS_SKIP_CRC 1
/* kw_decode_*_frame_records only (ABI 1.2): return a layout-3 table, whose spans of
 * records stored uncompressed point into the input frame instead of a copy. */
#define KW_RECORDS_INPUT_SPANS 2
/* kw_decode_*_frame_records and kw_decode_frame_records_inflated only (ABI 1.4): return a
 * layout-4 table, the records' fields as columns; see "layout 4" below. */
#define KW_RECORDS_COLUMNS 4
/* kw_decode_*_frame_records only (ABI 1.3): the host decompresses batches of these
 * codecs itself; see "the host's own decompressor" below. */
#define KW_RECORDS_HOST_GZIP 256
#define KW_RECORDS_HOST_SNAPPY 512
#define KW_RECORDS_HOST_LZ4 1024
#define KW_RECORDS_HOST_ZSTD 2048

/* ---- the record table (kw_records_decode_table, kw_decode_*_frame_records) --------
 * Byte offsets of its fields, described in full at kw_records_decode_table. These names
 * are the one definition of the layout; the bindings check theirs against them. */

#define KW_TABLE_MAGIC "KWRT"
#define KW_TABLE_LAYOUT 4              /* i32 layout version: 1, 2, 3 or 4 */
#define KW_TABLE_RECORD_COUNT 8
#define KW_TABLE_RECORD_STRIDE 12
#define KW_TABLE_RECORDS_OFFSET 16
#define KW_TABLE_HEADER_COUNT 20
#define KW_TABLE_HEADER_STRIDE 24
#define KW_TABLE_HEADERS_OFFSET 28
#define KW_TABLE_SKIPPED_BYTES 32
#define KW_TABLE_TOTAL_SIZE 36
#define KW_TABLE_JSON_OFFSET 40        /* layouts 2 and 3 */
#define KW_TABLE_JSON_LENGTH 44        /* layouts 2 and 3 */
#define KW_TABLE_HEADER_SIZE_1 40      /* the table header of layout 1 */
#define KW_TABLE_HEADER_SIZE_2 48      /* of layouts 2 and 3 */
/* Layout 4 (KW_RECORDS_COLUMNS): layout 2's header, then the batch table and the offset
 * of each column, one array per field, every array 8-aligned. n is record_count. */
#define KW_TABLE_BATCH_COUNT 48        /* i32 entries in the batch table */
#define KW_TABLE_BATCH_STRIDE 52       /* i32 bytes per batch entry (KW_RB_STRIDE) */
#define KW_TABLE_BATCHES_OFFSET 56     /* offset of batch entry 0 (KW_RB_*) */
#define KW_TABLE_COL_OFFSETS 60        /* i64[n] each record's offset */
#define KW_TABLE_COL_TIMESTAMPS 64     /* i64[n] */
#define KW_TABLE_COL_KEYS 68           /* i32[2n] (offset, length); length -1: null */
#define KW_TABLE_COL_VALUES 72         /* i32[2n] (offset, length); length -1: null */
#define KW_TABLE_COL_HEADER_INDEX 76   /* i32[2n] (first header entry, header count) */
#define KW_TABLE_COL_BATCH_INDEX 80    /* i32[n] the record's batch entry */
#define KW_TABLE_COL_SOURCES 84        /* u8[n] KW_SOURCE_*: what its spans index */
#define KW_TABLE_COL_CONTROL_TYPES 88  /* i32[n] -1 unless a control record */
#define KW_TABLE_COL_SCHEMAS 92        /* i32[3n] (schema source, id, version) */
#define KW_TABLE_HEADER_SIZE_4 96      /* the table header of layout 4 */

#define KW_REC_OFFSET 0                /* i64 */
#define KW_REC_TIMESTAMP 8             /* i64 */
#define KW_REC_PRODUCER_ID 16          /* i64 */
#define KW_REC_KEY_OFFSET 24
#define KW_REC_KEY_LENGTH 28
#define KW_REC_VALUE_OFFSET 32
#define KW_REC_VALUE_LENGTH 36
#define KW_REC_FIRST_HEADER 40
#define KW_REC_HEADER_COUNT 44
#define KW_REC_SEQUENCE 48
#define KW_REC_LEADER_EPOCH 52
#define KW_REC_PRODUCER_EPOCH 56
#define KW_REC_MAGIC 60
#define KW_REC_COMPRESSION 64
#define KW_REC_TIMESTAMP_TYPE 68
#define KW_REC_FLAGS 72
#define KW_REC_CONTROL_TYPE 76
#define KW_REC_SCHEMA_SOURCE 80
#define KW_REC_SCHEMA_ID 84
#define KW_REC_SCHEMA_VERSION 88
#define KW_REC_SOURCE 92               /* layout 3: KW_SOURCE_*; 0 before */
#define KW_REC_STRIDE 96               /* the record stride of layouts 1-3 */

#define KW_HDR_KEY_OFFSET 0
#define KW_HDR_KEY_LENGTH 4
#define KW_HDR_VALUE_OFFSET 8
#define KW_HDR_VALUE_LENGTH 12
#define KW_HDR_STRIDE 16               /* the header stride of layouts 1-3 */

/* A batch entry of layout 4, at batches_offset + i * batch_stride. A legacy message
 * (magic 0 or 1), or a magic-2 record the library reads without its batch scan (a
 * control record), is a batch of its own. A record's sequence is -1 when base_sequence
 * is, else base_sequence + (its offset - base_offset), wrapping past INT32_MAX to 0 as
 * Kafka's producer does; its producer id, epochs, magic, compression, timestamp type
 * and flags are its batch's. */
#define KW_RB_BASE_OFFSET 0            /* i64 */
#define KW_RB_PRODUCER_ID 8            /* i64 (-1 when none) */
#define KW_RB_FIRST_RECORD 16          /* its records: first_record .. +record_count-1 */
#define KW_RB_RECORD_COUNT 20
#define KW_RB_BASE_SEQUENCE 24         /* -1 when none */
#define KW_RB_LEADER_EPOCH 28          /* partition leader epoch (-1 for legacy messages) */
#define KW_RB_PRODUCER_EPOCH 32
#define KW_RB_MAGIC 36
#define KW_RB_COMPRESSION 40           /* KW_COMPRESSION_* */
#define KW_RB_TIMESTAMP_TYPE 44        /* -1 none, 0 CreateTime, 1 LogAppendTime */
#define KW_RB_FLAGS 48                 /* bit 0 transactional, bit 1 control */
#define KW_RB_SOURCE 52                /* KW_SOURCE_* of its records */
#define KW_RB_STRIDE 56

/* Where a record's spans point (KW_REC_SOURCE): its key, value and headers. */
#define KW_SOURCE_TABLE 0              /* offsets into the table */
#define KW_SOURCE_INPUT 1              /* offsets into the input the call was given */

/* The batch list a frame-records call returns for the host to decompress (ABI 1.3): the
 * magic, an int32 count at +4, then count entries of KW_BATCH_STRIDE bytes from +8, each
 * of int32 words at these byte offsets. */
#define KW_BATCH_LIST_MAGIC "KWCB"
#define KW_BATCH_LIST_COUNT 4
#define KW_BATCH_LIST_HEADER_SIZE 8
#define KW_BATCH_DATA_OFFSET 0         /* the compressed records section: offset in the frame */
#define KW_BATCH_DATA_LENGTH 4         /* its length */
#define KW_BATCH_COMPRESSION 8         /* KW_COMPRESSION_* */
#define KW_BATCH_RECORD_COUNT 12       /* the record count the batch header states */
#define KW_BATCH_STRIDE 16

/* ================================================================================= */
/* Version, memory, errors                                                           */
/* ================================================================================= */

/* kw_abi_version: (KW_ABI_MAJOR << 16) | KW_ABI_MINOR of the loaded library. Never
 * fails; does not touch the last error. */
int32_t kw_abi_version(void);

/* kw_alloc: allocates size bytes (0 <= size <= KW_MAX_ALLOC) in the library's memory and
 * returns a pointer to them, or NULL on failure (size negative: KW_ERR_ARG; above
 * KW_MAX_ALLOC: KW_ERR_TOO_LARGE; out of memory: KW_ERR_NOMEM — see kw_last_error). The
 * contents are zeroed. size 0 returns a valid, distinct pointer. The caller owns the
 * buffer and releases it with kw_free. In wasm this is how a host obtains memory to copy
 * its inputs into. */
uint8_t *kw_alloc(int32_t size);

/* kw_free: releases a buffer returned by kw_alloc or through an `out` param. NULL is a
 * no-op (KW_OK). A pointer that is not the start of a live buffer — already freed,
 * interior, or never allocated by the library — is KW_ERR_ARG and nothing happens. */
int32_t kw_free(void *ptr);

/* kw_last_error: the text of the last failed call on this thread (C) / instance (wasm),
 * e.g. "kwire: decode ProduceRequest v9 field topicData[0].name at offset 17: truncated
 * input". Every kw_ call other than kw_abi_version, kw_last_error and kw_last_error_json
 * clears it when it succeeds; after a success the text is empty (*out_len 0).
 * *out points into library-owned memory, valid until the next kw_ call on the same
 * thread/instance; do not free it. Returns KW_OK, or KW_ERR_ARG for NULL out-params. */
int32_t kw_last_error(const uint8_t **out, int32_t *out_len);

/* kw_last_error_json: the same error as a JSON object, library-owned like kw_last_error:
 *   {"status": -2, "category": "decode", "text": "<kw_last_error text>",
 *    "message": "ProduceRequest", "version": 9, "path": "topicData[0].name", "offset": 17}
 * "category" is one of arg, decode, encode, json, unknown_api, version, too_large, nomem,
 * unsupported, internal. "message", "version", "path" and "offset" are present when known:
 * for decode errors path is the field path and offset the byte offset in the input; for
 * JSON errors path is the JSON path ("$.topicData[0].name") and offset the byte offset in
 * the JSON text; for record batches path is "batch <baseOffset>, record <i>, field <f>"
 * style and offset the byte offset (from the start of the frame in the frame-records
 * calls, but inside decompressed data). A response that fails to decode at the version
 * given but decodes, whole, at exactly one other version of its api also has
 *   "hint": {"message": "FetchResponse", "version": 12,
 *            "text": "the bytes decode as FetchResponse v12: was the request v12?"}
 * (the text ends the error text too). An unknown message name's text ends in "; did you
 * mean FetchResponse?" when a name is close. After a success: {"status": 0}. */
int32_t kw_last_error_json(const uint8_t **out, int32_t *out_len);

/* ================================================================================= */
/* Catalogue                                                                         */
/* ================================================================================= */

/* kw_api_catalogue: every api key and message the library knows, as JSON (caller frees):
 *   {"abiVersion": "1.0", "specReleases": ["3.9.2", "4.4.0"],
 *    "apis": [{"apiKey": 0, "name": "Produce",
 *              "request": "ProduceRequest", "response": "ProduceResponse",
 *              "minVersion": 0, "maxVersion": 12, "flexibleMin": 9,
 *              "latestVersionUnstable": false, "listeners": ["broker"]}, ...],
 *    "messages": [{"name": "ProduceRequest", "apiKey": 0, "kind": "request",
 *                  "minVersion": 0, "maxVersion": 12, "flexibleMin": 9,
 *                  "deprecatedMin": -1, "deprecatedMax": -1,
 *                  "latestVersionUnstable": false, "releases": ["3.9.2", "4.4.0"],
 *                  "renames": [{"path": "", "old": "...", "new": "..."}],
 *                  "superseded": [{"release": "3.9.2", "version": 0}]}, ...]}
 * "apis" is in api key order (version ranges are the request's); "messages" covers
 * requests, responses, the two headers and the data types, sorted by name. flexibleMin
 * is -1 when never flexible. "renames" and "superseded" are as in the Go codec's
 * MessageInfo (fields a newer release renamed; versions an older release marked
 * unstable that a newer one redefined). */
int32_t kw_api_catalogue(uint8_t **out, int32_t *out_len);

/* kw_header_versions: the request and response header versions used by (api_key,
 * api_version), with Kafka's two special cases (ApiVersions responses always use
 * response header v0; ControlledShutdown v0 uses request header v0). Either out-param
 * may be NULL when not wanted. Errors: KW_ERR_UNKNOWN_API, KW_ERR_VERSION. */
int32_t kw_header_versions(int32_t api_key, int32_t api_version, int32_t *request_header_version,
                           int32_t *response_header_version);

/* ================================================================================= */
/* Message bodies (by descriptor name)                                               */
/* ================================================================================= */

/* kw_decode_message: decodes in[0:in_len), which must hold exactly one message `name`
 * ("ProduceRequest", "FetchResponse", "RequestHeader", "ConsumerProtocolSubscription",
 * ... — every name of the catalogue) at `version`, and returns its JSON form.
 * Errors: KW_ERR_ARG, KW_ERR_UNKNOWN_API (unknown name), KW_ERR_VERSION, KW_ERR_DECODE
 * (with field path and byte offset; trailing bytes are an error too). */
int32_t kw_decode_message(const char *name, int32_t name_len, int32_t version, const uint8_t *in,
                          int32_t in_len, uint8_t **out, int32_t *out_len);

/* kw_encode_message: reads the JSON form of message `name` from json[0:json_len) and
 * returns its encoding at `version` (the body only: no size prefix, no header).
 * Errors: KW_ERR_ARG, KW_ERR_UNKNOWN_API, KW_ERR_VERSION, KW_ERR_JSON (JSON path and
 * offset), KW_ERR_ENCODE (field path). */
int32_t kw_encode_message(const char *name, int32_t name_len, int32_t version, const uint8_t *json,
                          int32_t json_len, uint8_t **out, int32_t *out_len);

/* ================================================================================= */
/* Frames (4-byte big-endian size prefix + header + body)                            */
/* ================================================================================= */

/* kw_decode_request_frame: decodes one complete request frame (size prefix included;
 * in_len must equal 4 + the size) and returns JSON:
 *   {"apiKey": 0, "apiVersion": 9, "headerVersion": 2,
 *    "header": {<RequestHeader JSON at headerVersion>},
 *    "body": {<request JSON at apiVersion>}}
 * Keys appear in that order. Errors: KW_ERR_ARG, KW_ERR_DECODE (offsets count from the
 * frame start; a size prefix that disagrees with in_len is a decode error),
 * KW_ERR_TOO_LARGE (size prefix above 100 MiB), KW_ERR_UNKNOWN_API, KW_ERR_VERSION. */
int32_t kw_decode_request_frame(const uint8_t *in, int32_t in_len, uint8_t **out, int32_t *out_len);

/* kw_encode_request_frame: the inverse. Input JSON:
 *   {"header": {...RequestHeader JSON...}, "body": {...request JSON...}}
 * optionally with "apiKey", "apiVersion" and "headerVersion" (as kw_decode_request_frame
 * writes them; when present they must agree with the header and Kafka's rules, else
 * KW_ERR_JSON). The api key and version come from header.requestApiKey and
 * header.requestApiVersion; the header version follows Kafka's rules. Returns the whole
 * frame, size prefix included. Errors: KW_ERR_ARG, KW_ERR_JSON, KW_ERR_UNKNOWN_API,
 * KW_ERR_VERSION, KW_ERR_ENCODE, KW_ERR_TOO_LARGE (frame above 100 MiB). */
int32_t kw_encode_request_frame(const uint8_t *json, int32_t json_len, uint8_t **out, int32_t *out_len);

/* kw_decode_response_frame: decodes one complete response frame answering a request of
 * (api_key, api_version) — a response does not carry them — and returns JSON:
 *   {"apiKey": 0, "apiVersion": 9, "headerVersion": 1,
 *    "header": {<ResponseHeader JSON at headerVersion>},
 *    "body": {<response JSON at apiVersion>}}
 * Errors: as kw_decode_request_frame. */
int32_t kw_decode_response_frame(const uint8_t *in, int32_t in_len, int32_t api_key, int32_t api_version,
                                 uint8_t **out, int32_t *out_len);

/* kw_encode_response_frame: encodes {"header": {...}, "body": {...}} (optionally with
 * "apiKey", "apiVersion", "headerVersion", which must agree with the arguments) as the
 * response frame of (api_key, api_version), size prefix included. Errors: as
 * kw_encode_request_frame. */
int32_t kw_encode_response_frame(const uint8_t *json, int32_t json_len, int32_t api_key, int32_t api_version,
                                 uint8_t **out, int32_t *out_len);

/* What kw_peek_request_header fills in: eight int32_t, 32 bytes, no padding (the same
 * layout in C and in wasm linear memory, little-endian in wasm). */
typedef struct kw_peek_header {
    int32_t frame_size;       /* the size prefix: bytes after it */
    int32_t api_key;
    int32_t api_version;
    int32_t correlation_id;
    int32_t header_version;   /* 0, 1 or 2, by Kafka's rules */
    int32_t client_id_offset; /* byte offset of the client id inside the input frame */
    int32_t client_id_length; /* its length; -1 when null or absent (header v0) */
    int32_t reserved;         /* 0 */
} kw_peek_header;

/* kw_peek_request_header: reads the size, api key, version, correlation id and client id
 * of a request frame without decoding the rest of the header or the body, and without
 * allocating. The input may be incomplete past the client id (a proxy can peek at the
 * first bytes of a frame), but the size prefix is still checked against the 100 MiB
 * limit. The client id is not copied: it is client_id_length bytes of the input at
 * client_id_offset. `out` is caller-provided storage (wasm: 32 bytes inside a kw_alloc
 * buffer). Errors: KW_ERR_ARG, KW_ERR_DECODE (fewer than 12 bytes, or a truncated client
 * id), KW_ERR_TOO_LARGE, KW_ERR_UNKNOWN_API. The version is not checked against the
 * api's range, so a proxy can pass through versions it does not know. */
int32_t kw_peek_request_header(const uint8_t *in, int32_t in_len, kw_peek_header *out);

/* ================================================================================= */
/* Records (the records field of Produce and Fetch: record batches, legacy sets)     */
/* ================================================================================= */

/* kw_records_decode_json: decodes every batch (magic 2) and legacy message (magic 0 and
 * 1) in in[0:in_len), decompressing gzip, snappy, lz4 and zstd, and returns JSON:
 *   {"records": [
 *      {"offset": "100", "timestamp": "1700000000000",
 *       "timestampType": "CreateTime" | "LogAppendTime" | "NoTimestampType",
 *       "key": "<base64>" | null, "value": "<base64>" | null,
 *       "headers": [{"key": "<string>", "value": "<base64>" | null}, ...],
 *       "producerId": "-1", "producerEpoch": -1, "sequence": -1, "leaderEpoch": 5,
 *       "magic": 2, "compression": "none" | "gzip" | "snappy" | "lz4" | "zstd",
 *       "transactional": false, "control": false,
 *       "controlType": -1,                      (ControlType of a control record, else -1)
 *       "schemaSource": "none" | "value-prefix" | "header", "schemaId": -1,
 *       "schemaVersion": -1}, ...],
 *    "skippedBytes": 0}
 * int64 values are decimal strings. Header keys are strings (Kafka's header keys are
 * strings; invalid UTF-8 becomes U+FFFD — the record table keeps exact bytes).
 * "skippedBytes" is the size of a partial batch at the end of the input, which Kafka's
 * readers skip (a Fetch response may end with one).
 * flags: 0 or KW_RECORDS_SKIP_CRC. max_decompressed caps what one compressed batch may
 * decompress to (0: 100 MiB). Errors: KW_ERR_ARG, KW_ERR_DECODE (names the batch base
 * offset, record index, field and byte offset), KW_ERR_TOO_LARGE, KW_ERR_UNSUPPORTED. */
int32_t kw_records_decode_json(const uint8_t *in, int32_t in_len, int32_t flags, int32_t max_decompressed,
                               uint8_t **out, int32_t *out_len);

/* kw_records_decode_table: as kw_records_decode_json, but returns the flat binary
 * "record table", which a host reads with plain little-endian loads, no JSON parsing.
 * All integers are little-endian. An int64 is 8 bytes, little-endian: its low 32 bits
 * (unsigned) at +0 and its high 32 bits (signed) at +4, so a host without 64-bit
 * integers reads it as hi * 4294967296 + lo (exact while |value| < 2^53). Every
 * "offset" below is a byte offset from the start of the returned buffer. Layout:
 *
 *   table header (40 bytes, at 0):
 *     +0  u8[4] magic "KWRT"
 *     +4  i32   layout version (1)
 *     +8  i32   record_count
 *     +12 i32   record_stride   (bytes per record entry; 96 in layout 1)
 *     +16 i32   records_offset  (offset of record entry 0; 40 in layout 1; 8-aligned)
 *     +20 i32   header_count    (record headers of all records together)
 *     +24 i32   header_stride   (bytes per header entry; 16 in layout 1)
 *     +28 i32   headers_offset  (offset of header entry 0)
 *     +32 i32   skipped_bytes   (partial batch at the end of the input, skipped)
 *     +36 i32   total_size      (== *out_len)
 *   record entry i at records_offset + i * record_stride:
 *     +0  i64   offset
 *     +8  i64   timestamp       (-1 for magic 0)
 *     +16 i64   producer_id     (-1 when none)
 *     +24 i32   key_offset      +28 i32 key_length    (-1: null key;   offset then 0)
 *     +32 i32   value_offset    +36 i32 value_length  (-1: null value; offset then 0)
 *     +40 i32   first_header    (index of its first header entry)
 *     +44 i32   header_count    (its headers: entries first_header .. +header_count-1)
 *     +48 i32   sequence        (-1 when none)
 *     +52 i32   leader_epoch    (-1 for legacy messages)
 *     +56 i32   producer_epoch  (-1 when none)
 *     +60 i32   magic           (0, 1 or 2)
 *     +64 i32   compression     (KW_COMPRESSION_*)
 *     +68 i32   timestamp_type  (-1 none, 0 CreateTime, 1 LogAppendTime)
 *     +72 i32   flags           (bit 0 transactional, bit 1 control)
 *     +76 i32   control_type    (-1 unless a control record: 0 ABORT, 1 COMMIT, 2..)
 *     +80 i32   schema_source   (0 none, 1 value prefix, 2 headers)
 *     +84 i32   schema_id       (-1 when unknown)
 *     +88 i32   schema_version  (-1 when unknown)
 *     +92 i32   source          (0 in layouts 1 and 2; see layout 3)
 *   header entry j at headers_offset + j * header_stride:
 *     +0 i32 key_offset  +4 i32 key_length
 *     +8 i32 value_offset +12 i32 value_length (-1: null value)
 *   then the data area: the bytes of keys, values and header keys/values, referenced by
 *   the entries above (the exact bytes of the batch, decompressed; a batch's records
 *   section may be held whole, so bytes between the spans belong to no field).
 * A later layout version may grow the strides (new fields at the end of an entry) and
 * the table header; hosts must use the strides and offsets, not the constants.
 * Errors: as kw_records_decode_json. */
int32_t kw_records_decode_table(const uint8_t *in, int32_t in_len, int32_t flags, int32_t max_decompressed,
                                uint8_t **out, int32_t *out_len);

/* kw_records_encode: encodes records into one record batch (or legacy message set) the
 * way Kafka's producer does, compressed with `compression` (KW_COMPRESSION_*), and
 * returns the batch bytes (what goes into a ProduceRequest partition's records).
 * Input JSON (every key optional except "records"):
 *   {"magic": 2,                 (2, or 0/1 for a legacy message set)
 *    "baseOffset": "0", "partitionLeaderEpoch": -1,
 *    "producerId": "-1", "producerEpoch": -1, "baseSequence": -1,
 *    "transactional": false,
 *    "timestampType": "CreateTime" | "LogAppendTime", "logAppendTime": "-1",
 *    "level": 0,                 (compression level on the codec's scale; 0 = default)
 *    "records": [{"key": "<base64>" | null, "value": "<base64>" | null,
 *                 "timestamp": "1700000000000",
 *                 "headers": [{"key": "<string>", "value": "<base64>" | null}]}, ...]}
 * Record i gets offset delta i and a timestamp delta relative to the first record
 * (magic 2); the batch's base/max timestamps and CRC are computed. Legacy sets ignore
 * producer fields and headers (headers there are KW_ERR_ARG). The JSON is strict
 * (unknown keys are KW_ERR_JSON). Errors: KW_ERR_ARG (unknown compression), KW_ERR_JSON,
 * KW_ERR_ENCODE, KW_ERR_UNSUPPORTED (zstd with magic 0/1). */
int32_t kw_records_encode(const uint8_t *json, int32_t json_len, int32_t compression, uint8_t **out,
                          int32_t *out_len);

/* ================================================================================= */
/* Schema-validation policy (codec/policy) (ABI 1.1)                                 */
/* ================================================================================= */

/* kw_policy_check: applies a schema-validation policy to the records of one Produce
 * partition, as kwire's proxy filter does, and returns the partition's verdict.
 * policy[0:policy_len) is the policy as JSON (every key optional):
 *   {"default": "none" | "warn" | "enforce",
 *    "rules": [{"topic": "orders" | "prefix": "audit.",      (exactly one of the two)
 *               "policy": "none" | "warn" | "enforce",
 *               "schema_ids": [1, 2],        (allowed ids; empty or absent: any id)
 *               "require_version": false,    (a schema.version header is required)
 *               "versions": [3],             (allowed versions; implies a version)
 *               "value": {...}, "key": {...}, (what the value / key must be; the three
 *                                             fields above are the value's, given there
 *                                             or in "value": see below)
 *               "error": "INVALID_RECORD" | "POLICY_VIOLATION"}], (rejection error)
 *    "error": "INVALID_RECORD",              (of rules that name none; the default)
 *    "max_decompressed_bytes": 0,            (cap per compressed batch; 0: 100 MiB)
 *    "skip_crc": false}                      (do not verify batch checksums)
 * "value" and "key" take "require_schema" (default true for the value, false for the
 * key), "schema_ids", "require_version" and "versions" (value only), "json" (the bytes
 * are one RFC 8259 JSON text; after the Confluent prefix when the reference is checked
 * and comes from it), "unique_keys" (no object repeats a key; implies json) and "null":
 * "allow" (default: a null passes the side's checks) | "refuse". A key's schema
 * reference is its Confluent prefix only.
 * An exact topic rule wins over prefix rules, the longest prefix over shorter ones; other
 * topics get "default" (none when absent). A record's schema reference is its
 * "schema.id" / "schema.version" headers (decimal int32 text), else the Confluent prefix
 * of its value (byte 0, then a 4-byte big-endian id). A record fails its rule when it has
 * no reference, a malformed schema.id or schema.version header, an id not listed, or a
 * missing or unlisted version. topic[0:topic_len) is the topic's name (UTF-8), partition
 * its partition, records[0:records_len) the partition's records field (record batches
 * or legacy message sets, any compression). Returns the verdict as JSON:
 *   {"topic": "orders", "partition": 0, "policy": "enforce", "rule": "topic:orders",
 *    "checked": true,          (false under none: nothing was decoded)
 *    "records": 2, "failed": 1,
 *    "accept": false,          (false only under enforce: a record failed, or the
 *                               records could not be read)
 *    "errorCode": 87,          (the Kafka error of a rejected partition: the rule's
 *                               (87 INVALID_RECORD or 44 POLICY_VIOLATION) when records
 *                               fail it; 87 for unreadable records, 2 CORRUPT_MESSAGE
 *                               for damaged bytes)
 *    "error": "...",           (present when the records could not be read)
 *    "failures": [{"index": 1, "offset": "1", (index among the partition's records;
 *                                              the offset, an int64, as a string)
 *                  "reason": "no-schema" | "malformed-header" | "id-not-allowed" |
 *                            "no-version" | "version-not-allowed" | "invalid-json" |
 *                            "duplicate-key" | "null-refused",
 *                  "field": "value" | "key",     (the side that failed)
 *                  "schema": {"source": "none" | "value-prefix" | "header",
 *                             "id": -1, "version": -1},
 *                  "message": "..."}]}     (present when a record failed)
 * Undecodable records are a verdict, not an error. Errors: KW_ERR_JSON for a bad policy
 * (kw_last_error_json names the JSON path, e.g. "$.rules[1].policy", and the byte
 * offset); KW_ERR_ARG for an empty, over-long (> 32767 bytes) or non-UTF-8 topic, a
 * negative partition, or bad pointers and lengths. */
int32_t kw_policy_check(const uint8_t *policy, int32_t policy_len, const uint8_t *topic, int32_t topic_len,
                        int32_t partition, const uint8_t *records, int32_t records_len, uint8_t **out,
                        int32_t *out_len);

/* ================================================================================= */
/* Frames with their records in a record table (ABI 1.1)                             */
/* ================================================================================= */

/* kw_decode_request_frame_records / kw_decode_response_frame_records: as
 * kw_decode_request_frame / kw_decode_response_frame, but every records field (the
 * record batches of Produce requests, Fetch and ShareFetch responses, ...) is decoded
 * exactly once into one record table instead of travelling as base64 in the JSON. The
 * output is a record table with layout version 2:
 *
 *   table header (48 bytes): the 40 bytes of layout 1 (kw_records_decode_table) with
 *     +4  i32 layout version (2)
 *     +32 i32 skipped_bytes   (0; each records field reports its own, see below)
 *     +40 i32 json_offset     +44 i32 json_length
 *   The data area follows the header: the records sections of the batches (each copied
 *   once, decompressed when compressed; spans index into them), then the record entries
 *   (at records_offset, 8-aligned), the header entries (at headers_offset) and the JSON
 *   (at json_offset). Entries have layout 1's format and strides; all offsets count from
 *   the start of the table.
 *
 * With KW_RECORDS_INPUT_SPANS in flags (ABI 1.2) the table has layout version 3: as
 * layout 2, except that no record stored uncompressed is copied. Such a record's entry
 * has KW_SOURCE_INPUT at +92 (KW_REC_SOURCE), and its key, value and header spans are
 * offsets into the input frame `in` (which the host already holds: keep it, unchanged,
 * as long as the table is read); every other record has KW_SOURCE_TABLE and its spans
 * index the table, as in layout 2. The data area then holds only decompressed bytes. A
 * layout-3 table is not accepted by kw_encode_request_frame_records when an entry
 * points into the input (KW_ERR_JSON naming the records field).
 *
 * With KW_RECORDS_COLUMNS in flags (ABI 1.4) the table has layout version 4: the same
 * records, spans and JSON, as columns. The header is 96 bytes: layout 2's, with
 * record_stride 0 (there are no record entries) and records_offset the offsets column,
 * then at KW_TABLE_BATCH_COUNT .. KW_TABLE_COL_SCHEMAS the batch table's count, stride
 * and offset and the offset of each column. Record i's offset is offsets[i], its key
 * keys[2i .. 2i+1], its batch's fields batch entry batch_index[i] (KW_RB_*). Each array
 * is contiguous and starts 8-aligned, so a host reads a whole column as one typed array
 * (BigInt64Array, Int32Array) or memoryview cast. Header entries are those of layout 1
 * (KW_HDR_*). With KW_RECORDS_INPUT_SPANS as well, a record stored uncompressed has
 * KW_SOURCE_INPUT in sources[i] (and in its batch entry) and spans into the input, as
 * in layout 3. kw_encode_request_frame_records does not take a layout-4 table.
 *
 * The library reuses memory that the host released with kw_free for later outputs and
 * kw_alloc buffers, so a host that decodes, frees and decodes again allocates nothing in
 * steady state (kw_runtime_stats shows it).
 *
 * The JSON at json_offset is the frame's JSON form exactly as kw_decode_*_frame writes
 * it, except that each records field that is not null is an object
 *   {"firstRecord": i, "recordCount": n, "skippedBytes": s, "size": bytes}
 * naming record entries i .. i+n-1 of the table; "skippedBytes" is the size of a partial
 * batch at the end of the field (Kafka's readers skip it), "size" the field's length on
 * the wire. In a Produce request (v3 on), a partition whose records Kafka's
 * ProduceRequest.validateRecords refuses (not exactly one complete batch of magic 2, or
 * zstd before v7) has in its object also
 *   "invalid": {"errorCode": 87, "error": "INVALID_RECORD", "reason": "..."}
 * (76 UNSUPPORTED_COMPRESSION_TYPE, 2 CORRUPT_MESSAGE, -1 for a compression id Kafka does
 * not know before v7): the partition's error as a broker answers it. kw_encode_request_
 * frame_records ignores the key. flags and max_decompressed are those of
 * kw_records_decode_table. Errors: those
 * of the frame call, and those of the records calls (KW_ERR_DECODE naming the records
 * field, e.g. "responses[0].partitions[2].records", and the batch; KW_ERR_TOO_LARGE;
 * KW_ERR_UNSUPPORTED). */
int32_t kw_decode_request_frame_records(const uint8_t *in, int32_t in_len, int32_t flags,
                                        int32_t max_decompressed, uint8_t **out, int32_t *out_len);
int32_t kw_decode_response_frame_records(const uint8_t *in, int32_t in_len, int32_t api_key,
                                         int32_t api_version, int32_t flags, int32_t max_decompressed,
                                         uint8_t **out, int32_t *out_len);

/* kw_encode_request_frame_records: as kw_encode_request_frame, with records taken from a
 * record table (layout 1 or 2: one that kw_records_decode_table or a *_frame_records
 * call returned, or one the host built in the same format; only the entries' key, value,
 * headers and timestamp are read). In the JSON a records field may be null, a base64
 * string (the raw bytes, as in kw_encode_request_frame), or an object
 *   {"firstRecord": i, "recordCount": n,
 *    "compression": "none" | "gzip" | "snappy" | "lz4" | "zstd",   (default "none")
 *    ...and any batch key of kw_records_encode: "magic", "baseOffset",
 *    "partitionLeaderEpoch", "producerId", "producerEpoch", "baseSequence",
 *    "transactional", "timestampType", "logAppendTime", "level"}
 * which becomes one batch of table records i .. i+n-1, built as kw_records_encode builds
 * it (so compression is chosen per partition). "skippedBytes" and "size", as a decode
 * writes them, are accepted and ignored, so a decoded frame's JSON and table encode again
 * as they are. table may be NULL with table_len 0 when no
 * field refers to it. Errors: those of kw_encode_request_frame; a bad reference (records
 * outside the table, unknown key, bad compression name) or a batch that cannot be built is
 * KW_ERR_JSON at the records field's JSON path; a table whose header does not fit its
 * buffer is KW_ERR_ARG. */
int32_t kw_encode_request_frame_records(const uint8_t *json, int32_t json_len, const uint8_t *table,
                                        int32_t table_len, uint8_t **out, int32_t *out_len);

/* kw_runtime_stats (ABI 1.2): figures of the library's Go runtime and of the buffers the
 * host holds, as one JSON object:
 *   {"gcCycles": 12,             (garbage collection cycles completed so far)
 *    "heapAllocs": 4021,         (heap objects allocated so far, exact)
 *    "heapAllocBytes": 8310000,  (bytes allocated so far)
 *    "heapLiveBytes": 1200000,   (bytes of heap objects, live or not yet swept)
 *    "runtimeBytes": 9000000,    (memory the runtime obtained; in wasm, about the
 *                                 linear memory in use)
 *    "liveBuffers": 2,           (kw_alloc and output buffers not yet freed)
 *    "liveBufferBytes": 4096}
 * For monitoring a long-running host and for tests that steady-state calls allocate
 * nothing. The call stops the Go runtime's world for a moment (not for hot paths). The
 * output is freed with kw_free like any other. */
int32_t kw_runtime_stats(uint8_t **out, int32_t *out_len);

/* ---- the host's own decompressor (ABI 1.3) ------------------------------------------
 * A host whose native zlib (or zstd, lz4, snappy) is faster than the library's
 * decompresses a frame's compressed batches itself:
 *
 * 1. It calls kw_decode_request_frame_records or kw_decode_response_frame_records with
 *    KW_RECORDS_HOST_<codec> in flags for each codec it decompresses. A frame with no
 *    record batch (magic 2) of those codecs gives its table, as without the flags: one
 *    call. A frame with some gives instead the batch list, recognised by its magic
 *    KW_BATCH_LIST_MAGIC where a table has KW_TABLE_MAGIC: the int32 count at
 *    KW_BATCH_LIST_COUNT, then from KW_BATCH_LIST_HEADER_SIZE one entry per such batch
 *    of every records field, in frame order: where its compressed records section lies
 *    in `in` (KW_BATCH_DATA_OFFSET, KW_BATCH_DATA_LENGTH), its codec and the record count
 *    its header states. The batches are not checked (their checksums are checked in
 *    step 3). An error is the one the call gives without the flags.
 * 2. It decompresses those sections (each at most max_decompressed bytes; 0: 100 MiB).
 * 3. It calls kw_decode_frame_records_inflated: api_key -1 for a request frame (its
 *    header names the api), else the response's api_key and api_version; the same flags
 *    and max_decompressed; and in inflated[0:inflated_len) the sections it decompressed:
 *      int32 count, then count pairs (int32 data offset as the list gave it, int32
 *      length) in increasing offset order, then the decompressed sections one after
 *      another, in the same order.
 *    It returns the table the call of step 1 gives without the host flags: each listed
 *    batch's checksum is checked on its compressed bytes; its records are read from the
 *    section given, exactly as from the library's own decompression; max_decompressed
 *    applies to it; a batch the host left out (it could not decompress it: corrupt, cut
 *    short, past the cap) is decompressed by the library, which then gives the error it
 *    always gives. This call never returns a batch list: it ignores KW_RECORDS_HOST_*.
 * So a host that hands back the exact decompressed bytes gets the same table, records and
 * errors as without host decompression. Errors: those of the frame-records calls;
 * KW_ERR_ARG for an inflated input whose count, offsets or lengths do not describe it
 * exactly. */
int32_t kw_decode_frame_records_inflated(const uint8_t *in, int32_t in_len, int32_t api_key,
                                         int32_t api_version, int32_t flags, int32_t max_decompressed,
                                         const uint8_t *inflated, int32_t inflated_len, uint8_t **out,
                                         int32_t *out_len);

/* ================================================================================= */
/* Rules on request fields (codec/rules) (ABI 1.5)                                   */
/* ================================================================================= */

/* kw_rules_check: applies rules on request fields, as kwire's proxy filter does, to one
 * whole request frame (size prefix, header, body) and, when a rule is broken, builds the
 * broker's answer. rules[0:rules_len) is the rule set as JSON, an array of rules:
 *   [{"api": "CreateTopics", "field": "topics[].replicationFactor", "min": 3},
 *    {"api": "Produce", "field": "acks", "in": [-1]},
 *    {"api": "*", "field": "header.clientId", "pattern": "^[a-z0-9-]+$"}]
 * "api" is an api's name or "*" (every api; only header.clientId); "field" a path of
 * the JSON form's names ("[]" steps into each element of an array); predicates: "min",
 * "max", "in" (integers or strings), "pattern" (a linear-time subset of RE2), "required",
 * "absent", "minItems", "maxItems"; "ifMissing": "pass" (default) | "refuse"; "message".
 * Every path is checked against Kafka's descriptors (an unknown one gets a "did you
 * mean"). error_code is the Kafka error the answer carries (44 POLICY_VIOLATION is what
 * brokers answer a policy refusal with); it must be a non-zero int16. The same rule set
 * passed again is not parsed again. Returns the verdict as JSON:
 *   {"allowed": true}
 *   {"allowed": false, "rule": 0,           (index of the broken rule; -1 when the body
 *                                            could not be read: policy fails closed)
 *    "api": "CreateTopics", "field": "topics[].replicationFactor", (the rule's)
 *    "path": "topics[1].replicationFactor", "value": "1",  (where it failed, what was
 *                                            there: a number, a quoted string, "null",
 *                                            an array's length, "" when missing)
 *    "message": "...",
 *    "place": "perEntity" | "topLevel" | "nowhere", (where the error lands in the
 *                                            api's response; nowhere: no field can
 *                                            carry it, close the connection instead)
 *    "response": "<base64>" | null}         (the whole response frame to send in the
 *                                            broker's place, with the request's
 *                                            correlation id; null for place nowhere
 *                                            and for Produce with acks=0)
 * Errors: KW_ERR_JSON for a bad rule set (kw_last_error_json names the JSON path, e.g.
 * "$[1].field", and the byte offset); KW_ERR_DECODE for a frame whose header cannot be
 * read or whose size prefix does not match its length; KW_ERR_ARG for error_code 0 or
 * outside int16, or bad pointers and lengths. KW_ERR_UNSUPPORTED from the default
 * kwire.wasm, which leaves the rule engine out to keep within its size budget (a module
 * built with -tags kwire_rules has it; libkwire always does). */
int32_t kw_rules_check(const uint8_t *rules, int32_t rules_len, const uint8_t *frame, int32_t frame_len,
                       int32_t error_code, uint8_t **out, int32_t *out_len);

/* ================================================================================= */
/* Sessions: the client side of one Kafka connection, sans I/O (ABI 1.1)             */
/* ================================================================================= */

/* A session hands out correlation ids, writes request frames with the right header
 * version, cuts the bytes the host reads from its socket (in any chunking) into response
 * frames, matches each to its request, reads its header with the right header version
 * (ApiVersions responses always use v0; ControlledShutdown v0 requests use header v0),
 * negotiates api versions with ApiVersions and counts bytes and requests. It does no
 * I/O: the host writes the frames it gets and feeds what it reads. Bodies are in the JSON
 * form. Sessions are integer handles; calls on one handle are serialized (C: from any
 * thread); different handles are independent. At most 65536 sessions are open at once.
 *
 * kw_session_new: config is a JSON object (may be empty, len 0): {"clientId": "kwire",
 *   "maxFrameSize": 104857600, "clientSoftwareName": "kwire-go", "clientSoftwareVersion":
 *   "<the library's version>", "bootstrapVersion": 0 (ApiVersions version of the first
 *   negotiation request; 0 = kwire's highest)}. *out_handle receives a positive handle.
 *   The client software fields go into negotiation's ApiVersions requests and into every
 *   ApiVersions request (v3+) of kw_session_request that leaves them empty. Kafka accepts
 *   only letters, digits, '-' and '.', beginning and ending with a letter or digit: another
 *   value fails that request with KW_ERR_ENCODE naming the field, before it is written.
 * kw_session_free: releases a handle.
 * kw_session_begin_negotiation: the first ApiVersions request frame, to write first.
 *   kw_session_next applies the broker's answers itself; when the broker does not know
 *   the version asked (UNSUPPORTED_VERSION), the answer carries the retry frame to write.
 * kw_session_request: the frame of a request of api_key at api_version (-1: the
 *   negotiated version, min(kwire's highest, the broker's highest); KW_ERR_VERSION when
 *   not negotiated yet or when no version is common) whose body is body_json (the JSON
 *   form). *out_correlation_id receives its correlation id. flags: 0, or
 *   KW_SESSION_NO_RESPONSE for a request the broker does not answer (Produce with
 *   acks=0): nothing waits for it.
 * kw_session_feed: bytes read from the connection. A frame whose size prefix is above
 *   maxFrameSize fails the session (KW_ERR_TOO_LARGE) before anything is allocated.
 * kw_session_next: the next complete response, as JSON; an empty output (out_len 0, the
 *   buffer still to be freed) when none is complete yet:
 *     {"correlationId": 3, "apiKey": 3, "apiVersion": 12, "bodyVersion": 12,
 *      "headerVersion": 1, "negotiation": "none" | "done" | "retry",
 *      "retry": "<base64 frame to write>",              (with "retry" only)
 *      "body": {...}  or  "error": "<text>"}
 *   "error" concerns that response only (a malformed body, a failed negotiation step);
 *   the session goes on. A status error (KW_ERR_DECODE: a response for a correlation id
 *   that is not pending, a header that cannot be read; KW_ERR_TOO_LARGE) fails the
 *   session for good: close the connection.
 * kw_session_counters: {"bytesSent": "n", "bytesReceived": "n", "requestsSent": "n",
 *   "responsesReceived": "n", "pending": n, "negotiated": bool, "buffered": bool}
 *   (int64 counts as decimal strings; "buffered": part of a frame has been fed).
 * kw_session_version_for: the version kw_session_request would use for api_key. */
#define KW_SESSION_NO_RESPONSE 1

int32_t kw_session_new(const uint8_t *config_json, int32_t config_len, int32_t *out_handle);
int32_t kw_session_free(int32_t session);
int32_t kw_session_begin_negotiation(int32_t session, uint8_t **out, int32_t *out_len);
int32_t kw_session_request(int32_t session, int32_t api_key, int32_t api_version, const uint8_t *body_json,
                           int32_t body_len, int32_t flags, uint8_t **out, int32_t *out_len,
                           int32_t *out_correlation_id);
int32_t kw_session_feed(int32_t session, const uint8_t *in, int32_t in_len);
int32_t kw_session_next(int32_t session, uint8_t **out, int32_t *out_len);
int32_t kw_session_counters(int32_t session, uint8_t **out, int32_t *out_len);
int32_t kw_session_version_for(int32_t session, int32_t api_key, int32_t *out_version);

#ifdef __cplusplus
}
#endif

#endif /* KWIRE_H */
