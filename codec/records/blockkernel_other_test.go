//go:build !wasm || kwire_purego

package records

import "sync/atomic"

// This build has no kernels: the tests check the model (blockkernel_model_test.go).
var (
	asmLZ4    func(buf []byte, base, start int, src []byte) int
	asmSnappy func(dst, src []byte, s int) bool
)

// No hooks either.
var lz4HookChecks, snappyHookChecks atomic.Int64
