package records

import "sync"

// codecPool keeps up to maxFree idle codecs (compressors, decompressors and
// their state). Unlike sync.Pool it is not emptied by the garbage collector,
// so a steady stream of batches does not rebuild a zstd or gzip codec after
// every collection; it holds at most maxFree of each kind.
type codecPool struct {
	mu   sync.Mutex
	free []any
	New  func() any
}

const maxFree = 4

func (p *codecPool) Get() any {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		v := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return v
	}
	p.mu.Unlock()
	return p.New()
}

func (p *codecPool) Put(v any) {
	p.mu.Lock()
	if len(p.free) < maxFree {
		p.free = append(p.free, v)
	}
	p.mu.Unlock()
}
