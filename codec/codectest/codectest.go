// Package codectest makes random kwire messages for tests, fuzz seeds and conformance
// tools. Fill sets every field that exists at a version to a random value that version
// can carry: nullable fields are sometimes null, tagged fields sometimes keep their
// default, arrays are empty or short, strings mix ASCII and non-ASCII text, and flexible
// structs sometimes carry unknown tagged fields.
package codectest

import (
	"fmt"
	"math/rand"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/transcode"
)

// Fill replaces m with random content valid at version, drawn from r: the same r gives
// the same message. The content is written from the schema tables as the JSON form and
// read back with DecodeJSON. It panics when version is not one of m's, which is a
// programming error.
func Fill(m codec.Message, r *rand.Rand, version int16) {
	js, err := transcode.AppendRandomJSON(nil, m.MessageName(), version, r)
	if err == nil {
		err = m.DecodeJSON(js, version)
	}
	if err != nil {
		panic(fmt.Sprintf("codectest: %T at version %d: %v", m, version, err))
	}
}
