// Interop checks shared by the Node tests and the browser page.
//
// Kafka's broker accepts a request whose body is followed by extra bytes and ignores them;
// librdkafka 2.16 sends an all-topics MetadataRequest v13 with 3 bytes after the body.
// kwire accepts such a request, shows the bytes as "_trailingBytes" (base64) at the end of
// the body, and re-encodes the frame byte for byte. Responses stay strict.

/** The frame: size 25, api key 3, version 13, correlation id 9, client id "rdkafka",
 * header tags; body: topics null (all topics), allowAutoTopicCreation true,
 * includeTopicAuthorizedOperations false, tags; then 00 01 02. */
export const METADATA_V13_TRAILING_HEX = '000000190003000d00000009000772646b61666b610000010000000102';
/** A MetadataResponse v13 frame (empty) followed by one extra byte (size 20). */
export const METADATA_RESPONSE_V13_EXTRA_HEX = '000000140000000000000000000100ffffffff0100000000';

export function fromHex(h) {
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function hex(b) {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

/**
 * checkTrailingBytes runs the interop case through an instance and returns a list of
 * failures (empty when everything holds). errorClass is kwire's KwireDecodeError.
 */
export function checkTrailingBytes(kw, errorClass) {
  const fails = [];
  const frame = fromHex(METADATA_V13_TRAILING_HEX);
  let f;
  try {
    f = kw.decodeRequest(frame);
  } catch (e) {
    return [`the request frame is refused: ${e.message}`];
  }
  if (f.apiKey !== 3 || f.apiVersion !== 13 || f.header.correlationId !== 9 || f.header.clientId !== 'rdkafka') {
    fails.push(`header: ${JSON.stringify(f.header)}`);
  }
  if (f.body.topics !== null) fails.push(`topics: ${JSON.stringify(f.body.topics)} (want null: all topics)`);
  if (f.body._trailingBytes !== 'AAEC') fails.push(`_trailingBytes: ${JSON.stringify(f.body._trailingBytes)} (want "AAEC")`);
  const keys = Object.keys(f.body);
  if (keys[keys.length - 1] !== '_trailingBytes') fails.push(`_trailingBytes is not the body's last key: ${keys.join(',')}`);
  try {
    const again = hex(kw.encodeRequest(f));
    if (again !== METADATA_V13_TRAILING_HEX) fails.push(`re-encoded ${again}, want ${METADATA_V13_TRAILING_HEX}`);
    const again2 = hex(kw.encodeRequest(JSON.stringify(f)));
    if (again2 !== METADATA_V13_TRAILING_HEX) fails.push(`re-encoded from JSON text ${again2}`);
  } catch (e) {
    fails.push(`re-encode: ${e.message}`);
  }
  // The body alone through the message calls: same bytes shown and kept.
  const body = frame.subarray(4 + 2 + 2 + 4 + 2 + 7 + 1);
  try {
    const m = kw.decodeMessage('MetadataRequest', 13, body);
    if (m._trailingBytes !== 'AAEC') fails.push(`decodeMessage _trailingBytes ${JSON.stringify(m._trailingBytes)}`);
    const b = hex(kw.encodeMessage('MetadataRequest', 13, m));
    if (b !== hex(body)) fails.push(`encodeMessage ${b}, want ${hex(body)}`);
  } catch (e) {
    fails.push(`body: ${e.message}`);
  }
  // The header peek is unaffected.
  const peek = kw.peekHeader(frame);
  if (peek.frameSize !== 25 || peek.apiKey !== 3 || peek.clientId !== 'rdkafka') fails.push(`peek ${JSON.stringify(peek)}`);
  // A response with one extra byte is still refused, with the offset of that byte.
  try {
    kw.decodeResponse(fromHex(METADATA_RESPONSE_V13_EXTRA_HEX), 3, 13);
    fails.push('a response frame with an extra byte was accepted');
  } catch (e) {
    if (!(e instanceof errorClass) || !/trailing bytes/.test(e.message) || e.offset !== 23) {
      fails.push(`response with an extra byte: ${e.name} ${e.message} (offset ${e.offset})`);
    }
  }
  // Without the extra byte it decodes (the refusal is about the byte, not the frame).
  const ok = fromHex(METADATA_RESPONSE_V13_EXTRA_HEX.slice(0, -2));
  ok[3] = 19;
  try {
    const r = kw.decodeResponse(ok, 3, 13);
    if ('_trailingBytes' in r.body) fails.push('a response shows _trailingBytes');
  } catch (e) {
    fails.push(`the response without the extra byte: ${e.message}`);
  }
  return fails;
}
