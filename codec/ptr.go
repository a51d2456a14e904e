package codec

// Optional (nullable) fields are pointers: a nil *string is null. These helpers make
// one from a value in an expression, e.g.
// codec.MetadataRequestTopic{Name: codec.StringPtr("events")}.

// StringPtr returns a pointer to s.
func StringPtr(s string) *string { return &s }

// Ptr returns a pointer to v, for any optional field type.
func Ptr[T any](v T) *T { return &v }
