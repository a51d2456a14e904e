package rules

import (
	"errors"
	"strconv"
	"sync"
	"unicode/utf8"
)

// pattern is a compiled "pattern" predicate: a subset of RE2's syntax, matched by
// simulating its automaton (no backtracking: time linear in the text, for any
// pattern). The subset, which the rules need and which keeps the filter small (Go's
// regexp brings Unicode tables a proxy module does not want):
//
//   - literal characters, and \ before any punctuation for itself;
//   - . (any character but a newline), \d \w \s and \D \W \S (ASCII classes, as RE2's);
//   - bracket classes [abc] [a-z0-9_-] [^...], with \d \w \s and escapes inside;
//   - anchors ^ and $ (start and end of the text), \A and \z;
//   - groups ( ), (?: ), alternation |;
//   - repetition * + ? {n} {n,} {n,m} (n, m <= 1000), each optionally followed by ?
//     (lazy and greedy match the same texts).
//
// Anything else (\p classes, \b, flags, backreferences) is an error naming it. A
// pattern matches anywhere in the text unless anchored, as Go's regexp.MatchString.
type pattern struct {
	src      string
	prog     []inst
	matchers sync.Pool // *matcher: a check allocates nothing
}

type instOp uint8

const (
	opClass instOp = iota // one character in ranges (or not in them, neg)
	opSplit               // go to x and y
	opJmp                 // go to x
	opBegin               // at the start of the text
	opEnd                 // at the end of the text
	opMatch
)

type inst struct {
	op     instOp
	neg    bool
	ranges []rune // pairs lo, hi
	x, y   int
}

// maxInsts bounds a compiled pattern (repetition counts multiply its size).
const maxInsts = 20000

func (p *pattern) String() string { return p.src }

// compilePattern parses and compiles src.
func compilePattern(src string) (*pattern, error) {
	ps := &patternParser{src: src}
	n, err := ps.alt()
	if err != nil {
		return nil, err
	}
	if ps.pos < len(src) {
		return nil, errors.New("unexpected ) at offset " + strconv.Itoa(ps.pos))
	}
	c := &compiler{}
	c.emit(n)
	c.prog = append(c.prog, inst{op: opMatch})
	if len(c.prog) > maxInsts {
		return nil, errors.New("pattern too large once its repetitions are counted out")
	}
	p := &pattern{src: src, prog: c.prog}
	p.matchers.New = func() any { return &matcher{prog: p.prog, cur: newSparse(len(p.prog)), next: newSparse(len(p.prog))} }
	return p, nil
}

// node is the parsed pattern.
type node struct {
	kind     uint8 // nClass, nBegin, nEnd, nCat, nAlt, nRepeat, nEmpty
	neg      bool
	ranges   []rune
	subs     []*node
	min, max int  // repeat; max -1: unbounded
	counted  bool // a repeat written {n}, {n,} or {n,m}
}

const (
	nClass = iota
	nBegin
	nEnd
	nCat
	nAlt
	nRepeat
	nEmpty
)

type patternParser struct {
	src   string
	pos   int
	depth int
}

func (p *patternParser) fail(what string) error {
	return errors.New(what + " at offset " + strconv.Itoa(p.pos))
}

func (p *patternParser) alt() (*node, error) {
	var alts []*node
	for {
		c, err := p.cat()
		if err != nil {
			return nil, err
		}
		alts = append(alts, c)
		if p.pos < len(p.src) && p.src[p.pos] == '|' {
			p.pos++
			continue
		}
		break
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &node{kind: nAlt, subs: alts}, nil
}

func (p *patternParser) cat() (*node, error) {
	var items []*node
	for p.pos < len(p.src) && p.src[p.pos] != '|' && p.src[p.pos] != ')' {
		a, err := p.atom()
		if err != nil {
			return nil, err
		}
		if a, err = p.repeat(a); err != nil {
			return nil, err
		}
		items = append(items, a)
	}
	if len(items) == 0 {
		return &node{kind: nEmpty}, nil
	}
	if len(items) == 1 {
		return items[0], nil
	}
	return &node{kind: nCat, subs: items}, nil
}

var (
	digitRanges = []rune{'0', '9'}
	wordRanges  = []rune{'0', '9', 'A', 'Z', '_', '_', 'a', 'z'}
	spaceRanges = []rune{'\t', '\n', '\f', '\r', ' ', ' '}
	anyRanges   = []rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}
)

