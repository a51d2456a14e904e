package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"time"
)

// The capture files are read here, not by gopacket's pcapgo: pcapgo sizes its packet
// buffer by the snapshot length a file's header claims (4 GB for a 100-byte file that
// says so) and trusts every length it reads. These readers trust nothing a header
// says about sizes: a packet's or block's bytes are read as they arrive, into a buffer
// that grows only with bytes really read, so memory is bounded by the file's real size
// plus a fixed allowance, whatever its snapshot lengths, packet lengths, block lengths
// or interface counts claim.

// maxPacketBytes bounds one packet record (pcap) or block (pcapng). No link carries a
// packet near this size (Ethernet with segmentation offload, loopback and BIG TCP stay
// under 512 KiB, and tcpdump's default snapshot length is 256 KiB), so a larger length
// is a damaged or hostile file, refused with an error naming the record.
const maxPacketBytes = 16 << 20

// readChunk is the most a record read adds to its buffer before the bytes are there.
const readChunk = 64 << 10

// packetInfo is what a capture says of one packet.
type packetInfo struct {
	Timestamp      time.Time
	LinkType       uint32
	CaptureLength  int
	OriginalLength int
}

// packetReader yields a capture's packets in file order. The data returned is valid
// until the next call.
type packetReader interface {
	next() ([]byte, packetInfo, error)
}

// errCut marks a capture that ends inside a record (a file cut while written): what
// was read before it stands.
var errCut = errors.New("capture ends inside a record")

// fileReader reads records from a capture file, counting its offset.
type fileReader struct {
	r   *bufio.Reader
	off int64 // file offset of the next byte
	buf []byte
}

// readN reads exactly n bytes and returns them, valid until the next read: from the
// file buffer when they fit in it, else copied into the reader's own buffer (reused
// between calls), which grows with the bytes that arrive, never ahead of them by more
// than readChunk: a length that lies costs what the file really holds.
func (f *fileReader) readN(n int) ([]byte, error) {
	if n <= f.r.Size() {
		// Most records fit in the file buffer: no copy.
		b, err := f.r.Peek(n)
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return b, errCut
			}
			return b, err
		}
		f.r.Discard(n)
		f.off += int64(n)
		return b, nil
	}
	f.buf = f.buf[:0]
	for len(f.buf) < n {
		want := min(n-len(f.buf), readChunk)
		if cap(f.buf)-len(f.buf) < want {
			grown := make([]byte, len(f.buf), max(2*cap(f.buf), len(f.buf)+want))
			copy(grown, f.buf)
			f.buf = grown
		}
		got, err := io.ReadFull(f.r, f.buf[len(f.buf):len(f.buf)+want])
		f.buf = f.buf[:len(f.buf)+got]
		f.off += int64(got)
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return f.buf, errCut
			}
			return f.buf, err
		}
	}
	return f.buf, nil
}

// skip discards n bytes without keeping them.
func (f *fileReader) skip(n int64) error {
	got, err := io.CopyN(io.Discard, f.r, n)
	f.off += got
	if err == io.EOF {
		return errCut
	}
	return err
}

