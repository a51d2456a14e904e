// Errors of kwire calls: one Error subclass per status category of the ABI (kwire.h),
// each carrying the status code and the library's own error text and details.

// The status codes come from the ABI's one table (abi_gen.js, generated).
export {
  KW_OK, KW_ERR_ARG, KW_ERR_DECODE, KW_ERR_ENCODE, KW_ERR_JSON, KW_ERR_UNKNOWN_API, KW_ERR_VERSION,
  KW_ERR_TOO_LARGE, KW_ERR_NOMEM, KW_ERR_UNSUPPORTED, KW_ERR_INTERNAL,
} from './abi_gen.js';
import {
  KW_OK, KW_ERR_ARG, KW_ERR_DECODE, KW_ERR_ENCODE, KW_ERR_JSON, KW_ERR_UNKNOWN_API, KW_ERR_VERSION,
  KW_ERR_TOO_LARGE, KW_ERR_NOMEM, KW_ERR_UNSUPPORTED, KW_ERR_INTERNAL,
} from './abi_gen.js';

/**
 * KwireError is every error a kwire call reports. `status` is the ABI's negative status,
 * `category` its name (decode, encode, json, ...), `text` the library's error text
 * (kw_last_error), `details` the parsed kw_last_error_json (with `message`, `version`,
 * `path`, `offset`, `hint` when the library knows them) and `call` the kw_ function that
 * failed. `messageName` is the Kafka message's name (`message` in the details).
 */
export class KwireError extends Error {
  constructor(status, details, call, options) {
    const d = details && typeof details === 'object' ? details : {};
    const text = typeof d.text === 'string' && d.text !== '' ? d.text : `kwire: status ${status}`;
    super(text, options);
    this.name = new.target.name;
    this.status = status;
    this.category = typeof d.category === 'string' ? d.category : categoryOf(status);
    this.text = text;
    this.details = d;
    this.call = call;
  }
  /** The message name the error is about ("ProduceRequest"), when known. */
  get messageName() {
    return this.details.message;
  }
  /** The message version, when known. */
  get version() {
    return this.details.version;
  }
  /** The field path (decode/encode) or JSON path (json errors), when known. */
  get path() {
    return this.details.path;
  }
  /** The byte offset in the input (or in the JSON text), when known. */
  get offset() {
    return this.details.offset;
  }
  /**
   * For a response that failed to decode: "the bytes decode as FetchResponse v12: was
   * the request v12?" when exactly one other version of its api decodes the frame.
   */
  get hint() {
    return this.details.hint?.text;
  }
  /** The version the hint names (12 above), when there is a hint. */
  get hintVersion() {
    return this.details.hint?.version;
  }
  /** The topic of the partition whose records failed, on the per-partition path. */
  get topic() {
    return this.details.topic;
  }
  /** The partition whose records failed, on the per-partition path. */
  get partition() {
    return this.details.partition;
  }
}

/** KW_ERR_ARG: a bad argument (bad pointer or length, unknown compression or flag). */
export class KwireArgError extends KwireError {}
/** KW_ERR_DECODE: the bytes are not a valid encoding. */
export class KwireDecodeError extends KwireError {}
/** KW_ERR_ENCODE: the message cannot be encoded at that version. */
export class KwireEncodeError extends KwireError {}
/** KW_ERR_JSON: the JSON does not match the message (unknown key, wrong type, ...). */
export class KwireJSONError extends KwireError {}
/** KW_ERR_UNKNOWN_API: unknown api key or message name. */
export class KwireUnknownApiError extends KwireError {}
/** KW_ERR_VERSION: the version is not valid for the message. */
export class KwireVersionError extends KwireError {}
/** KW_ERR_TOO_LARGE: a size above a limit (frame, decompressed batch, allocation). */
export class KwireTooLargeError extends KwireError {}
/** KW_ERR_NOMEM: the library could not allocate memory. */
export class KwireNoMemError extends KwireError {}
/** KW_ERR_UNSUPPORTED: a feature the library does not read or write. */
export class KwireUnsupportedError extends KwireError {}
/** KW_ERR_INTERNAL: a bug inside the library, caught; the instance stays usable. */
export class KwireInternalError extends KwireError {}
/**
 * The module trapped (or exited). Its state is lost: the binding discards the instance
 * and, when it can, replaces it with a fresh one at once (`replaced` tells which); the
 * call that trapped is not retried. status is KW_ERR_INTERNAL.
 */
export class KwireTrapError extends KwireError {
  constructor(text, replaced, call, cause) {
    super(KW_ERR_INTERNAL, { status: KW_ERR_INTERNAL, category: 'internal', text }, call, { cause });
    this.replaced = replaced;
  }
}

const byStatus = new Map([
  [KW_ERR_ARG, [KwireArgError, 'arg']],
  [KW_ERR_DECODE, [KwireDecodeError, 'decode']],
  [KW_ERR_ENCODE, [KwireEncodeError, 'encode']],
  [KW_ERR_JSON, [KwireJSONError, 'json']],
  [KW_ERR_UNKNOWN_API, [KwireUnknownApiError, 'unknown_api']],
  [KW_ERR_VERSION, [KwireVersionError, 'version']],
  [KW_ERR_TOO_LARGE, [KwireTooLargeError, 'too_large']],
  [KW_ERR_NOMEM, [KwireNoMemError, 'nomem']],
  [KW_ERR_UNSUPPORTED, [KwireUnsupportedError, 'unsupported']],
  [KW_ERR_INTERNAL, [KwireInternalError, 'internal']],
]);

function categoryOf(status) {
  const e = byStatus.get(status);
  return e ? e[1] : 'unknown';
}

/** errorFor builds the error of a failed call (an unknown negative status gives a KwireError). */
export function errorFor(status, details, call) {
  const e = byStatus.get(status);
  return new (e ? e[0] : KwireError)(status, details, call);
}
