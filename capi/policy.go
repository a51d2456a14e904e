package main

/*
#include <stdint.h>
*/
import "C"

import (
	"unsafe"

	"github.com/kwire/kwire/abi"
)

//export kw_policy_check
func kw_policy_check(policy *C.uint8_t, policyLen C.int32_t, topic *C.uint8_t, topicLen C.int32_t, partition C.int32_t,
	records *C.uint8_t, recordsLen C.int32_t, out **C.uint8_t, outLen *C.int32_t) (st C.int32_t) {
	defer recovered(&st)
	if e := begin(out, outLen); e != nil {
		return setErr(e)
	}
	pj, e := input(unsafe.Pointer(policy), policyLen, "policy")
	if e != nil {
		return setErr(e)
	}
	t, e := input(unsafe.Pointer(topic), topicLen, "topic")
	if e != nil {
		return setErr(e)
	}
	r, e := input(unsafe.Pointer(records), recordsLen, "records")
	if e != nil {
		return setErr(e)
	}
	b := getScratch()
	res, err := abi.PolicyCheck((*b)[:0], pj, string(t), int32(partition), r)
	st = finish(out, outLen, res, err)
	putScratch(b, res)
	return st
}