// atEOF reports whether the file has no more bytes.
func (f *fileReader) atEOF() (bool, error) {
	_, err := f.r.Peek(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

// pcapReader reads a classic pcap file: a 24-byte file header, then per packet a
// 16-byte record header and the captured bytes.
type pcapReader struct {
	f        fileReader
	order    binary.ByteOrder
	nanos    bool // timestamps in nanoseconds (magic a1b23c4d)
	linkType uint32
	packets  int
}

func newPcapReader(r *bufio.Reader) (*pcapReader, error) {
	p := &pcapReader{f: fileReader{r: r}}
	h, err := p.f.readN(24)
	if err != nil {
		return nil, fmt.Errorf("%w: pcap file header of %d bytes", ErrFormat, len(h))
	}
	switch binary.LittleEndian.Uint32(h) {
	case 0xa1b2c3d4:
		p.order = binary.LittleEndian
	case 0xa1b23c4d:
		p.order, p.nanos = binary.LittleEndian, true
	case 0xd4c3b2a1:
		p.order = binary.BigEndian
	case 0x4d3cb2a1:
		p.order, p.nanos = binary.BigEndian, true
	}
	if major := p.order.Uint16(h[4:]); major != 2 {
		return nil, fmt.Errorf("%w: pcap version %d.%d (2.4 is read)", ErrFormat, major, p.order.Uint16(h[6:]))
	}
	// The snapshot length (h[16:20]) is not used: nothing is sized by it.
	// The link type's upper bits carry FCS information (the pcap specification's
	// LinkType and additional information field); the type is the low 16 bits.
	p.linkType = p.order.Uint32(h[20:]) & 0xffff
	return p, nil
}

func (p *pcapReader) next() ([]byte, packetInfo, error) {
	if eof, err := p.f.atEOF(); eof || err != nil {
		if err == nil {
			err = io.EOF
		}
		return nil, packetInfo{}, err
	}
	at := p.f.off
	h, err := p.f.readN(16)
	if err != nil {
		return nil, packetInfo{}, err
	}
	sec, frac := p.order.Uint32(h), p.order.Uint32(h[4:])
	incl, orig := p.order.Uint32(h[8:]), p.order.Uint32(h[12:])
	p.packets++
	if incl > maxPacketBytes {
		return nil, packetInfo{}, fmt.Errorf("packet %d (record at byte %d) claims %d captured bytes, more than the %d a packet may hold: the file is damaged",
			p.packets, at, incl, maxPacketBytes)
	}
	ns := int64(frac)
	if !p.nanos {
		ns *= 1000
	}
	data, err := p.f.readN(int(incl))
	if err != nil {
		return nil, packetInfo{}, err
	}
	return data, packetInfo{
		Timestamp:      time.Unix(int64(sec), ns).UTC(),
		LinkType:       p.linkType,
		CaptureLength:  int(incl),
		OriginalLength: int(orig),
	}, nil
}

// pcapng block types read here; every other block is skipped by its length.
const (
	ngSectionHeader    = 0x0a0d0d0a
	ngInterfaceDesc    = 0x00000001
	ngObsoletePacket   = 0x00000002
	ngSimplePacket     = 0x00000003
	ngEnhancedPacket   = 0x00000006
	ngByteOrderMagic   = 0x1a2b3c4d
	ngOptionEnd        = 0
	ngOptionTSResol    = 9
	ngOptionTSOffset   = 14
	ngMinBlockBytes    = 12 // type, length, trailing length
	ngSectionBodyBytes = 16 // byte-order magic, version, section length
)

// ngInterface is what an interface description block says of its packets.
type ngInterface struct {
	linkType uint32
	// Timestamps count units of 10^-exp seconds, or 2^-exp when pow2.
	exp      uint8
	pow2     bool
	offsetNs int64 // if_tsoffset, in nanoseconds
}

// ngReader reads a pcapng file: sections of blocks, each block a type, a total
// length, a body and the length again.
type ngReader struct {
	f          fileReader
	order      binary.ByteOrder
	interfaces []ngInterface // of the current section
	blocks     int
}

func newNgReader(r *bufio.Reader) (*ngReader, error) {
	n := &ngReader{f: fileReader{r: r}}
	if err := n.section(); err != nil {
		if errors.Is(err, errCut) {
			return nil, fmt.Errorf("%w: pcapng section header cut short", ErrFormat)
		}
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return n, nil
}

// section reads a section header block whose type has not been read yet.
func (n *ngReader) section() error {
	at := n.f.off
	h, err := n.f.readN(12) // type, length, byte-order magic
	if err != nil {
		return err
	}
	if binary.LittleEndian.Uint32(h) != ngSectionHeader {
		return fmt.Errorf("block at byte %d is not a section header", at)
	}
	switch {
	case binary.LittleEndian.Uint32(h[8:]) == ngByteOrderMagic:
		n.order = binary.LittleEndian
	case binary.BigEndian.Uint32(h[8:]) == ngByteOrderMagic:
		n.order = binary.BigEndian
	default:
		return fmt.Errorf("section header at byte %d: byte-order magic % x", at, h[8:12])
	}
	total := n.order.Uint32(h[4:])
	if total < ngMinBlockBytes+ngSectionBodyBytes || total%4 != 0 || total > maxPacketBytes {
		return fmt.Errorf("section header at byte %d: block length %d", at, total)
	}
	n.interfaces = n.interfaces[:0]
	// The rest (version, section length, options, trailing length) is not needed.
	return n.f.skip(int64(total) - 12)
}

func (n *ngReader) next() ([]byte, packetInfo, error) {
	for {
		if eof, err := n.f.atEOF(); eof || err != nil {
			if err == nil {
				err = io.EOF
			}
			return nil, packetInfo{}, err
		}
		at := n.f.off
		// The block type and length are peeked: a section header's length can be read
		// only once its byte-order magic is known.
		h, err := n.f.r.Peek(8)
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, packetInfo{}, errCut
			}
			return nil, packetInfo{}, err
		}
		n.blocks++
		if binary.LittleEndian.Uint32(h) == ngSectionHeader {
			if err := n.section(); err != nil {
				return nil, packetInfo{}, n.blockErr(err)
			}
			continue
		}
		typ, total := n.order.Uint32(h), n.order.Uint32(h[4:])
		if total < ngMinBlockBytes || total%4 != 0 {
			return nil, packetInfo{}, fmt.Errorf("pcapng block %d (at byte %d): block length %d is not a multiple of 4 of at least 12: the file is damaged", n.blocks, at, total)
		}
		if total > maxPacketBytes {
			return nil, packetInfo{}, fmt.Errorf("pcapng block %d (at byte %d) claims %d bytes, more than the %d a block may hold: the file is damaged", n.blocks, at, total, maxPacketBytes)
		}
		switch typ {
		case ngInterfaceDesc, ngEnhancedPacket, ngSimplePacket, ngObsoletePacket:
		default:
			if err := n.f.skip(int64(total)); err != nil {
				return nil, packetInfo{}, err
			}
			continue
		}
		b, err := n.f.readN(int(total))
		if err != nil {
			return nil, packetInfo{}, err
		}
		if n.order.Uint32(b[total-4:]) != total {
			return nil, packetInfo{}, fmt.Errorf("pcapng block %d (at byte %d): trailing length %d differs from the leading %d: the file is damaged", n.blocks, at, n.order.Uint32(b[total-4:]), total)
		}
		body := b[8 : total-4]
		var data []byte
		var info packetInfo
		switch typ {
		case ngInterfaceDesc:
			ifc, err := n.interfaceDesc(body)
			if err != nil {
				return nil, packetInfo{}, fmt.Errorf("pcapng block %d (at byte %d): %w", n.blocks, at, err)
			}
			n.interfaces = append(n.interfaces, ifc)
			continue
		case ngEnhancedPacket, ngObsoletePacket:
			data, info, err = n.packet(body, typ == ngObsoletePacket)
		case ngSimplePacket:
			if len(body) < 4 {
				err = fmt.Errorf("simple packet block of %d bytes", len(body))
				break
			}
			if len(n.interfaces) == 0 {
				err = errors.New("simple packet block before any interface description")
				break
			}
			orig := n.order.Uint32(body)
			data = body[4:]
			if uint64(orig) < uint64(len(data)) {
				data = data[:orig] // the rest is padding
			}
			info = packetInfo{LinkType: n.interfaces[0].linkType, CaptureLength: len(data), OriginalLength: int(orig)}
		}
		if err != nil {
			return nil, packetInfo{}, fmt.Errorf("pcapng block %d (at byte %d): %w", n.blocks, at, err)
		}
		return data, info, nil
	}
}

func (n *ngReader) blockErr(err error) error {
	if errors.Is(err, errCut) {
		return err
	}
	return fmt.Errorf("pcapng block %d: %w", n.blocks, err)
}

// packet reads an enhanced packet block's body (or an obsolete packet block's, whose
// interface id is 16 bits followed by a 16-bit drop count): interface, timestamp,
// captured and original lengths, the data and its padding, options.
func (n *ngReader) packet(body []byte, obsolete bool) ([]byte, packetInfo, error) {
	const fixed = 20
	if len(body) < fixed {
		return nil, packetInfo{}, fmt.Errorf("packet block of %d bytes", len(body))
	}
	ifIndex := n.order.Uint32(body)
	if obsolete {
		ifIndex = uint32(n.order.Uint16(body))
	}
	ts, lens := body[4:12], body[12:20]
	if uint64(ifIndex) >= uint64(len(n.interfaces)) {
		return nil, packetInfo{}, fmt.Errorf("packet of interface %d; the section describes %d", ifIndex, len(n.interfaces))
	}
	ifc := &n.interfaces[ifIndex]
	capLen, orig := n.order.Uint32(lens), n.order.Uint32(lens[4:])
	if uint64(capLen) > uint64(len(body)-fixed) {
		return nil, packetInfo{}, fmt.Errorf("packet claims %d captured bytes; its block holds %d", capLen, len(body)-fixed)
	}
	units := uint64(n.order.Uint32(ts))<<32 | uint64(n.order.Uint32(ts[4:]))
	return body[fixed : fixed+int(capLen)], packetInfo{
		Timestamp:      ifc.time(units),
		LinkType:       ifc.linkType,
		CaptureLength:  int(capLen),
		OriginalLength: int(orig),
	}, nil
}

// interfaceDesc reads an interface description block's body: link type, reserved,
// snapshot length (not used), options.
func (n *ngReader) interfaceDesc(body []byte) (ngInterface, error) {
	if len(body) < 8 {
		return ngInterface{}, fmt.Errorf("interface description of %d bytes", len(body))
	}
	ifc := ngInterface{linkType: uint32(n.order.Uint16(body)), exp: 6}
	opts := body[8:]
	for len(opts) >= 4 {
		code, l := n.order.Uint16(opts), int(n.order.Uint16(opts[2:]))
		opts = opts[4:]
		if code == ngOptionEnd {
			break
		}
		if l > len(opts) {
			return ngInterface{}, fmt.Errorf("interface option %d of %d bytes; %d remain", code, l, len(opts))
		}
		v := opts[:l]
		switch {
		case code == ngOptionTSResol && l == 1:
			ifc.pow2, ifc.exp = v[0]&0x80 != 0, v[0]&0x7f
			if (!ifc.pow2 && ifc.exp > 18) || (ifc.pow2 && ifc.exp > 63) {
				return ngInterface{}, fmt.Errorf("timestamp resolution %#02x", v[0])
			}
		case code == ngOptionTSOffset && l == 8:
			secs := int64(n.order.Uint64(v))
			if secs > 1<<33 || secs < -(1<<33) { // beyond year 2242 either way
				return ngInterface{}, fmt.Errorf("timestamp offset of %d seconds", secs)
			}
			ifc.offsetNs = secs * 1e9
		}
		opts = opts[min((l+3)&^3, len(opts)):] // the last option's padding may be missing
	}
	return ifc, nil
}

// time converts a timestamp in the interface's units.
func (ifc *ngInterface) time(units uint64) time.Time {
	var sec, ns uint64
	switch {
	case ifc.pow2:
		sec = units >> ifc.exp
		frac := units & (1<<ifc.exp - 1)
		hi, lo := bits.Mul64(frac, 1e9)
		ns, _ = bits.Div64(hi, lo, 1<<ifc.exp) // hi < 2^exp: frac < 2^exp and 1e9 < 2^64
	default:
		div := uint64(1)
		for i := uint8(0); i < ifc.exp; i++ {
			div *= 10
		}
		sec = units / div
		rem := units % div
		if ifc.exp <= 9 {
			ns = rem
			for i := ifc.exp; i < 9; i++ {
				ns *= 10
			}
		} else {
			for i := uint8(9); i < ifc.exp; i++ {
				rem /= 10
			}
			ns = rem
		}
	}
	if sec > 1<<40 {
		sec = 1 << 40 // a damaged timestamp stays a time, far in the future
	}
	return time.Unix(int64(sec), int64(ns)+ifc.offsetNs).UTC()
}