func (p *patternParser) atom() (*node, error) {
	c := p.src[p.pos]
	switch c {
	case '(':
		p.pos++
		if p.depth++; p.depth > 100 {
			return nil, p.fail("groups nested too deep")
		}
		if len(p.src)-p.pos >= 2 && p.src[p.pos:p.pos+2] == "?:" {
			p.pos += 2
		} else if p.pos < len(p.src) && p.src[p.pos] == '?' {
			return nil, p.fail("flags and named groups are not supported")
		}
		n, err := p.alt()
		if err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return nil, p.fail("missing )")
		}
		p.pos++
		p.depth--
		if n.kind == nRepeat { // (a*)* is a repetition of a group, allowed
			n = &node{kind: nCat, subs: []*node{n}}
		}
		return n, nil
	case '[':
		return p.class()
	case '.':
		p.pos++
		return &node{kind: nClass, ranges: anyRanges}, nil
	case '^':
		p.pos++
		return &node{kind: nBegin}, nil
	case '$':
		p.pos++
		return &node{kind: nEnd}, nil
	case '*', '+', '?', '{':
		if c == '{' && !p.isRepeat() {
			p.pos++
			return &node{kind: nClass, ranges: []rune{'{', '{'}}, nil
		}
		return nil, p.fail("missing argument to repetition operator " + string(c))
	case '\\':
		return p.escape(false)
	}
	r, size := utf8.DecodeRuneInString(p.src[p.pos:])
	if r == utf8.RuneError && size == 1 {
		return nil, p.fail("invalid UTF-8")
	}
	p.pos += size
	return &node{kind: nClass, ranges: []rune{r, r}}, nil
}

// escape reads \x at pos: a class or a literal; inClass allows only what a bracket
// class may hold.
func (p *patternParser) escape(inClass bool) (*node, error) {
	if p.pos+1 >= len(p.src) {
		return nil, p.fail("trailing \\")
	}
	c := p.src[p.pos+1]
	p.pos += 2
	switch c {
	case 'd', 'D':
		return &node{kind: nClass, ranges: digitRanges, neg: c == 'D'}, nil
	case 'w', 'W':
		return &node{kind: nClass, ranges: wordRanges, neg: c == 'W'}, nil
	case 's', 'S':
		return &node{kind: nClass, ranges: spaceRanges, neg: c == 'S'}, nil
	case 'A', 'z':
		if !inClass {
			if c == 'A' {
				return &node{kind: nBegin}, nil
			}
			return &node{kind: nEnd}, nil
		}
	case 'n':
		return &node{kind: nClass, ranges: []rune{'\n', '\n'}}, nil
	case 't':
		return &node{kind: nClass, ranges: []rune{'\t', '\t'}}, nil
	case 'r':
		return &node{kind: nClass, ranges: []rune{'\r', '\r'}}, nil
	}
	if c < 0x80 && !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		return &node{kind: nClass, ranges: []rune{rune(c), rune(c)}}, nil
	}
	p.pos -= 2
	return nil, p.fail("escape \\" + string(c) + " is not supported")
}

func (p *patternParser) class() (*node, error) {
	start := p.pos
	p.pos++ // [
	n := &node{kind: nClass}
	if p.pos < len(p.src) && p.src[p.pos] == '^' {
		n.neg = true
		p.pos++
	}
	var sets [][]rune // escapes that stand for classes, negated ones complemented
	first := true
	for {
		if p.pos >= len(p.src) {
			p.pos = start
			return nil, p.fail("missing ]")
		}
		c := p.src[p.pos]
		if c == ']' && !first {
			p.pos++
			break
		}
		first = false
		if c == '[' && p.pos+1 < len(p.src) && p.src[p.pos+1] == ':' {
			return nil, p.fail("[: :] classes are not supported")
		}
		lo, err := p.classChar(&sets)
		if err != nil {
			return nil, err
		}
		if lo < 0 {
			continue // a class escape, added to sets
		}
		hi := lo
		if p.pos+1 < len(p.src) && p.src[p.pos] == '-' && p.src[p.pos+1] != ']' {
			p.pos++
			if hi, err = p.classChar(nil); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, p.fail("invalid character class range")
			}
		}
		n.ranges = append(n.ranges, lo, hi)
	}
	for _, s := range sets {
		n.ranges = append(n.ranges, s...)
	}
	return n, nil
}

