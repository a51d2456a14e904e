package abiconf

import (
	"testing"

	"github.com/kwire/kwire/conformance"
)

// TestNativeABIVectors runs every vector through the abi package in process.
func TestNativeABIVectors(t *testing.T) {
	rels, err := conformance.LoadReleases("../../conformance/vectors")
	if err != nil {
		t.Fatal(err)
	}
	reps, err := Run("native abi", Native{}, rels)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reps {
		t.Logf("\n%s", r.Table())
		if r.Vectors != len(rels[0].Vectors) && r.Release == rels[0].Name {
			t.Errorf("ran %d of %d vectors", r.Vectors, len(rels[0].Vectors))
		}
		if len(r.Failures) > 0 {
			t.Errorf("%s: %d of %d vectors failed:\n%s", r.Release, r.FailedVectors(), r.Vectors, r.FailureText(40))
		}
	}
}

func TestNativeABIFrames(t *testing.T) {
	rels, err := conformance.LoadReleases("../../conformance/vectors")
	if err != nil {
		t.Fatal(err)
	}
	n, err := CheckFrames(Native{}, rels)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d frames", n)
}

func TestNativeABIRecords(t *testing.T) {
	n, err := CheckRecords(Native{}, "../../conformance/vectors")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d record vectors", n)
}
