package transcode_test

import (
	"math/rand"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/codectest"
	"github.com/kwire/kwire/internal/transcode"
)

func init() {
	transcode.SetSamples(func() []transcode.SampleInfo {
		var out []transcode.SampleInfo
		for _, m := range codec.Messages() {
			out = append(out, transcode.SampleInfo{Name: m.Name, Kind: m.Kind, MinVersion: m.MinVersion, MaxVersion: m.MaxVersion})
		}
		return out
	}, func(name string, v int16, rnd *rand.Rand) ([]byte, error) {
		m := codec.NewMessage(name)
		codectest.Fill(m, rnd, v)
		return m.Encode(nil, v)
	})
}
