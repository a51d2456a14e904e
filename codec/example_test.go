package codec_test

import (
	"fmt"

	"github.com/kwire/kwire/codec"
)

func Example() {
	// A client builds a Metadata v12 request frame...
	req := codec.NewMetadataRequest()
	name := "orders"
	req.Topics = []codec.MetadataRequestTopic{{Name: &name}}
	frame, err := codec.EncodeRequestFrame(nil, codec.NewRequestHeaderFor(req, 12, 42, "example"), req)
	if err != nil {
		panic(err)
	}

	// ...a proxy peeks at the header without decoding the body...
	p, _ := codec.PeekRequestHeader(frame)
	fmt.Println("api", p.APIKey, "version", p.APIVersion, "correlation", p.CorrelationID, "client", *p.ClientID)

	// ...and a server decodes it.
	got, err := codec.DecodeRequestFrame(frame)
	if err != nil {
		panic(err)
	}
	js, _ := got.Body.AppendJSON(nil, got.Header.RequestAPIVersion)
	fmt.Println(string(js))
	// Output:
	// api 3 version 12 correlation 42 client example
	// {"topics":[{"topicId":"AAAAAAAAAAAAAAAAAAAAAA","name":"orders"}],"allowAutoTopicCreation":true,"includeTopicAuthorizedOperations":false}
}

func ExampleDecodeError() {
	_, err := codec.DecodeRequestFrame([]byte{0, 0, 0, 6, 0, 3, 0, 12, 0, 0})
	fmt.Println(err)
	// Output:
	// kwire: decode RequestHeader v2 field correlationId at offset 8: input truncated (need 4 bytes, have 2)
}
