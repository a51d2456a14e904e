package abi

import "strconv"

// The checks and errors the wasm and C shims share, so that both transports give one
// status and one text for one mistake.

// CheckAlloc is kw_alloc's check of its size: negative is StatusArg, above MaxAlloc is
// StatusTooLarge.
func CheckAlloc(size int32) *Error {
	if size < 0 {
		return ArgText("kw_alloc: negative size " + strconv.Itoa(int(size)))
	}
	if size > MaxAlloc {
		return newErr(StatusTooLarge, "kwire: kw_alloc: "+strconv.Itoa(int(size))+" bytes exceeds KW_MAX_ALLOC")
	}
	return nil
}

// AllocFailed is kw_alloc's error when its memory cannot be obtained.
func AllocFailed(size int32) *Error {
	return newErr(StatusNoMem, "kwire: kw_alloc: "+strconv.Itoa(int(size))+" bytes could not be allocated")
}

// CheckOutput is the check of every output before it is handed to the host: above
// MaxAlloc is StatusTooLarge.
func CheckOutput(n int) *Error {
	if n > MaxAlloc {
		return newErr(StatusTooLarge, "kwire: output of "+strconv.Itoa(n)+" bytes exceeds the limit")
	}
	return nil
}

// OutputFailed is the error of an output whose memory cannot be obtained.
func OutputFailed(n int) *Error {
	return newErr(StatusNoMem, "kwire: an output of "+strconv.Itoa(n)+" bytes could not be allocated")
}
