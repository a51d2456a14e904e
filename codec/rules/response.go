package rules

import (
	"github.com/kwire/kwire/internal/transcode"
)

// Where a refusal's error lands in the api's response (ErrorResponse).
type Place = transcode.ErrorPlace

const (
	// Nowhere: the response has no error field the error could reach (or the request
	// named no entity to carry it); the only refusal left is closing the connection.
	Nowhere = transcode.NoErrorField
	// TopLevel: the response's own errorCode holds the error.
	TopLevel = transcode.TopLevel
	// PerEntity: every entity the request named (topics, partitions, groups, ...) is
	// answered with the error, as a broker's policy refusal is.
	PerEntity = transcode.PerEntity
)

// PolicyViolation is Kafka's POLICY_VIOLATION error code, which a refused request gets
// by default: what CreateTopics answers when a broker's create-topic policy refuses.
const PolicyViolation int16 = 44

// ErrorResponse is the response body (no header) that api key's broker gives, at
// apiVersion, to the request body refused with the error code and message: in that
// api's own shape, built from Kafka's descriptors as Kafka's getErrorResponse builds
// it by hand. Every errorCode of the response holds code (and every errorMessage the
// message); an array answering the request's (topics[] to topicData[], a result per
// group id of the request, the partitions under them) has one element per request
// element, carrying its names, ids and partition indexes; everything else has the
// value Kafka's answer has (the descriptors' default, or Kafka's -1 for no offset, no
// node, no epoch). `make conformance-java` compares it with Kafka's getErrorResponse
// for every api and version. Place says where the error lands: Nowhere means a client would see no
// error, and the caller should close the connection instead (and count it).
func ErrorResponse(apiKey, apiVersion int16, body []byte, code int16, message string) ([]byte, Place, error) {
	return transcode.ErrorResponse(apiKey, apiVersion, body, code, message)
}
