package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/kwire/kwire/codec/records"
	"github.com/kwire/kwire/codec/transcode"
	"github.com/kwire/kwire/internal/recordsjson"
)

// encodeLine is what kwire encode reads of a line: the keys of kwire decode's and
// kwire pcap's lines that say what to write. Other keys (time, conn, size, ...) are
// ignored.
type encodeLine struct {
	Dir           string          `json:"dir"`
	APIKey        *int16          `json:"apiKey"`
	APIVersion    *int16          `json:"apiVersion"`
	HeaderVersion *int16          `json:"headerVersion"`
	Header        json.RawMessage `json:"header"`
	Body          json.RawMessage `json:"body"`
	Error         json.RawMessage `json:"error"`
}

func cmdEncode(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("encode", stderr)
	request := fs.Bool("request", false, "lines without \"dir\" are requests (the default)")
	response := fs.String("response", "", "lines without \"dir\" are responses to API:VERSION")
	format := fs.String("format", "raw", "output: raw (frames back to back), hex or base64 (one frame per line)")
	dir, in, err := openFrames(fs, args, "encode", request, response, format, stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<16), 256<<20)
	w := bufio.NewWriterSize(stdout, 1<<16)
	defer w.Flush()
	// Topic names kwire pcap adds beside topic ids are not wire fields: dropped.
	f := transcode.Framer{Encode: transcode.EncodeOptions{Records: encodeRecords, TopicNames: true}}
	var frame, env []byte
	lineNo, failed := 0, 0
	for sc.Scan() {
		lineNo++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var l encodeLine
		if err := json.Unmarshal(text, &l); err != nil {
			fmt.Fprintf(stderr, "kwire: line %d: %v\n", lineNo, err)
			failed++
			continue
		}
		if l.Error != nil || l.Header == nil || l.Body == nil {
			fmt.Fprintf(stderr, "kwire: line %d: no header and body to encode\n", lineNo)
			failed++
			continue
		}
		resp := dir.response
		key, version := dir.key, dir.version
		switch l.Dir {
		case "response":
			resp = true
		case "request":
			resp = false
		case "":
		default:
			fmt.Fprintf(stderr, "kwire: line %d: dir %q is neither request nor response\n", lineNo, l.Dir)
			failed++
			continue
		}
		if l.APIKey != nil {
			key = *l.APIKey
		}
		if l.APIVersion != nil {
			version = *l.APIVersion
		}
		if resp && (l.APIKey == nil && dir.key == 0 && !dir.response || l.APIVersion == nil && !dir.response) {
			fmt.Fprintf(stderr, "kwire: line %d: a response needs apiKey and apiVersion (or --response API:VERSION)\n", lineNo)
			failed++
			continue
		}
		env = append(env[:0], `{"header":`...)
		env = append(env, l.Header...)
		env = append(env, `,"body":`...)
		env = append(env, l.Body...)
		if l.HeaderVersion != nil {
			env = append(env, `,"headerVersion":`...)
			env = strconv.AppendInt(env, int64(*l.HeaderVersion), 10)
		}
		env = append(env, '}')
		var err error
		if resp {
			frame, err = f.AppendResponseFrame(frame[:0], env, key, version)
		} else {
			frame, err = f.AppendRequestFrame(frame[:0], env)
		}
		if err != nil {
			fmt.Fprintf(stderr, "kwire: line %d: %v\n", lineNo, err)
			failed++
			continue
		}
		switch *format {
		case "raw":
			_, err = w.Write(frame)
		case "hex":
			_, err = w.WriteString(hex.EncodeToString(frame) + "\n")
		case "base64":
			_, err = w.WriteString(base64.StdEncoding.EncodeToString(frame) + "\n")
		}
		if err == nil && *format != "raw" {
			err = w.Flush()
		}
		if err != nil {
			return &outputError{err}
		}
	}
	if err := sc.Err(); err != nil {
		return &inputError{err}
	}
	if err := w.Flush(); err != nil {
		return &outputError{err}
	}
	if failed > 0 {
		return &failedError{plural(failed, "line") + " could not be encoded"}
	}
	return nil
}

