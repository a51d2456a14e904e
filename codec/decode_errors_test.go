package codec_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/codectest"
)

var updateErrors = flag.Bool("update-errors", false, "rewrite testdata/decode_errors.txt")

// damagedErrors is the error text of every failed decode of a damaged encoding of
// info's message, at every version: random messages cut short or with one byte changed.
func damagedErrors(info *codec.MessageInfo) []string {
	var out []string
	for v := info.MinVersion; v <= info.MaxVersion; v++ {
		for seed := 0; seed < 4; seed++ {
			r := rand.New(rand.NewSource(int64(seed)*7919 + int64(v)*31 + int64(len(info.Name))))
			m := codec.NewMessage(info.Name)
			codectest.Fill(m, r, v)
			b, err := m.Encode(nil, v)
			if err != nil || len(b) == 0 {
				continue
			}
			for i := 0; i < 12; i++ {
				src := b[:r.Intn(len(b))]
				if i%2 == 1 {
					src = append([]byte(nil), b...)
					src[r.Intn(len(src))] ^= byte(1 + r.Intn(255))
				}
				if err := codec.NewMessage(info.Name).Decode(src, v); err != nil {
					out = append(out, fmt.Sprintf("v%d seed %d #%d: %v", v, seed, i, err))
				}
			}
		}
	}
	return out
}

// TestDamagedDecodeErrors pins the error text (message, version, field path, offset,
// cause) of decodes of damaged encodings of every message: one digest per message in
// testdata/decode_errors.txt. The decoders find the field path again only after a
// failure, so this is what keeps the paths as they were. The digests also depend on
// codectest.Fill; when its output changes, rewrite them (-update-errors) on the commit
// that changes it, with the decoders unchanged.
func TestDamagedDecodeErrors(t *testing.T) {
	golden := filepath.Join("testdata", "decode_errors.txt")
	got := map[string]string{}
	var lines []string
	for _, info := range codec.Messages() {
		errs := damagedErrors(info)
		h := sha256.Sum256([]byte(strings.Join(errs, "\n")))
		d := fmt.Sprintf("%d %s", len(errs), hex.EncodeToString(h[:8]))
		got[info.Name] = d
		lines = append(lines, info.Name+" "+d)
	}
	if *updateErrors {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(golden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, d, _ := strings.Cut(sc.Text(), " ")
		want[name] = d
	}
	for name, d := range got {
		if want[name] != d {
			t.Errorf("%s: decode errors of damaged encodings changed: %s, pinned %s (run with -update-errors on a commit known good, then diff damagedErrors' lines)", name, d, want[name])
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: pinned but not in codec.Messages()", name)
		}
	}
}
