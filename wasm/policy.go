//go:build wasip1

package main

import "github.com/kwire/kwire/abi"

//go:wasmexport kw_policy_check
func kwPolicyCheck(policy uint32, policyLen int32, topic uint32, topicLen int32, partition int32, records uint32, recordsLen int32, out, outLen uint32) (st int32) {
	defer recovered(&st)
	o, l, e := slots(out, outLen)
	if e != nil {
		return setErr(e)
	}
	pj, e := input(policy, policyLen, "policy")
	if e != nil {
		return setErr(e)
	}
	t, e := input(topic, topicLen, "topic")
	if e != nil {
		return setErr(e)
	}
	r, e := input(records, recordsLen, "records")
	if e != nil {
		return setErr(e)
	}
	res, err := abi.PolicyCheck(nil, pj, string(t), partition, r)
	return finish(o, l, res, err)
}
