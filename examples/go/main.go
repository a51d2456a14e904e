// Command example decodes the sample frames in examples/data with kwire's Go codec and
// prints every message in the format all the language examples share (examples/README.md).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/records"
)

func quote(b []byte) string {
	if b == nil {
		return "null"
	}
	q, _ := json.Marshal(string(b))
	return string(q)
}

func line(m *records.Message) string {
	var hs []string
	for _, h := range m.Headers {
		hs = append(hs, string(h.Key)+"="+quote(h.Value))
	}
	return fmt.Sprintf("  %s/%d offset %d timestamp %d %s key %s value %s headers [%s]",
		m.Topic, m.Partition, m.Offset, m.Timestamp, m.Compression, quote(m.Key), quote(m.Value), strings.Join(hs, " "))
}

func main() {
	dir := filepath.Join("examples", "data")
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	reqBytes, err := os.ReadFile(filepath.Join(dir, "produce-request.bin"))
	check(err)
	req, err := codec.DecodeRequestFrame(reqBytes)
	check(err)
	api, _ := codec.LookupAPI(req.Header.RequestAPIKey)
	fmt.Printf("request: %s v%d correlation %d client %s\n", api.Name, req.Header.RequestAPIVersion, req.Header.CorrelationID, *req.Header.ClientID)
	dec := records.NewDecoder(records.Options{})
	produce := req.Body.(*codec.ProduceRequest)
	for _, t := range produce.TopicData {
		for _, p := range t.PartitionData {
			_, err := dec.ForEachMessage(p.Records, t.Name, p.Index, func(m *records.Message) error {
				fmt.Println(line(m))
				return nil
			})
			check(err)
		}
	}

	respBytes, err := os.ReadFile(filepath.Join(dir, "fetch-response.bin"))
	check(err)
	resp, err := codec.DecodeResponseFrame(respBytes, 1, 12)
	check(err)
	fmt.Printf("response: Fetch v12 correlation %d\n", resp.Header.CorrelationID)
	check(dec.ForEachFetchMessage(resp.Body.(*codec.FetchResponse), nil, func(m *records.Message) error {
		fmt.Println(line(m))
		return nil
	}))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}
