package frames_test

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/kwire/kwire/cmd/kwire/internal/capture"
	"github.com/kwire/kwire/cmd/kwire/internal/frames"
)

// TestGuessResponseOnCapture: every response of the committed capture (real clients and
// a real broker) decodes whole as the response of its own api and version, which
// GuessResponse lists; its api comes first for all but the few responses whose bytes
// other apis read as plausibly (a Heartbeat's seven zero bytes, for one).
func TestGuessResponseOnCapture(t *testing.T) {
	data, err := os.ReadFile("../../../../examples/data/sample.pcap")
	if err != nil {
		t.Fatal(err)
	}
	responses, first := 0, 0
	r := capture.NewReader(capture.Options{}, func(f *capture.Frame) {
		if f.Request || !f.Matched {
			return
		}
		responses++
		guesses := frames.GuessResponse(f.Data)
		i := slices.IndexFunc(guesses, func(g frames.Guess) bool { return g.APIKey == f.APIKey })
		if i < 0 || !slices.Contains(guesses[i].Versions, f.APIVersion) {
			t.Errorf("a response of api %d v%d: not among the guesses %+v", f.APIKey, f.APIVersion, guesses)
			return
		}
		if i == 0 {
			first++
		}
	})
	if err := r.ReadCapture(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Logf("%d responses, %d with their api first", responses, first)
	if responses < 30 || first*10 < responses*8 {
		t.Errorf("%d responses, their api first for %d", responses, first)
	}
}
