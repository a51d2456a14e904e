package transcode_test

import (
	"bytes"
	"encoding/binary"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/conformance"
	"github.com/kwire/kwire/internal/transcode"
)

// Fuzz inputs start with a 4-byte selector: message index (2 bytes, modulo the message
// count), version offset (1 byte, modulo the message's version count) and mode (1 byte:
// even = wire bytes follow, odd = JSON text follows; mode 2 and 3 are request frames and
// request-frame envelopes).

var fuzzMessages = codec.Messages()

func selector(info *codec.MessageInfo, v int16, mode byte) []byte {
	for i, m := range fuzzMessages {
		if m == info {
			return []byte{byte(i >> 8), byte(i), byte(v - info.MinVersion), mode}
		}
	}
	panic("message not listed")
}

func fuzzSeeds(f *testing.F) {
	files, _ := filepath.Glob("../../conformance/vectors/kafka-clients-4.4.0.jsonl")
	r := rand.New(rand.NewSource(1))
	for _, file := range files {
		vs, err := conformance.ReadVectors(file)
		if err != nil {
			f.Fatal(err)
		}
		for i, vec := range vs {
			if i%40 != 0 {
				continue
			}
			m := codec.NewMessage(vec.Name)
			if m == nil {
				continue
			}
			info := m.Info()
			f.Add(append(selector(info, vec.Version, 0), vec.Bytes...))
			f.Add(append(selector(info, vec.Version, 1), vec.JSON...))
			if info.Kind == codec.KindRequest && r.Intn(2) == 0 {
				h := codec.NewRequestHeaderFor(m.(codec.Request), vec.Version, 1, "fuzz")
				hb, _ := h.Encode(nil, codec.RequestHeaderVersion(h.RequestAPIKey, vec.Version))
				frame := binary.BigEndian.AppendUint32(nil, uint32(len(hb)+len(vec.Bytes)))
				frame = append(append(frame, hb...), vec.Bytes...)
				f.Add(append([]byte{0, 0, 0, 2}, frame...))
			}
		}
	}
}

// FuzzBothEngines feeds random and mutated bodies, JSON texts and frames to the typed
// codec and the transcoder and fails on any difference: accepted or refused, error
// text, JSON text, re-encoded bytes.
func FuzzBothEngines(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(fuzzOne)
}

var fr transcode.Framer

func fuzzOne(t *testing.T, data []byte) {
	{
		if len(data) < 4 {
			return
		}
		info := fuzzMessages[int(binary.BigEndian.Uint16(data))%len(fuzzMessages)]
		nv := int(info.MaxVersion-info.MinVersion) + 1
		v := info.MinVersion + int16(int(data[2])%nv)
		payload := data[4:]
		switch data[3] % 4 {
		case 0:
			if !checkDecode(t, "fuzz wire", info.Name, v, payload) {
				return
			}
			// Whatever decodes re-encodes to the same bytes through the JSON form.
			js, err := transcode.AppendJSON(nil, info.Name, v, payload, nil)
			if err == nil {
				checkEncode(t, "fuzz re-encode", info.Name, v, js)
			}
		case 1:
			checkEncode(t, "fuzz json", info.Name, v, payload)
		case 2:
			want, werr := typedRequestEnvelope(payload)
			got, gerr := fr.AppendRequestFrameJSON(nil, payload)
			if sameError(t, "fuzz frame", gerr, werr) && werr == nil {
				if !bytes.Equal(got, want) {
					t.Fatalf("frame JSON differs\n%s\n%s", got, want)
				}
				if _, err := fr.AppendRequestFrame(nil, got); err != nil {
					t.Fatalf("frame JSON does not re-encode: %v", err)
				}
			}
		case 3:
			// Envelope JSON: the transcoder must not panic, and what it accepts must
			// decode back to a frame the typed codec accepts.
			out, err := fr.AppendRequestFrame(nil, payload)
			if err == nil {
				if _, err := codec.DecodeRequestFrame(out); err != nil {
					t.Fatalf("transcoder wrote a frame the typed codec refuses: %v", err)
				}
			}
		}
	}
}
