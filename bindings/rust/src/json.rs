//! Helpers for kwire's JSON form: int64 values (decimal strings), bytes (standard base64)
//! and uuids (22-character URL-safe base64), read from a [`Value`] or through serde.
//!
//! ```
//! use kwire::json;
//! let v = serde_json::json!({"producerId": "4611686018427387905", "key": "AAEC"});
//! assert_eq!(json::int64(&v["producerId"]), Some(4611686018427387905));
//! assert_eq!(json::bytes(&v["key"]), Some(Some(vec![0, 1, 2])));
//! assert_eq!(json::base64_encode(&[0, 1, 2]), "AAEC");
//! ```

use serde::{Deserialize, Deserializer, Serializer};
use serde_json::Value;

/// Reads an int64 exactly: kwire's decimal string form, or an integral JSON number.
/// None for anything else (a float, a string that is not a decimal int64, out of range).
pub fn int64(v: &Value) -> Option<i64> {
    match v {
        Value::String(s) => parse_int64(s),
        Value::Number(n) => n.as_i64(),
        _ => None,
    }
}

/// The JSON value kwire uses for an int64: a decimal string.
pub fn int64_value(x: i64) -> Value {
    Value::String(x.to_string())
}

fn parse_int64(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    if s == "-0" {
        return None;
    }
    s.parse().ok()
}

/// Reads a bytes value: Some(Some(bytes)) for base64 text, Some(None) for JSON null, None
/// for anything else (not a string, invalid base64).
pub fn bytes(v: &Value) -> Option<Option<Vec<u8>>> {
    match v {
        Value::Null => Some(None),
        Value::String(s) => base64_decode(s).map(Some),
        _ => None,
    }
}

/// Reads a uuid (22-character URL-safe base64 without padding) into its 16 bytes.
pub fn uuid(v: &Value) -> Option<[u8; 16]> {
    let s = v.as_str()?;
    if s.len() != 22 || s.contains(['+', '/', '=']) {
        return None;
    }
    base64_decode(s)?.try_into().ok()
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding, as kwire writes bytes and records.
pub fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding required when the length is not a multiple of 4) or
/// unpadded URL-safe base64 (kwire's uuid form). None when invalid or not canonical.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    let body = b.strip_suffix(b"==").or_else(|| b.strip_suffix(b"=")).unwrap_or(b);
    let padded = body.len() != b.len();
    if (padded && !b.len().is_multiple_of(4)) || body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in body {
        let d = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32;
        acc = acc << 6 | d;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if acc != 0 {
        return None;
    }
    Some(out)
}

/// `#[serde(with = "kwire::json::int64_string")]`: an i64 as kwire's decimal string
/// (reads a string or an integral number).
pub mod int64_string {
    use super::*;

    /// Writes the i64 as a decimal string.
    pub fn serialize<S: Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    /// Reads a decimal string or an integral number.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let v = Value::deserialize(d)?;
        int64(&v).ok_or_else(|| serde::de::Error::custom(format!("not an int64: {}", v)))
    }
}

/// `#[serde(with = "kwire::json::base64_bytes")]`: an `Option<Vec<u8>>` as base64 or null.
pub mod base64_bytes {
    use super::*;

    /// Writes base64, or null for None.
    pub fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => s.serialize_str(&base64_encode(b)),
            None => s.serialize_none(),
        }
    }

    /// Reads base64 or null.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        let v = Value::deserialize(d)?;
        bytes(&v).ok_or_else(|| serde::de::Error::custom("not base64 bytes or null"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip() {
        for n in 0..40usize {
            let data: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let s = base64_encode(&data);
            assert_eq!(s.len() % 4, 0);
            assert_eq!(base64_decode(&s).as_deref(), Some(&data[..]), "{}", s);
        }
        assert_eq!(base64_encode(b"Man"), "TWFu");
        assert_eq!(base64_encode(b"Ma"), "TWE=");
        assert_eq!(base64_encode(b"M"), "TQ==");
        for bad in ["A", "A===", "AB=", "AB==x", "AB!=", "AB=="] {
            // "AB==" has non-zero leftover bits: not what an encoder writes.
            assert_eq!(base64_decode(bad), None, "{}", bad);
        }
        assert_eq!(uuid(&Value::String("AAAAAAAAAAAAAAAAAAAAAA".into())), Some([0; 16]));
        assert_eq!(uuid(&Value::String("AAAAAAAAAAAAAAAAAAAAAA==".into())), None);
    }

    #[test]
    fn int64_strings() {
        assert_eq!(parse_int64("9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int64("-9223372036854775808"), Some(i64::MIN));
        for bad in ["9223372036854775808", "-0", "01", "+1", "", "-", "1.0", " 1"] {
            assert_eq!(parse_int64(bad), None, "{}", bad);
        }
        assert_eq!(int64(&serde_json::json!(12)), Some(12));
        assert_eq!(int64(&serde_json::json!(1.5)), None);
        assert_eq!(int64_value(-5), Value::String("-5".into()));
    }
}
