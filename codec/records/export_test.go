package records

import "testing"

// For the package's external tests.

// HaveCompressors tells whether this build has the compressors (false with
// the kwire_nocompress tag).
const HaveCompressors = haveCompressors

// AppendBatchT is testAppendBatch.
func AppendBatchT(t testing.TB, e *Encoder, dst []byte, b *Batch, recs []Record) ([]byte, error) {
	return testAppendBatch(t, e, dst, b, recs)
}

// AppendLegacySetT is testAppendLegacySet.
func AppendLegacySetT(t testing.TB, e *Encoder, dst []byte, s LegacySet, msgs []LegacyMessage) ([]byte, error) {
	return testAppendLegacySet(t, e, dst, s, msgs)
}
