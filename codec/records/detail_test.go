package records

import (
	"errors"
	"fmt"
	"io"
	"math"
	"testing"
)

// detail formats its message without fmt; for the verbs and argument types
// the package uses it must write what fmt would.
func TestDetailMatchesFmt(t *testing.T) {
	tests := []struct {
		format string
		args   []any
	}{
		{"plain text", nil},
		{"%d and %d", []any{int(-7), int8(-128)}},
		{"%d %d %d %d", []any{int16(math.MinInt16), int32(math.MaxInt32), int64(math.MinInt64 + 1), int64(math.MaxInt64)}},
		{"%d %d %d %d %d", []any{uint(3), uint8(255), uint16(65535), uint32(math.MaxUint32), uint64(math.MaxUint64)}},
		{"%v %v %v", []any{42, int8(-2), uint64(1 << 40)}},
		{"%v compression, %v, %v", []any{CompressionZstd, Compression(9), "text"}},
		{"gzip: %v", []any{io.ErrUnexpectedEOF}},
		{"%#x %#x %#x %#x", []any{byte(0x4f), uint32(0), uint32(0xdeadbeef), uint64(0xdeadbeef12)}},
		{"stored %#08x, computed %#08x", []any{uint32(0x1234), uint32(0xcafebabe)}},
		{"%x and %08x", []any{uint16(0xab), uint32(0x12)}},
		{"100%% sure, %d", []any{1}},
		{"missing %d", nil},
	}
	for _, tc := range tests {
		got := detail(ErrCorrupt, tc.format, tc.args...)
		want := fmt.Errorf("%w: "+tc.format, append([]any{ErrCorrupt}, tc.args...)...)
		if got.Error() != want.Error() {
			t.Errorf("%q: got %q, want %q", tc.format, got, want)
		}
		if !errors.Is(got, ErrCorrupt) {
			t.Errorf("%q: does not unwrap to its cause", tc.format)
		}
	}
}
