package transcode

// schemaInfos describes every message of the schema, sorted by name.
func schemaInfos() []Info {
	out := make([]Info, len(schemaMessages))
	for i := range schemaMessages {
		out[i] = infoOf(&schemaMessages[i])
	}
	return out
}

// randomWire is the encoding of a random message (codec/codectest.Fill's, for the same r).
func randomWire(name string, v int16, r Rand) ([]byte, error) {
	js, err := AppendRandomJSON(nil, name, v, r)
	if err != nil {
		return nil, err
	}
	return AppendWire(nil, name, v, js)
}
