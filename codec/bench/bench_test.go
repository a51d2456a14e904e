package bench

import "testing"

func TestCasesAgree(t *testing.T) {
	for _, c := range Cases() {
		if err := c.CheckSame(); err != nil {
			t.Error(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, c := range Cases() {
		b.Run(c.Name+"/kwire", c.DecodeKwire)
		b.Run(c.Name+"/kmsg", c.DecodeKmsg)
	}
}

func BenchmarkEncode(b *testing.B) {
	for _, c := range Cases() {
		b.Run(c.Name+"/kwire", c.EncodeKwire)
		b.Run(c.Name+"/kmsg", c.EncodeKmsg)
	}
}
