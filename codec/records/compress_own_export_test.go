//go:build !kwire_nocompress

package records

import "testing"

// EncodeOwnT is encodeOwn (kwire's own encoders, compiled in every build that
// compresses) for the package's external tests.
func EncodeOwnT(c Compression, src []byte, magic int8) ([]byte, error) {
	return encodeOwn(nil, c, src, 0, magic, false)
}

// RefCompressT is refCompress at the library's default level.
func RefCompressT(t testing.TB, c Compression, src []byte, magic int8) []byte {
	return refCompress(t, c, src, 0, magic)
}