// classChar reads one character of a bracket class: its rune, or -1 after adding a
// class escape (\d ...) to sets (nil: not allowed here, as a range's end).
func (p *patternParser) classChar(sets *[][]rune) (rune, error) {
	if p.src[p.pos] != '\\' {
		r, size := utf8.DecodeRuneInString(p.src[p.pos:])
		if r == utf8.RuneError && size == 1 {
			return 0, p.fail("invalid UTF-8")
		}
		p.pos += size
		return r, nil
	}
	at := p.pos
	e, err := p.escape(true)
	if err != nil {
		return 0, err
	}
	if e.kind != nClass {
		p.pos = at
		return 0, p.fail("escape not allowed in a class")
	}
	if len(e.ranges) == 2 && e.ranges[0] == e.ranges[1] && !e.neg {
		return e.ranges[0], nil
	}
	if sets == nil {
		p.pos = at
		return 0, p.fail("a class cannot end a range")
	}
	r := e.ranges
	if e.neg {
		r = complement(r)
	}
	*sets = append(*sets, r)
	return -1, nil
}

// complement is the ranges of every rune not in rs (sorted, disjoint).
func complement(rs []rune) []rune {
	var out []rune
	next := rune(0)
	for i := 0; i < len(rs); i += 2 {
		if rs[i] > next {
			out = append(out, next, rs[i]-1)
		}
		next = rs[i+1] + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, next, utf8.MaxRune)
	}
	return out
}

func (p *patternParser) isRepeat() bool {
	_, _, end, ok := p.counts(p.pos)
	return ok && end > p.pos
}

// counts reads {n}, {n,} or {n,m} at i: min, max (-1 unbounded) and where it ends.
func (p *patternParser) counts(i int) (int, int, int, bool) {
	if i >= len(p.src) || p.src[i] != '{' {
		return 0, 0, i, false
	}
	num := func(j int) (int, int) {
		if j+1 < len(p.src) && p.src[j] == '0' && p.src[j+1] >= '0' && p.src[j+1] <= '9' {
			return 0, j // a leading zero: not a count, as in RE2
		}
		v, k := 0, j
		for k < len(p.src) && p.src[k] >= '0' && p.src[k] <= '9' {
			if v = v*10 + int(p.src[k]-'0'); v > 1<<20 {
				v = 1 << 20 // past any valid count
			}
			k++
		}
		return v, k
	}
	lo, j := num(i + 1)
	if j == i+1 {
		return 0, 0, i, false
	}
	hi := lo
	if j < len(p.src) && p.src[j] == ',' {
		var k int
		if hi, k = num(j + 1); k == j+1 {
			hi = -1
		}
		j = k
	}
	if j >= len(p.src) || p.src[j] != '}' {
		return 0, 0, i, false
	}
	return lo, hi, j + 1, true
}

func (p *patternParser) repeat(a *node) (*node, error) {
	for p.pos < len(p.src) {
		min, max := 0, 0
		switch p.src[p.pos] {
		case '*':
			min, max = 0, -1
			p.pos++
		case '+':
			min, max = 1, -1
			p.pos++
		case '?':
			min, max = 0, 1
			p.pos++
		case '{':
			lo, hi, end, ok := p.counts(p.pos)
			if !ok {
				return a, nil
			}
			if lo > 1000 || hi > 1000 || hi >= 0 && hi < lo {
				return nil, p.fail("invalid repeat count")
			}
			min, max = lo, hi
			p.pos = end
		default:
			return a, nil
		}
		if a.kind == nRepeat || a.kind == nBegin || a.kind == nEnd {
			return nil, p.fail("invalid nested repetition operator")
		}
		counted := p.src[p.pos-1] == '}'
		if p.pos < len(p.src) && p.src[p.pos] == '?' {
			p.pos++ // lazy: the same set of matching texts
		}
		a = &node{kind: nRepeat, subs: []*node{a}, min: min, max: max, counted: counted}
		if counted && (min >= 2 || max >= 2) && !repeatFits(a, 1000) {
			return nil, p.fail("invalid repeat count")
		}
	}
	return a, nil
}

// repeatFits reports whether the counted repetitions nested in n multiply to at most
// limit, as RE2 requires ((a{70}){20} is refused).
func repeatFits(n *node, limit int) bool {
	if n.kind == nRepeat && n.counted {
		m := n.max
		if m == 0 {
			return true
		}
		if m < 0 {
			m = n.min
		}
		if m > limit {
			return false
		}
		if m > 0 {
			limit /= m
		}
	}
	for _, s := range n.subs {
		if !repeatFits(s, limit) {
			return false
		}
	}
	return true
}

