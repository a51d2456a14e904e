// Command kwire reads Kafka's wire protocol: frames from files, captures and live
// connections, as JSON lines.
//
//	kwire apis                                   the catalogue of api keys and versions
//	kwire decode [--request | --response API:VERSION] [--format raw|hex|base64] [FILE|-]
//	kwire encode [--request | --response API:VERSION] [--format raw|hex|base64] [FILE|-]
//	kwire pcap [--port N]... [--summary] [--no-resolve] FILE...
//	kwire tap --listen ADDR --upstream ADDR [--rewrite]
//	kwire envoy check [--wasm FILE] CONFIG...           the Envoy filter's verdict on a configuration
//	kwire envoy proxy --config CONFIG --listen ADDR --upstream ADDR   the filter as a TCP proxy
//
// Exit codes: 0 success; 1 the input was read but some frames did not decode (their
// lines carry "error"); 2 usage error; 3 an input could not be read (missing file, not
// a capture, I/O error); 4 a network failure (tap).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes.
const (
	exitOK      = 0
	exitFrames  = 1
	exitUsage   = 2
	exitInput   = 3
	exitNetwork = 4
)

const usage = `kwire reads Kafka's wire protocol.

Usage:
  kwire apis [--json]
  kwire decode [--request | --response API:VERSION] [--format raw|hex|base64] [--raw-records] [FILE|-]
  kwire encode [--request | --response API:VERSION] [--format raw|hex|base64] [FILE|-]
  kwire pcap [--port N]... [--summary] [--raw-records] [--no-resolve] [--progress auto|always|never] FILE...
  kwire tap --listen ADDR --upstream ADDR [--rewrite] [--port-offset]
  kwire envoy check [--wasm FILE] [--log-level L] CONFIG...
  kwire envoy proxy --config CONFIG --listen ADDR --upstream ADDR [--wasm FILE] [--log-level L]
  kwire help

Exit codes: 0 ok; 1 some frames did not decode; 2 usage; 3 input unreadable; 4 network.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// usageError is a bad command line.
type usageError struct{ msg string }

// Error is the problem with the command line.
func (e *usageError) Error() string { return e.msg }

// inputError is an input that cannot be read.
type inputError struct{ err error }

// Error says why the input could not be read.
func (e *inputError) Error() string { return e.err.Error() }

// Unwrap returns the cause.
func (e *inputError) Unwrap() error { return e.err }

// errFrames reports that some frames did not decode (their lines say why).
var errFrames = errors.New("some frames did not decode")

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "apis":
		err = cmdAPIs(args[1:], stdout)
	case "decode":
		err = cmdDecode(args[1:], stdin, stdout, stderr)
	case "encode":
		err = cmdEncode(args[1:], stdin, stdout, stderr)
	case "pcap":
		err = cmdPcap(args[1:], stdin, stdout, stderr)
	case "tap":
		err = cmdTap(args[1:], stdout, stderr)
	case "envoy":
		err = cmdEnvoy(args[1:], stdin, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "kwire: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	return exitCode(err, stderr)
}

func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	var ie *inputError
	var ne *netError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "kwire: %s\n", ue.msg)
		return exitUsage
	case errors.Is(err, errFrames):
		fmt.Fprintf(stderr, "kwire: %v\n", err)
		return exitFrames
	case errors.Is(err, errRefused):
		fmt.Fprintf(stderr, "kwire: %v\n", err)
		return exitFrames
	case errors.As(err, &ie):
		fmt.Fprintf(stderr, "kwire: %v\n", ie.err)
		return exitInput
	case errors.As(err, &ne):
		fmt.Fprintf(stderr, "kwire: %v\n", ne.err)
		return exitNetwork
	}
	fmt.Fprintf(stderr, "kwire: %v\n", err)
	return exitInput
}

// parseInterspersed parses flags that may come before, between or after positional
// arguments (kwire pcap a.pcap --port 9093 b.pcap).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("kwire "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func openInput(name string, stdin io.Reader) (io.ReadCloser, error) {
	if name == "" || name == "-" {
		return io.NopCloser(stdin), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, &inputError{err}
	}
	return f, nil
}

func trimSpace(s string) string { return strings.TrimSpace(s) }
