//go:build kwire_nocompress

package records

// This build (tag kwire_nocompress) leaves the compressors out: it decodes
// every codec but encodes none. Its binaries carry no compression library for
// a direction they never use.

// haveCompressors tells whether this build has the compressors.
const haveCompressors = false

// encode fails: the build has no compressors.
func encode(dst []byte, c Compression, src []byte, level int, magic int8, rawSnappy bool) ([]byte, error) {
	return dst, detail(ErrUnsupported, "%v compression: built with kwire_nocompress, which has no compressors", c)
}
