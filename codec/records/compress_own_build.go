//go:build !kwire_nocompress && (wasm || kwire_ownenc)

package records

// WebAssembly builds compress with kwire's own encoders only (compress_own.go);
// so do native builds with the tag kwire_ownenc, which is how the tests run
// them through everything that encodes (Kafka's Java reader and a real broker
// included).

// haveCompressors tells whether this build has the compressors.
const haveCompressors = true

// ownEncoders tells whether this build compresses with kwire's own encoders.
const ownEncoders = true

// encode appends src compressed with c (gzip, snappy, lz4 or zstd; compress
// has checked the magic) to dst.
func encode(dst []byte, c Compression, src []byte, level int, magic int8, rawSnappy bool) ([]byte, error) {
	return encodeOwn(dst, c, src, level, magic, rawSnappy)
}
