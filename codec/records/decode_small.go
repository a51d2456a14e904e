//go:build wasm || kwire_nocompress

package records

import (
	"errors"

	"github.com/kwire/kwire/internal/inflate"
)

// WebAssembly builds, and builds with kwire_nocompress, decode with kwire's own
// decoders only: gzip by internal/inflate, zstd by internal/zstd, LZ4
// blocks by lz4Decode. They are small, which is what
// those builds need (see decode_native.go for the others).

func decodeGzip(dst, src []byte, limit int) ([]byte, error) { return gunzip(dst, src, limit) }

// gunzip decodes concatenated gzip members, as Kafka's Java reader does.
func gunzip(dst, src []byte, limit int) ([]byte, error) {
	l := len(dst)
	out, err := inflate.Gunzip(dst, src, limit)
	switch {
	case errors.Is(err, inflate.ErrTooLarge):
		return out[:l], detail(ErrTooLarge, "more than %d bytes", limit)
	case err != nil:
		return out[:l], detail(ErrCorrupt, "gzip: %v", err)
	}
	return out, nil
}

func decodeZstd(dst, src []byte, limit int) ([]byte, error) { return unzstd(dst, src, limit) }

func decodeLZ4Block(buf []byte, base, start int, src []byte) (int, error) {
	return lz4Decode(buf, base, start, src)
}
