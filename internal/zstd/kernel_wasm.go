//go:build wasm && !kwire_purego

package zstd

// In WebAssembly builds the sequences of a compressed block are decoded and
// executed by sequencesKernel, and Huffman-coded literal streams decoded by
// huffStreamKernel (kernel_wasm.s). Go's WebAssembly code pays for every call
// (copy is a call to the runtime's memmove), every taken branch and every
// bounds check; the sequences kernel keeps the bit container, the three FSE
// states, the repeat offsets and the output and literal positions in
// registers for the whole block, and copies short runs with 8-byte moves.
//
// A kernel decodes a block or stream only when all of it is well-formed (and,
// for sequences, fits in the room it is given), and otherwise says so without
// an error of its own: sequencesGeneric or huffStreamGeneric then decodes it
// again, so what is accepted, the bytes decoded and every error with its byte
// offset are the plain-Go decoder's in every build.

// sequencesKernel decodes the nseq (> 0) sequences in the bitstream src with
// the tables ll, of and ml and the repeat offsets *reps, appends what they
// produce, and then the literals they leave, to out[:pos], and returns the
// new length. It returns -1, having written only within out[pos:] and not
// touched *reps, when the bitstream is bad or not used up exactly, a sequence
// needs more literals than lits has, an offset reaches before out[frameStart]
// or past window, or the block would pass len(out) or decode to more than
// maxBlockSize bytes. Bytes of out past the returned length may be
// overwritten (at most 16 past the end of the last copy).
//
//go:noescape
func sequencesKernel(out []byte, pos, frameStart int, window uint64, lits, src []byte, nseq int, ll, of, ml *fseTable, reps *[3]int) int

// huffStreamKernel decodes len(out) literals from the Huffman-coded stream
// src with table (codes of at most mb bits, 1 <= mb <= maxHuffBits) as
// huffStreamGeneric does, and reports whether the stream was well-formed and
// used up exactly; it writes only within out.
//
//go:noescape
func huffStreamKernel(out, src []byte, table *[1 << maxHuffBits]uint16, mb uint) bool

// kernelsOff, set only by the package's tests, sends every block to the
// plain-Go code, so that a test can compare both paths in one process.
var kernelsOff bool

// seqKernelHook, when set (by the package's tests), sees every block the
// kernel decoded or refused, before anything else changes dst's spare
// capacity: the arguments, the repeat offsets the kernel started from and its
// result.
var seqKernelHook func(d *Decoder, dst, lits, src []byte, nseq, n int, reps [3]int)

// huffKernelHook, when set (by the package's tests), sees every literal
// stream the kernel decoded or refused, with its result.
var huffKernelHook func(d *Decoder, out, src []byte, ok bool)

// huffStream is huffStreamGeneric, by the kernel where the stream is
// well-formed.
func (d *Decoder) huffStream(out, src []byte) bool {
	if !kernelsOff {
		ok := huffStreamKernel(out, src, &d.huff, uint(d.huffBits))
		if huffKernelHook != nil {
			huffKernelHook(d, out, src, ok)
		}
		if ok {
			return true
		}
	}
	return d.huffStreamGeneric(out, src)
}

// sequences is sequencesGeneric, by the kernel where the block is
// well-formed.
func (d *Decoder) sequences(dst, lits, src []byte, nseq, at int) ([]byte, error) {
	if !kernelsOff && d.end >= len(dst) {
		// The kernel may write up to the frame's end in dst's spare capacity,
		// as the plain-Go code's 16-byte copies do.
		out := dst[:cap(dst)]
		if d.end < len(out) {
			out = out[:d.end]
		}
		reps := d.reps
		n := sequencesKernel(out, len(dst), d.frameStart, d.window, lits, src, nseq,
			&d.seq[kindLL], &d.seq[kindOF], &d.seq[kindML], &d.reps)
		if seqKernelHook != nil {
			seqKernelHook(d, dst, lits, src, nseq, n, reps)
		}
		if n >= 0 {
			return out[:n], nil
		}
	}
	return d.sequencesGeneric(dst, lits, src, nseq, at)
}
