package transcode

import (
	"math/rand"

	"github.com/kwire/kwire/internal/proto"
)

// sampleInfo is one message the internal tests encode random samples of.
type sampleInfo struct {
	Name                   string
	Kind                   proto.Kind
	MinVersion, MaxVersion int16
}

// The internal tests cannot import codec, which imports this package; the external
// tests, which can, fill these in (see samples_test.go).
var (
	sampleMessages func() []sampleInfo
	sampleEncode   func(name string, v int16, rnd *rand.Rand) ([]byte, error)
)

// SetSamples is how the external tests hand over codec's messages and random encoder.
func SetSamples(list func() []sampleInfo, encode func(name string, v int16, rnd *rand.Rand) ([]byte, error)) {
	sampleMessages, sampleEncode = list, encode
}

// SampleInfo names sampleInfo for the external tests.
type SampleInfo = sampleInfo
