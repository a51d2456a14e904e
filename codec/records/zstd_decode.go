package records

import (
	"errors"

	"github.com/kwire/kwire/internal/zstd"
)

// zstd frames are decoded by kwire's own decoder (internal/zstd), which
// decodes straight into the output: the output is the match history, so it
// needs no window buffer and its memory is bounded by the limit plus fixed
// tables. A frame header stating a content size beyond the limit is refused
// before anything is allocated. Decoders keep their tables and are pooled.

var zstdDecoders = codecPool{New: func() any { return new(zstd.Decoder) }}

func unzstd(dst, src []byte, limit int) ([]byte, error) {
	z := zstdDecoders.Get().(*zstd.Decoder)
	defer zstdDecoders.Put(z)
	out, err := z.DecodeAll(dst, src, limit)
	if err != nil {
		if errors.Is(err, zstd.ErrTooLarge) {
			return dst, detail(ErrTooLarge, "more than %d bytes (%v)", limit, err)
		}
		return dst, detail(ErrCorrupt, "%v", err)
	}
	return out, nil
}
