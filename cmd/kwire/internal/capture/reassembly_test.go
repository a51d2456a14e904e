package capture

import (
	"bytes"
	"encoding/base64"
	"testing"
	"time"

	"github.com/kwire/kwire/codec/transcode"
)

// TestQueuedPacketTime: a request whose second segment arrives first is queued by the
// reassembly in 1900-byte pages; the frame ends in a later page of that packet, and
// its time is that packet's capture time, not the time of the packet that filled the
// gap. (gopacket keeps the time on a queued packet's first page only; see sgTime.)
func TestQueuedPacketTime(t *testing.T) {
	value := bytes.Repeat([]byte("kafka "), 2000) // the frame is about 12 KB
	js := `{"header":{"requestApiKey":0,"requestApiVersion":9,"correlationId":7,"clientId":"queued"},"body":{"transactionalId":null,"acks":-1,"timeoutMs":30000,"topicData":[{"name":"orders","partitionData":[{"index":0,"records":"` +
		base64.StdEncoding.EncodeToString(value) + `"}]}]}}`
	var f transcode.Framer
	frame, err := f.AppendRequestFrame(nil, []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	// Segment B holds the last 7 KB: four pages, the frame's end in the last.
	cut := len(frame) - 7000
	pk := clientPackets(t, frame[:cut], frame[cut:])
	order := [][]byte{pk[0], pk[1], pk[2], pk[4], pk[3]} // B (time +3 ms) before A (+4 ms)
	var got []time.Time
	r := NewReader(Options{}, func(fr *Frame) {
		if fr.Request {
			if len(fr.Data) != len(frame) {
				t.Errorf("frame of %d bytes, want %d", len(fr.Data), len(frame))
			}
			got = append(got, fr.Time)
		}
	})
	if err := r.ReadCapture(bytes.NewReader(pcapFile(65535, order))); err != nil {
		t.Fatal(err)
	}
	r.Close()
	want := hostileTime.Add(3 * time.Millisecond)
	if len(got) != 1 || !got[0].Equal(want) {
		t.Fatalf("request times %v, want [%v] (segment B's capture time)", got, want)
	}
}
