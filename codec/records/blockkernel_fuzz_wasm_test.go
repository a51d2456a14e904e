//go:build wasm && !kwire_purego

package records

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/kwire/kwire/internal/kerneltest"
)

// TestBlockKernelFuzz is the LZ4 and snappy kernels' differential fuzzing inside the
// WebAssembly build, where the kernels are (FuzzLZ4Kernel and FuzzSnappyKernel run
// natively against the kernels' Go model): random well-formed blocks, then spoilt by byte
// flips and cuts, go through checkLZ4 and checkSnappy (the kernel against the twin) until
// KWIRE_KERNEL_FUZZTIME (a Go duration; 2s by default) is over.
func TestBlockKernelFuzz(t *testing.T) {
	d := kerneltest.FuzzTime(t, 2*time.Second)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	deadline := time.Now().Add(d)
	n := 0
	for ; time.Now().Before(deadline); n++ {
		if n%32 == 0 {
			runtime.Gosched() // one thread, no preemption: let the collector's workers run
		}
		hist := 0
		if r.IntN(3) == 0 {
			hist = r.IntN(300)
		}
		lb, _ := randomLZ4Block(r, hist, 1+r.IntN(12), 1+r.IntN(40), 4+r.IntN(120))
		sb := randomSnappyBlock(r, 1+r.IntN(12), 1+r.IntN(40))
		for m := r.IntN(3); m > 0; m-- {
			if len(lb) > 0 {
				lb[r.IntN(len(lb))] ^= byte(1 << r.IntN(8))
			}
			if len(sb) > 0 {
				sb[r.IntN(len(sb))] ^= byte(1 << r.IntN(8))
			}
		}
		if r.IntN(4) == 0 && len(lb) > 0 {
			lb = lb[:r.IntN(len(lb))]
		}
		if r.IntN(4) == 0 && len(sb) > 0 {
			sb = sb[:r.IntN(len(sb))]
		}
		room := hist + 64 + r.IntN(4096)
		init := make([]byte, room)
		for i := 0; i < hist; i++ {
			init[i] = byte(r.IntN(256))
		}
		checkLZ4(t, init, 0, hist, lb)
		checkSnappy(t, sb, r.IntN(32))
	}
	t.Logf("%d LZ4 and %d snappy blocks in %v (seed %s)", n, n, d, strconv.FormatUint(seed, 10))
}
