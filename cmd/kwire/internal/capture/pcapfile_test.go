package capture

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// readAll reads every packet of a capture with this package's readers.
func readAll(t *testing.T, data []byte) (pkts [][]byte, infos []packetInfo) {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(data))
	var src packetReader
	var err error
	if bytes.HasPrefix(data, []byte{0x0a, 0x0d, 0x0d, 0x0a}) {
		src, err = newNgReader(br)
	} else {
		src, err = newPcapReader(br)
	}
	if err != nil {
		t.Fatal(err)
	}
	for {
		p, info, err := src.next()
		if err == io.EOF {
			return pkts, infos
		}
		if err != nil {
			t.Fatal(err)
		}
		pkts, infos = append(pkts, bytes.Clone(p)), append(infos, info)
	}
}

// TestReadersMatchPcapgo: on the committed capture, written again by gopacket's writers
// as pcap with nanoseconds and as pcapng, these readers give the packets, lengths and
// times gopacket's own readers give.
func TestReadersMatchPcapgo(t *testing.T) {
	sample, err := os.ReadFile("../../../../examples/data/sample.pcap")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := pcapgo.NewReader(bytes.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	var cis []gopacket.CaptureInfo
	for {
		p, ci, err := ref.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want, cis = append(want, p), append(cis, ci)
	}
	if len(want) < 100 {
		t.Fatalf("only %d packets in the sample", len(want))
	}
	var ns, ng bytes.Buffer
	nw := pcapgo.NewWriterNanos(&ns)
	if err := nw.WriteFileHeader(262144, ref.LinkType()); err != nil {
		t.Fatal(err)
	}
	gw, err := pcapgo.NewNgWriter(&ng, ref.LinkType())
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range want {
		ci := cis[i]
		ci.Timestamp = ci.Timestamp.Add(time.Duration(i*7) * time.Nanosecond) // sub-microsecond digits for the nanosecond file
		if err := nw.WritePacket(ci, p); err != nil {
			t.Fatal(err)
		}
		ci = cis[i]
		ci.InterfaceIndex = 0
		if err := gw.WritePacket(ci, p); err != nil {
			t.Fatal(err)
		}
	}
	gw.Flush()
	for _, c := range []struct {
		name  string
		data  []byte
		shift func(i int) time.Duration
	}{
		{"pcap, microseconds", sample, func(int) time.Duration { return 0 }},
		{"pcap, nanoseconds", ns.Bytes(), func(i int) time.Duration { return time.Duration(i*7) * time.Nanosecond }},
		{"pcapng", ng.Bytes(), func(int) time.Duration { return 0 }},
	} {
		pkts, infos := readAll(t, c.data)
		if len(pkts) != len(want) {
			t.Fatalf("%s: %d packets, want %d", c.name, len(pkts), len(want))
		}
		for i := range pkts {
			if !bytes.Equal(pkts[i], want[i]) {
				t.Fatalf("%s: packet %d differs", c.name, i+1)
			}
			wt := cis[i].Timestamp.Add(c.shift(i))
			if !infos[i].Timestamp.Equal(wt) || infos[i].CaptureLength != cis[i].CaptureLength || infos[i].OriginalLength != cis[i].Length {
				t.Fatalf("%s: packet %d: %v %d/%d, want %v %d/%d", c.name, i+1, infos[i].Timestamp, infos[i].CaptureLength, infos[i].OriginalLength,
					wt, cis[i].CaptureLength, cis[i].Length)
			}
			if infos[i].LinkType != uint32(ref.LinkType()) {
				t.Fatalf("%s: link type %d, want %d", c.name, infos[i].LinkType, ref.LinkType())
			}
		}
	}
}

// TestNgTimestampUnits: if_tsresol in powers of ten and of two, and if_tsoffset.
func TestNgTimestampUnits(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	for _, c := range []struct {
		ifc   ngInterface
		units uint64
		want  time.Time
	}{
		{ngInterface{exp: 6}, uint64(at.UnixMicro()), at.Truncate(time.Microsecond)},
		{ngInterface{exp: 9}, uint64(at.UnixNano()), at},
		{ngInterface{exp: 3}, uint64(at.UnixMilli()), at.Truncate(time.Millisecond)},
		{ngInterface{exp: 0}, uint64(at.Unix()), at.Truncate(time.Second)},
		{ngInterface{exp: 12}, 5_123_456_789_123, time.Unix(5, 123456789)}, // picoseconds: 2^64 of them is only 213 days
		{ngInterface{exp: 20, pow2: true}, uint64(at.Unix())<<20 | 1<<19, at.Truncate(time.Second).Add(500 * time.Millisecond)},
		{ngInterface{exp: 0, pow2: true}, uint64(at.Unix()), at.Truncate(time.Second)},
		{ngInterface{exp: 6, offsetNs: 3600e9}, uint64(at.UnixMicro()), at.Truncate(time.Microsecond).Add(time.Hour)},
	} {
		if got := c.ifc.time(c.units); !got.Equal(c.want) {
			t.Errorf("%+v, %d units: %v, want %v", c.ifc, c.units, got, c.want)
		}
	}
}

// TestNgInterfaceOptions: the resolution and offset options are read from an interface
// block, a cut option is an error, and unknown options are stepped over.
func TestNgInterfaceOptions(t *testing.T) {
	le := binary.LittleEndian
	n := &ngReader{order: le}
	body := le.AppendUint16(nil, uint16(layers.LinkTypeEthernet))
	body = le.AppendUint16(body, 0)
	body = le.AppendUint32(body, 0xffffffff)
	body = append(body, 2, 0, 3, 0, 'e', 't', 'h', 0) // if_name, padded
	body = append(body, ngOptionTSResol, 0, 1, 0, 9, 0, 0, 0)
	body = append(body, ngOptionTSOffset, 0, 8, 0)
	body = le.AppendUint64(body, 60)
	body = append(body, 0, 0, 0, 0)
	ifc, err := n.interfaceDesc(body)
	if err != nil || ifc.exp != 9 || ifc.pow2 || ifc.offsetNs != 60e9 || ifc.linkType != uint32(layers.LinkTypeEthernet) {
		t.Fatalf("%+v, %v", ifc, err)
	}
	if _, err := n.interfaceDesc(append(body[:8:8], 2, 0, 200, 0, 'x')); err == nil {
		t.Error("an option longer than the block: no error")
	}
	if _, err := n.interfaceDesc(append(body[:8:8], ngOptionTSResol, 0, 1, 0, 19)); err == nil {
		t.Error("a resolution of 10^-19 s: no error")
	}
}
