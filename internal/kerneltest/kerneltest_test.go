package kerneltest

import (
	"os"
	"testing"
	"time"
)

func TestFuzzTime(t *testing.T) {
	t.Setenv("KWIRE_KERNEL_FUZZTIME", "")
	if d := FuzzTime(t, 3*time.Second); d != 3*time.Second {
		t.Errorf("unset: %v, want the default", d)
	}
	t.Setenv("KWIRE_KERNEL_FUZZTIME", "10m")
	if d := FuzzTime(t, time.Second); d != 10*time.Minute {
		t.Errorf("10m: %v", d)
	}
}

func TestBenchmarking(t *testing.T) {
	saved := os.Args
	defer func() { os.Args = saved }()
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"x", "-test.run=Foo"}, false},
		{[]string{"x", "-test.bench=."}, true},
		{[]string{"x", "-test.bench", "Kernel"}, true},
		{[]string{"x", "--test.bench="}, false},
		{[]string{"x", "-test.bench"}, false},
	} {
		os.Args = tc.args
		if got := Benchmarking(); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.args, got, tc.want)
		}
	}
}
