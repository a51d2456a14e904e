package zstd

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestReferenceCLI decodes what the reference zstd command-line tool produces
// (when the zstd command is installed; the test is skipped, and says so, where the
// tool is missing).
func TestReferenceCLI(t *testing.T) {
	bin, err := exec.LookPath("zstd")
	if err != nil {
		t.Skip("reference zstd tool not installed: reference-encoder cases not run")
	}
	r := rand.New(rand.NewSource(11))
	few := make([]byte, 5000) // two symbols: direct Huffman weights
	for i := range few {
		few[i] = "ab"[r.Intn(2)]
	}
	alpha := make([]byte, 300000)
	for i := range alpha {
		alpha[i] = byte('a' + r.Intn(26))
	}
	ins := []input{
		{"empty", nil},
		{"one byte", []byte{'x'}},
		{"two symbols", few},
		{"rle literals", bytes.Repeat([]byte("xxxabcdefghabcdefghabcdefghabcdefghabcdefgh"), 2000)},
		{"alphabet 300000", alpha},
		{"records 1KiBx300", records(12, 300, 1024)},
		{"mixed 700000", mixed(13, 700000)},
		{"text 128KiB+1", text(14, 128<<10+1)},
		{"zeros 300000", make([]byte, 300000)},
		{"random 5000", randomBytes(15, 5000)},
	}
	settings := [][]string{{"-1"}, {"-3"}, {"-9"}, {"-19"}, {"--ultra", "-22"}, {"--fast=5"},
		{"-3", "--no-check"}, {"-3", "--no-content-size"}, {"--long=27", "-19"}, {"-5", "--single-thread"}}
	dir := t.TempDir()
	var d Decoder
	for _, in := range ins {
		src := filepath.Join(dir, "in")
		if err := os.WriteFile(src, in.data, 0o600); err != nil {
			t.Fatal(err)
		}
		var all, want []byte
		for _, s := range settings {
			out := filepath.Join(dir, "out.zst")
			args := append([]string{"-q", "-f"}, s...)
			cmd := exec.Command(bin, append(args, src, "-o", out)...)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("zstd %v: %v: %s", s, err, msg)
			}
			comp, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.DecodeAll(nil, comp, len(in.data))
			if err != nil {
				t.Errorf("zstd %v, %s: %v", s, in.name, err)
			} else if !bytes.Equal(got, in.data) {
				t.Errorf("zstd %v, %s: output differs", s, in.name)
			}
			all = append(all, comp...)
			want = append(want, in.data...)
		}
		// All settings' frames one after another decode to the inputs one after another.
		got, err := d.DecodeAll([]byte("prefix"), all, len(want))
		if err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("%s: concatenated frames: err %v, output equal %v", in.name, err, bytes.Equal(got, append([]byte("prefix"), want...)))
		}
	}
}
