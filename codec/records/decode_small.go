//go:build wasm || kwire_nocompress

package records

// WebAssembly builds, and builds with kwire_nocompress, decode with kwire's own
// decoders only: gzip by the standard library's reader, zstd by
// codec/internal/zstd, LZ4 blocks by lz4Decode. They are small, which is what
// those builds need (see decode_native.go for the others).

func decodeGzip(dst, src []byte, limit int) ([]byte, error) { return gunzip(dst, src, limit) }

func decodeZstd(dst, src []byte, limit int) ([]byte, error) { return unzstd(dst, src, limit) }

func decodeLZ4Block(buf []byte, base, start int, src []byte) (int, error) {
	return lz4Decode(buf, base, start, src)
}