type compiler struct{ prog []inst }

func (c *compiler) add(in inst) int {
	c.prog = append(c.prog, in)
	return len(c.prog) - 1
}

func (c *compiler) emit(n *node) {
	if len(c.prog) > maxInsts {
		return
	}
	switch n.kind {
	case nEmpty:
	case nClass:
		rs := n.ranges
		c.add(inst{op: opClass, neg: n.neg, ranges: rs})
	case nBegin:
		c.add(inst{op: opBegin})
	case nEnd:
		c.add(inst{op: opEnd})
	case nCat:
		for _, s := range n.subs {
			c.emit(s)
		}
	case nAlt:
		var jumps []int
		for i, s := range n.subs {
			if i < len(n.subs)-1 {
				split := c.add(inst{op: opSplit})
				c.prog[split].x = len(c.prog)
				c.emit(s)
				jumps = append(jumps, c.add(inst{op: opJmp}))
				c.prog[split].y = len(c.prog)
			} else {
				c.emit(s)
			}
		}
		for _, j := range jumps {
			c.prog[j].x = len(c.prog)
		}
	case nRepeat:
		s := n.subs[0]
		for i := 0; i < n.min; i++ {
			c.emit(s)
		}
		if n.max < 0 {
			split := c.add(inst{op: opSplit})
			c.prog[split].x = len(c.prog)
			c.emit(s)
			c.add(inst{op: opJmp, x: split})
			c.prog[split].y = len(c.prog)
			return
		}
		var splits []int
		for i := n.min; i < n.max; i++ {
			split := c.add(inst{op: opSplit})
			splits = append(splits, split)
			c.prog[split].x = len(c.prog)
			c.emit(s)
		}
		for _, sp := range splits {
			c.prog[sp].y = len(c.prog)
		}
	}
}

// MatchString reports whether the pattern matches anywhere in s.
func (p *pattern) MatchString(s string) bool {
	m := p.matchers.Get().(*matcher)
	m.cur.clear()
	m.next.clear()
	ok := m.run(s)
	p.matchers.Put(m)
	return ok
}

func (m *matcher) run(s string) bool {
	pos := 0
	for {
		// A match may start at every position (unanchored).
		if m.add(m.cur, 0, pos, len(s)) {
			return true
		}
		if pos >= len(s) {
			return false
		}
		r, size := utf8.DecodeRuneInString(s[pos:])
		pos += size
		m.next.clear()
		for _, pc := range m.cur.dense {
			in := &m.prog[pc]
			if in.op == opClass && in.has(r) != in.neg {
				if m.add(m.next, pc+1, pos, len(s)) {
					return true
				}
			}
		}
		m.cur, m.next = m.next, m.cur
	}
}

func (in *inst) has(r rune) bool {
	for i := 0; i < len(in.ranges); i += 2 {
		if in.ranges[i] <= r && r <= in.ranges[i+1] {
			return true
		}
	}
	return false
}

type matcher struct {
	prog      []inst
	cur, next *sparse
	stack     []int
}

// add puts pc and what it reaches without reading (splits, jumps, anchors that hold at
// pos) into set; it reports whether the match state is reached.
func (m *matcher) add(set *sparse, pc, pos, n int) bool {
	m.stack = append(m.stack[:0], pc)
	for len(m.stack) > 0 {
		pc := m.stack[len(m.stack)-1]
		m.stack = m.stack[:len(m.stack)-1]
		if !set.insert(pc) {
			continue
		}
		switch in := &m.prog[pc]; in.op {
		case opMatch:
			return true
		case opJmp:
			m.stack = append(m.stack, in.x)
		case opSplit:
			m.stack = append(m.stack, in.y, in.x)
		case opBegin:
			if pos == 0 {
				m.stack = append(m.stack, pc+1)
			}
		case opEnd:
			if pos == n {
				m.stack = append(m.stack, pc+1)
			}
		}
	}
	return false
}

// sparse is a set of instruction indexes, cleared in constant time.
type sparse struct {
	dense  []int
	sparse []int
}

func newSparse(n int) *sparse { return &sparse{dense: make([]int, 0, n), sparse: make([]int, n)} }

func (s *sparse) clear() { s.dense = s.dense[:0] }

func (s *sparse) insert(i int) bool {
	if j := s.sparse[i]; j < len(s.dense) && s.dense[j] == i {
		return false
	}
	s.sparse[i] = len(s.dense)
	s.dense = append(s.dense, i)
	return true
}
