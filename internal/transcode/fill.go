package transcode

import (
	"math"
	"sort"

	"github.com/kwire/kwire/internal/jsonx"
)

// Rand is the source of AppendRandomJSON's choices; *math/rand.Rand is one.
type Rand interface {
	Intn(n int) int
	Uint64() uint64
	NormFloat64() float64
	Read(p []byte) (int, error)
}

// AppendRandomJSON appends the JSON form of a random message `name` at version: every
// field present at the version gets a random value that version can carry; nullable
// ones are sometimes null, tagged ones sometimes left out (at their default), arrays
// are empty or short, strings mix ASCII and non-ASCII text, and flexible structs
// sometimes carry unknown tagged fields. The same r gives the same message. It serves
// the tests' random messages (codec/codectest).
func AppendRandomJSON(dst []byte, name string, version int16, r Rand) ([]byte, error) {
	m := lookup(name)
	if m == nil {
		return dst, unknownMessage(name)
	}
	if !m.valid.has(version) {
		return dst, versionError(m, version)
	}
	f := filler{r: r, m: m, v: version, out: dst}
	f.object(m.root, 0)
	return f.out, nil
}

type filler struct {
	r   Rand
	m   *message
	v   int16
	out []byte
}

// fillDepth bounds nesting so that random messages stay small.
const fillDepth = 3

func (g *filler) object(si uint16, depth int) {
	s := &schemaStructs[si]
	fields := schemaFields[s.first : s.first+s.n]
	g.out = append(g.out, '{')
	first := true
	for i := range fields {
		f := &fields[i]
		if !f.ver.has(g.v) || f.tag >= 0 && g.r.Intn(3) == 0 {
			continue
		}
		g.out = jsonx.Key(g.out, first, f.name)
		first = false
		g.field(f, depth)
	}
	if g.m.flex.has(g.v) && g.r.Intn(4) == 0 {
		g.out = jsonx.Key(g.out, first, "_unknownTaggedFields")
		g.unknownTags(fields)
	}
	g.out = append(g.out, '}')
}

func (g *filler) null(f *field) bool {
	if f.nul.has(g.v) && g.r.Intn(4) == 0 {
		g.out = append(g.out, "null"...)
		return true
	}
	return false
}

func (g *filler) field(f *field, depth int) {
	if f.isArray() {
		if f.nullableEver() && g.null(f) {
			return
		}
		n := g.arrayLen(depth)
		g.out = append(g.out, '[')
		for i := 0; i < n; i++ {
			if i > 0 {
				g.out = append(g.out, ',')
			}
			if f.typ == tStruct {
				g.object(f.sub, depth+1)
			} else {
				g.scalar(f.typ)
			}
		}
		g.out = append(g.out, ']')
		return
	}
	if f.typ == tStruct {
		if f.nullableEver() && g.null(f) {
			return
		}
		g.object(f.sub, depth+1)
		return
	}
	if (f.typ == tString || f.typ == tBytes || f.typ == tRecords) && f.nullableEver() && g.null(f) {
		return
	}
	g.scalar(f.typ)
}

func (g *filler) scalar(typ uint8) {
	b := g.out
	switch typ {
	case tBool:
		b = jsonx.AppendBool(b, g.r.Intn(2) == 0)
	case tInt8:
		b = jsonx.AppendInt(b, int64(int8(g.int(8))))
	case tInt16:
		b = jsonx.AppendInt(b, int64(int16(g.int(16))))
	case tUint16:
		b = jsonx.AppendInt(b, int64(uint16(g.int(16))))
	case tInt32:
		b = jsonx.AppendInt(b, int64(int32(g.int(32))))
	case tUint32:
		b = jsonx.AppendInt(b, int64(uint32(g.int(32))))
	case tInt64:
		b = jsonx.AppendInt64(b, g.int(64))
	case tFloat64:
		b = jsonx.AppendFloat64(b, g.float())
	case tUuid:
		b = jsonx.AppendUUID(b, g.uuid())
	case tString:
		b = jsonx.AppendString(b, g.string())
	case tBytes:
		b = jsonx.AppendBytes(b, g.bytes(40, 0), false)
	case tRecords:
		b = jsonx.AppendBytes(b, g.bytes(100, 1), false)
	}
	g.out = b
}

func (g *filler) arrayLen(depth int) int {
	if depth >= fillDepth {
		return 0
	}
	switch g.r.Intn(6) {
	case 0:
		return 0
	case 1:
		return 1 + g.r.Intn(6)
	}
	return 1 + g.r.Intn(2)
}

// int returns a value of the given bit width, often an edge value.
func (g *filler) int(bits uint) int64 {
	lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
	if bits == 64 {
		lo, hi = math.MinInt64, math.MaxInt64
	}
	switch g.r.Intn(8) {
	case 0:
		return lo
	case 1:
		return hi
	case 2:
		return -1
	case 3:
		return 0
	}
	return int64(g.r.Uint64()) >> (64 - bits)
}

func (g *filler) float() float64 {
	switch g.r.Intn(6) {
	case 0:
		return 0
	case 1:
		return math.Inf(1)
	case 2:
		return -math.MaxFloat64
	case 3:
		return math.SmallestNonzeroFloat64
	}
	return g.r.NormFloat64() * 1e6
}

var fillWords = []string{"", "a", "topic-1", "__consumer_offsets", "héllo wörld", "日本語", "emoji 😀", "quote\" back\\slash", "tab\tnew\nline", "\u0000nul"}

func (g *filler) string() string {
	if g.r.Intn(3) == 0 {
		return fillWords[g.r.Intn(len(fillWords))]
	}
	b := make([]rune, g.r.Intn(24))
	for i := range b {
		switch g.r.Intn(10) {
		case 0:
			b[i] = rune(0x80 + g.r.Intn(0x700))
		case 1:
			b[i] = rune(0x4e00 + g.r.Intn(0x1000))
		default:
			b[i] = rune('!' + g.r.Intn(94))
		}
	}
	return string(b)
}

// bytes returns min to min+n-1 random bytes.
func (g *filler) bytes(n, min int) []byte {
	b := make([]byte, min+g.r.Intn(n))
	g.r.Read(b)
	return b
}

func (g *filler) uuid() (u [16]byte) {
	if g.r.Intn(5) == 0 {
		return u
	}
	g.r.Read(u[:])
	return u
}

// unknownTags writes one to three ascending tags that none of the struct's fields use.
func (g *filler) unknownTags(fields []field) {
	used := map[uint32]bool{}
	for i := range fields {
		if fields[i].tag >= 0 {
			used[uint32(fields[i].tag)] = true
		}
	}
	type tagged struct {
		tag  uint32
		data []byte
	}
	var out []tagged
	for n := 1 + g.r.Intn(3); len(out) < n; {
		var tag uint32
		if g.r.Intn(2) == 0 {
			tag = uint32(g.r.Intn(20))
		} else {
			tag = uint32(100 + g.r.Intn(100000))
		}
		if used[tag] {
			continue
		}
		used[tag] = true
		out = append(out, tagged{tag, g.bytes(40, 0)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].tag < out[j].tag })
	g.out = append(g.out, '[')
	for i, t := range out {
		if i > 0 {
			g.out = append(g.out, ',')
		}
		g.out = append(g.out, `{"tag":`...)
		g.out = jsonx.AppendInt(g.out, int64(t.tag))
		g.out = append(g.out, `,"data":`...)
		g.out = jsonx.AppendBytes(g.out, t.data, false)
		g.out = append(g.out, '}')
	}
	g.out = append(g.out, ']')
}