// recordsField is the decoded form of a records field that kwire decode writes.
type recordsField struct {
	Batches []struct {
		Magic                int8      `json:"magic"`
		BaseOffset           int64s    `json:"baseOffset"`
		PartitionLeaderEpoch *int32    `json:"partitionLeaderEpoch"`
		Compression          string    `json:"compression"`
		TimestampType        string    `json:"timestampType"`
		LogAppendTime        *int64s   `json:"logAppendTime"`
		ProducerID           *int64s   `json:"producerId"`
		ProducerEpoch        *int16    `json:"producerEpoch"`
		BaseSequence         *int32    `json:"baseSequence"`
		Transactional        bool      `json:"transactional"`
		Control              bool      `json:"control"`
		Records              []recJSON `json:"records"`
	} `json:"batches"`
	// A records field that did not decode keeps its bytes.
	Base64 *string `json:"base64"`
}

type recJSON struct {
	Timestamp int64s     `json:"timestamp"`
	Key       *valueJSON `json:"key"`
	Value     *valueJSON `json:"value"`
	Headers   []struct {
		Key   string     `json:"key"`
		Value *valueJSON `json:"value"`
	} `json:"headers"`
}

// valueJSON is {"text": ...} or {"base64": ...}.
type valueJSON struct {
	Text   *string `json:"text"`
	Base64 *string `json:"base64"`
}

func (v *valueJSON) bytes() ([]byte, error) {
	switch {
	case v == nil:
		return nil, nil
	case v.Text != nil && v.Base64 == nil:
		return append([]byte{}, *v.Text...), nil
	case v.Base64 != nil && v.Text == nil:
		return base64.StdEncoding.DecodeString(*v.Base64)
	}
	return nil, errors.New(`a value is null, {"text": ...} or {"base64": ...}`)
}

var compressions = map[string]records.Compression{
	"none": records.CompressionNone, "gzip": records.CompressionGzip, "snappy": records.CompressionSnappy,
	"lz4": records.CompressionLZ4, "zstd": records.CompressionZstd,
}

// encodeRecords writes the decoded form of a records field back as batches.
func encodeRecords(obj []byte) ([]byte, error) {
	var rf recordsField
	if err := json.Unmarshal(obj, &rf); err != nil {
		return nil, err
	}
	if rf.Base64 != nil {
		return base64.StdEncoding.DecodeString(*rf.Base64)
	}
	out := []byte{}
	for i, b := range rf.Batches {
		spec := recordsjson.NewBatchSpec()
		spec.Magic = b.Magic
		spec.BaseOffset = int64(b.BaseOffset)
		if b.PartitionLeaderEpoch != nil {
			spec.PartitionLeaderEpoch = *b.PartitionLeaderEpoch
		}
		if b.ProducerID != nil {
			spec.ProducerID = int64(*b.ProducerID)
		}
		if b.ProducerEpoch != nil {
			spec.ProducerEpoch = *b.ProducerEpoch
		}
		if b.BaseSequence != nil {
			spec.BaseSequence = *b.BaseSequence
		}
		spec.Transactional = b.Transactional
		if b.TimestampType == "LogAppendTime" {
			spec.LogAppendTime = true
			if b.LogAppendTime != nil {
				spec.LogAppendValue = int64(*b.LogAppendTime)
			}
		}
		if b.Control {
			return nil, fmt.Errorf("batches[%d]: control batches are written by brokers, not encoded here", i)
		}
		c, ok := compressions[b.Compression]
		if !ok && b.Compression != "" {
			return nil, fmt.Errorf("batches[%d]: unknown compression %q", i, b.Compression)
		}
		for j, r := range b.Records {
			rec := records.Record{Timestamp: int64(r.Timestamp)}
			var err error
			if rec.Key, err = r.Key.bytes(); err != nil {
				return nil, fmt.Errorf("batches[%d].records[%d].key: %v", i, j, err)
			}
			if rec.Value, err = r.Value.bytes(); err != nil {
				return nil, fmt.Errorf("batches[%d].records[%d].value: %v", i, j, err)
			}
			for k, h := range r.Headers {
				v, err := h.Value.bytes()
				if err != nil {
					return nil, fmt.Errorf("batches[%d].records[%d].headers[%d]: %v", i, j, k, err)
				}
				rec.Headers = append(rec.Headers, records.Header{Key: []byte(h.Key), Value: v})
			}
			spec.Records = append(spec.Records, rec)
		}
		var err error
		if out, err = spec.Append(out, c); err != nil {
			return nil, fmt.Errorf("batches[%d]: %v", i, err)
		}
	}
	return out, nil
}

// int64s reads an int64 written as a decimal string (as kwire writes them) or a number.
type int64s int64

// UnmarshalJSON reads "123" or 123.
func (v *int64s) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want an int64, got %s", b)
	}
	*v = int64s(n)
	return nil
}
