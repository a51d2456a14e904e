package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

type rawPacket struct {
	data []byte
	ci   gopacket.CaptureInfo
	flow [2]uint16 // tcp ports, source and destination
	n    int       // tcp payload bytes
}

func readPackets(t *testing.T, file string) ([]rawPacket, layers.LinkType) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var ps []rawPacket
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		p := rawPacket{data: data, ci: ci}
		pkt := gopacket.NewPacket(data, r.LinkType(), gopacket.NoCopy)
		if tcp, ok := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP); ok {
			p.flow = [2]uint16{uint16(tcp.SrcPort), uint16(tcp.DstPort)}
			p.n = len(tcp.Payload)
		}
		ps = append(ps, p)
	}
	return ps, r.LinkType()
}

func writePackets(t *testing.T, file string, lt layers.LinkType, ps []rawPacket) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(262144, lt); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := w.WritePacket(p.ci, p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// identity is what must match between two runs on the same traffic.
type identity struct {
	conn, dir          string
	corr               int32
	apiKey, apiVersion int16
	size               int
}

func idOf(l pcapLine) identity {
	return identity{l.Conn, l.Dir, l.CorrelationID, l.APIKey, l.APIVersion, l.Size}
}

// damaged rewrites the capture twice and reads each copy: segments reordered within
// their direction and duplicated (every frame must come out as from the original), and
// the capture cut at both ends in mid-stream (every frame whole in what is left must
// come out, responses decoded when their request is there too).
func damaged(t *testing.T, dir, file, port string, full []pcapLine) {
	t.Helper()
	ps, lt := readPackets(t, file)

	// The same capture as pcapng (written by Wireshark's editcap) gives the same frames.
	ngFile := filepath.Join(dir, "clients.pcapng")
	if out, err := exec.Command(need(t, "editcap"), "-F", "pcapng", file, ngFile).CombinedOutput(); err != nil {
		t.Fatalf("editcap: %v\n%s", err, out)
	}
	ngLines, code, stderr := runPcap(t, ngFile, "--port", port)
	if code != 0 || len(ngLines) != len(full) {
		t.Errorf("pcapng copy: exit %d, %d frames, want %d (%s)", code, len(ngLines), len(full), stderr)
	} else {
		for i := range full {
			if idOf(full[i]) != idOf(ngLines[i]) || !full[i].Time.Equal(ngLines[i].Time) {
				t.Errorf("pcapng copy: frame %d is %+v, want %+v", i, idOf(ngLines[i]), idOf(full[i]))
				break
			}
		}
	}

	// Reordered and duplicated.
	var mixed []rawPacket
	swaps, dups := 0, 0
	for i := 0; i < len(ps); i++ {
		p := ps[i]
		if i+1 < len(ps) && i%5 == 0 && p.n > 0 && ps[i+1].n > 0 && ps[i+1].flow == p.flow {
			mixed = append(mixed, ps[i+1], p)
			swaps++
			i++
			continue
		}
		mixed = append(mixed, p)
		if p.n > 0 && i%7 == 0 {
			mixed = append(mixed, p)
			dups++
		}
	}
	mixedFile := filepath.Join(dir, "mixed.pcap")
	writePackets(t, mixedFile, lt, mixed)
	lines, code, stderr := runPcap(t, mixedFile, "--port", port)
	if code != 0 {
		t.Errorf("reordered capture: kwire pcap exited %d: %s", code, stderr)
	}
	want := map[identity]int{}
	for _, l := range full {
		want[idOf(l)]++
	}
	for _, l := range lines {
		want[idOf(l)]--
	}
	missing := 0
	for id, c := range want {
		if c != 0 {
			missing++
			if missing < 5 {
				t.Errorf("reordered capture: frame %+v: %d more in the original than here", id, c)
			}
		}
	}
	if swaps == 0 || dups == 0 {
		t.Errorf("the reordered capture has %d swaps and %d duplicates: nothing tested", swaps, dups)
	}
	t.Logf("reordered capture: %d segment pairs swapped, %d segments duplicated, %d frames, %d differ", swaps, dups, len(lines), missing)

	// Cut: the first third and the last tenth of the packets are gone.
	lo, hi := len(ps)/3, len(ps)-len(ps)/10
	cutFile := filepath.Join(dir, "cut.pcap")
	writePackets(t, cutFile, lt, ps[lo:hi])
	start, end := ps[lo].ci.Timestamp, ps[hi-1].ci.Timestamp
	lines, _, stderr = runPcap(t, cutFile, "--port", port)
	got := map[identity]bool{}
	for _, l := range lines {
		if l.Error == nil {
			got[idOf(l)] = true
		}
	}
	// A frame is whole in the cut capture when the frame before it in its direction
	// ended after the first kept packet and it ended before the last one.
	type half struct {
		conn, dir string
	}
	prevEnd := map[half]time.Time{}
	whole := map[string]map[int32]bool{} // requests whole in the cut, by conn and correlation id
	expected, found := 0, 0
	for _, l := range full {
		h := half{l.Conn, l.Dir}
		pe, seen := prevEnd[h]
		prevEnd[h] = l.Time
		if !seen || !pe.After(start) || !l.Time.Before(end) {
			continue
		}
		if l.Dir == "request" {
			if whole[l.Conn] == nil {
				whole[l.Conn] = map[int32]bool{}
			}
			whole[l.Conn][l.CorrelationID] = true
		} else if !whole[l.Conn][l.CorrelationID] {
			continue
		}
		expected++
		if got[idOf(l)] {
			found++
		} else if expected-found <= 5 {
			b, _ := json.Marshal(idOf(l))
			t.Errorf("cut capture: whole frame missing: %s at %v", b, l.Time)
		}
	}
	if expected == 0 {
		t.Fatalf("the cut capture holds no whole frame: nothing tested (%s)", stderr)
	}
	t.Logf("cut capture (packets %d..%d of %d): %d whole frames expected, %d found, %d lines", lo, hi, len(ps), expected, found, len(lines))
}
