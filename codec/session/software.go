package session

import (
	"errors"
	"strconv"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/internal/errtext"
)

// The client software a session reports in ApiVersions v3+ when Config leaves it empty.
const (
	DefaultClientSoftwareName    = "kwire-go"
	DefaultClientSoftwareVersion = codec.Version
)

// ErrInvalidField: a request field holds a value the broker refuses (it would answer
// INVALID_REQUEST). The error also unwraps to a *codec.EncodeError naming the message,
// version and field.
var ErrInvalidField = errors.New("invalid field value")

// SoftwarePattern is the rule Kafka's broker checks ApiVersions' clientSoftwareName and
// clientSoftwareVersion against (ApiVersionsRequest.isValid), as a regular expression.
const SoftwarePattern = `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`

// ValidSoftwareField reports whether s matches SoftwarePattern as a whole: ASCII letters,
// digits, '-' and '.', beginning and ending with a letter or a digit.
func ValidSoftwareField(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		if (c != '-' && c != '.') || i == 0 || i == len(s)-1 {
			return false
		}
	}
	return true
}

func (s *Session) softwareName() string {
	if s.cfg.ClientSoftwareName != "" {
		return s.cfg.ClientSoftwareName
	}
	return DefaultClientSoftwareName
}

func (s *Session) softwareVersion() string {
	if s.cfg.ClientSoftwareVersion != "" {
		return s.cfg.ClientSoftwareVersion
	}
	return DefaultClientSoftwareVersion
}

// apiVersionsMinSoftware is the first ApiVersions version with the client software fields.
const apiVersionsMinSoftware = 3

// fillApiVersions completes the body of an ApiVersions v3+ request that starts at
// dst[body:] as the Java client does: an empty clientSoftwareName or
// clientSoftwareVersion gets the session's. Both values must then match SoftwarePattern,
// or the request fails here rather than with the broker's INVALID_REQUEST. A body that
// does not decode is left as it is (the body of a request is the caller's).
func (s *Session) fillApiVersions(dst []byte, body int, version int16) ([]byte, error) {
	bv := min(version, apiVersionsInfo().Request.MaxVersion)
	enc, err := s.fillApiVersionsBody(dst[body:], bv, version)
	if err != nil || enc == nil {
		return dst, err
	}
	return append(dst[:body], enc...), nil
}

// checkSoftware fails when value breaks Kafka's rule for the field.
func checkSoftware(version int16, field, value string) error {
	if ValidSoftwareField(value) {
		return nil
	}
	detail := strconv.Quote(value) + " does not match " + SoftwarePattern +
		" (letters, digits, '-' and '.', beginning and ending with a letter or digit), which the broker checks: it would answer INVALID_REQUEST"
	ee := &codec.EncodeError{Message: "ApiVersionsRequest", Version: version, Path: field, Err: ErrInvalidField, Detail: detail}
	return errtext.WrapAll("kwire session: ApiVersions v"+itoa(version)+" request: "+field+" "+detail+": "+ErrInvalidField.Error(),
		ErrInvalidField, ee)
}

// requestBodyOffset is where the body of a request frame begun at start by StartFrame
// begins: after the size, the header's fixed part, the client id and (header v2) the
// empty tag section StartFrame writes.
func (s *Session) requestBodyOffset(start int, headerVersion int16) int {
	off := start + 4 + 2 + 2 + 4
	if headerVersion >= 1 {
		off += 2
		if s.clientID != nil {
			off += len(*s.clientID)
		}
	}
	if headerVersion >= 2 {
		off++
	}
	return off
}
