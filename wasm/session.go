//go:build wasip1

package main

import (
	"encoding/binary"

	"github.com/kwire/kwire/abi"
)

// slot32 returns the 4-byte out-param slot at p.
func slot32(p uint32, what string) ([]byte, *abi.Error) {
	if p == 0 {
		return nil, abi.ArgText("NULL " + what)
	}
	b, ok := region(p, 4)
	if !ok {
		return nil, abi.ArgText(what + " slot is not inside a live kw_alloc buffer")
	}
	return b, nil
}

func done(err error) int32 {
	if err != nil {
		return setErr(abi.AsError(err))
	}
	clearErr()
	return abi.StatusOK
}

//go:wasmexport kw_session_new
func kwSessionNew(cfg uint32, cfgLen int32, outHandle uint32) (st int32) {
	defer recovered(&st)
	o, e := slot32(outHandle, "out_handle")
	if e != nil {
		return setErr(e)
	}
	binary.LittleEndian.PutUint32(o, 0)
	in, e := input(cfg, cfgLen, "config")
	if e != nil {
		return setErr(e)
	}
	h, err := abi.SessionNew(in)
	if err == nil {
		binary.LittleEndian.PutUint32(o, uint32(h))
	}
	return done(err)
}

//go:wasmexport kw_session_free
func kwSessionFree(h int32) (st int32) {
	defer recovered(&st)
	return done(abi.SessionFree(h))
}

//go:wasmexport kw_session_begin_negotiation
func kwSessionBeginNegotiation(h int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	return call1(0, 0, "none", out, outLen, func(dst, _ []byte) ([]byte, error) { return abi.SessionBeginNegotiation(dst, h) })
}

//go:wasmexport kw_session_request
func kwSessionRequest(h, apiKey, version int32, body uint32, bodyLen int32, flags int32, out, outLen, outCorr uint32) (st int32) {
	defer recovered(&st)
	c, e := slot32(outCorr, "out_correlation_id")
	if e != nil {
		return setErr(e)
	}
	binary.LittleEndian.PutUint32(c, 0)
	return call1(body, bodyLen, "body", out, outLen, func(dst, src []byte) ([]byte, error) {
		frame, corr, err := abi.SessionRequest(dst, h, apiKey, version, src, flags)
		if err == nil {
			binary.LittleEndian.PutUint32(c, uint32(corr))
		}
		return frame, err
	})
}

//go:wasmexport kw_session_feed
func kwSessionFeed(h int32, in uint32, inLen int32) (st int32) {
	defer recovered(&st)
	b, e := input(in, inLen, "input")
	if e != nil {
		return setErr(e)
	}
	return done(abi.SessionFeed(h, b))
}

//go:wasmexport kw_session_next
func kwSessionNext(h int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	return call1(0, 0, "none", out, outLen, func(dst, _ []byte) ([]byte, error) { return abi.SessionNext(dst, h) })
}

//go:wasmexport kw_session_counters
func kwSessionCounters(h int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	return call1(0, 0, "none", out, outLen, func(dst, _ []byte) ([]byte, error) { return abi.SessionCounters(dst, h) })
}

//go:wasmexport kw_session_version_for
func kwSessionVersionFor(h, apiKey int32, outVersion uint32) (st int32) {
	defer recovered(&st)
	o, e := slot32(outVersion, "out_version")
	if e != nil {
		return setErr(e)
	}
	v, err := abi.SessionVersionFor(h, apiKey)
	if err == nil {
		binary.LittleEndian.PutUint32(o, uint32(v))
	}
	return done(err)
}
