//go:build !wasm

// Command kwire-broker starts one single-node Kafka broker with the launcher of
// conformance/broker, for people trying kwire (make broker, which runs it with -text) and
// for programs in other languages (the JavaScript and Python tests and examples):
//
//	go run ./conformance/broker/cmd/kwire-broker [-text] [-version 4.4.0] [-reauth-ms 3000] [-prop key=value ...]
//
// With -text it prints, once the broker serves, each listener's bootstrap address with
// the username and password of each SASL mechanism, as plain text lines on stdout, then
// runs until SIGINT (Ctrl-C), SIGTERM or SIGHUP; it reads nothing from stdin. -h lists
// the listeners and users.
//
// Without -text, once the broker serves, it prints one JSON line on stdout:
//
//	{"version":"4.4.0","addr":"127.0.0.1:40001","listeners":{"PLAINTEXT":"127.0.0.1:40001",...},
//	 "certPEM":"-----BEGIN CERTIFICATE-----...","users":{"PLAIN":["user","password"],...},
//	 "pid":1234,"startMs":3500}
//
// addr is the PLAINTEXT listener; "mechanisms" lists every SASL mechanism the SASL
// listeners enable (OAUTHBEARER, with Kafka's unsecured validator, has no user), and
// "reauthMs" is connections.max.reauth.ms (0: not set).
//
// While it runs, the command reads commands from stdin, one a line, and answers each with
// one JSON line on stdout, {"ok":"<command>"} or {"error":"..."}:
//
//	halt      stop the broker process cleanly, keeping ports, configuration and data
//	resume    start it again as it was, answer once it serves
//	restart   halt then resume
//	pause     SIGSTOP the broker (its sockets stay open, nothing is answered)
//	continue  SIGCONT it
//	count S   {"ok":"count","count":N}: the lines of the broker's log containing S
//
// The broker is stopped cleanly (and its directory removed) when stdin reaches end of
// file, on SIGTERM, SIGINT or SIGHUP; the command then exits 0.
// Either during the start cancels it (exit 1): run it with stdin open (a pipe, a
// terminal), not from /dev/null.
// If the broker process dies by itself, the command exits 1. A failed start exits 1, or 3
// when the environment cannot run a broker at all (no Java, no Maven to fetch the jars).
// Killed outright, the command takes the broker with it (on Linux).
//
// It is built for hosts only (the constraint above): it starts a Java process, which no
// WebAssembly port can, and GOOS=js has no SIGHUP.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/kwire/kwire/conformance/broker"
)

// props collects repeated -prop key=value flags.
type props map[string]string

// String returns the properties as key=value pairs.
func (p props) String() string {
	var parts []string
	for k, v := range p {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

// Set adds one key=value pair.
func (p props) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	p[k] = v
	return nil
}

// ready is the line printed once the broker serves.
type ready struct {
	Version   string               `json:"version"`
	Addr      string               `json:"addr"`
	Listeners map[string]string    `json:"listeners"`
	CertPEM   string               `json:"certPEM"`
	Users     map[string][2]string `json:"users"`
	Mechs     []string             `json:"mechanisms"`
	ReauthMs  int                  `json:"reauthMs"`
	Pid       int                  `json:"pid"`
	StartMs   int64                `json:"startMs"`
}

func main() {
	os.Exit(run())
}

// usageText is what -h prints before the flags.
const usageText = `kwire-broker starts one single-node Apache Kafka broker (KRaft, broker and controller
in one process) on free 127.0.0.1 ports, in a temporary directory, and stops it cleanly
and removes that directory on Ctrl-C (SIGINT), SIGTERM or SIGHUP.

Usage: kwire-broker [-text] [-version V] [-reauth-ms N] [-prop key=value ...]

Listeners (all on 127.0.0.1, ports chosen at start):
  PLAINTEXT       no TLS, no authentication
  SSL             TLS, no authentication
  SASL_PLAINTEXT  SASL without TLS
  SASL_SSL        SASL over TLS
The TLS listeners use a certificate made at start, valid for 127.0.0.1 and localhost,
written to broker.pem in the broker's directory (the -text output names it; the JSON
line carries it as certPEM).

SASL users on both SASL listeners (passwords are random, new at every start, and
printed once the broker serves):
  PLAIN           username kwire-plain
  SCRAM-SHA-256   username kwire-scram256
  SCRAM-SHA-512   username kwire-scram512
  OAUTHBEARER     no user: Kafka's unsecured validator takes any unsigned JWS
                  ({"alg":"none"}) with a "sub" claim and an "exp" claim in seconds;
                  for testing only

-text prints the addresses and credentials as plain text and ignores stdin; without
it the command prints one JSON line and reads commands from stdin (see the package
documentation). The jars come from build/kafka/<version>/lib of the repository, fetched
with Maven on first use.

Flags:
`

func run() int {
	version := flag.String("version", broker.DefaultVersion, "Kafka release: "+strings.Join(broker.Versions, " or "))
	extra := props{}
	flag.Var(extra, "prop", "extra server property key=value (repeatable)")
	reauthMs := flag.Int("reauth-ms", 0, "connections.max.reauth.ms (0: not set)")
	text := flag.Bool("text", false, "print the listeners and credentials as plain text, not JSON, and ignore stdin")
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usageText)
		flag.PrintDefaults()
	}
	flag.Parse()

	// Signals and stdin are watched from the start: a SIGTERM or the end of stdin during
	// the start cancels it, and afterwards stops the broker. With -text, stdin is not
	// read (a terminal's Ctrl-C is the way to stop it).
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stopSig := make(chan os.Signal, 1)
	go func() {
		s := <-sigs
		cancel()
		stopSig <- s
	}()
	stdinClosed := make(chan struct{})
	lines := make(chan string)
	if !*text {
		go func() {
			sc := bufio.NewScanner(os.Stdin)
			for sc.Scan() {
				lines <- sc.Text()
			}
			cancel()
			close(stdinClosed)
		}()
	}
	// Commands that arrive during the start wait for it.

	if *text {
		fmt.Fprintf(os.Stderr, "kwire-broker: starting Kafka %s (the first start fetches its jars with Maven)\n", *version)
	}
	b, err := broker.Start(ctx, broker.Options{Version: *version, Props: extra, ReauthMs: *reauthMs})
	if err != nil {
		fmt.Fprintln(os.Stderr, "kwire-broker:", err)
		var ue *broker.UnavailableError
		if errors.As(err, &ue) {
			return 3
		}
		return 1
	}

	r := ready{Version: b.Version(), Addr: b.Addr("PLAINTEXT"), Listeners: map[string]string{},
		CertPEM: string(b.CertPEM()), Users: map[string][2]string{}, Pid: b.Pid(), StartMs: b.StartDuration().Milliseconds(),
		Mechs: append(append([]string(nil), broker.Mechanisms...), broker.OAuthBearer), ReauthMs: *reauthMs}
	for _, l := range broker.Listeners {
		r.Listeners[l] = b.Addr(l)
	}
	for _, m := range broker.Mechanisms {
		u, p := b.User(m)
		r.Users[m] = [2]string{u, p}
	}
	if *text {
		if err := printText(os.Stdout, b); err != nil {
			fmt.Fprintln(os.Stderr, "kwire-broker: writing the addresses:", err)
			b.Stop()
			return 1
		}
	} else {
		line, err := json.Marshal(r)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kwire-broker:", err)
			b.Stop()
			return 1
		}
		if _, err := os.Stdout.Write(append(line, '\n')); err != nil {
			fmt.Fprintln(os.Stderr, "kwire-broker: writing the address:", err)
			b.Stop()
			return 1
		}
		fmt.Fprintf(os.Stderr, "kwire-broker: Kafka %s on %s (started in %v); close stdin or send SIGTERM to stop it\n",
			b.Version(), r.Addr, b.StartDuration().Round(time.Millisecond))
	}

	code := 0
	halted := false
loop:
	for {
		done := b.Done()
		if halted {
			done = nil
		}
		select {
		case line := <-lines:
			answer(b, line, &halted)
		case <-stdinClosed:
			break loop
		case s := <-stopSig:
			fmt.Fprintf(os.Stderr, "kwire-broker: %v\n", s)
			break loop
		case <-done:
			fmt.Fprintf(os.Stderr, "kwire-broker: the broker process exited by itself (%v)\n--- broker log (tail) ---\n%s%s\n", b.ExitError(), b.LogTail(), b.LogProblems())
			code = 1
			break loop
		}
	}
	if err := b.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "kwire-broker: stop:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "kwire-broker: stopped")
	return code
}

// printText writes what -text prints once the broker serves: a line about the broker,
// one line per listener and way to authenticate on it ("LISTENER ADDRESS ..."), and
// where the certificate is.
func printText(w io.Writer, b *broker.Broker) error {
	fmt.Fprintf(w, "Kafka %s is serving on 127.0.0.1 (broker pid %d, started in %v).\n\n",
		b.Version(), b.Pid(), b.StartDuration().Round(100*time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "PLAINTEXT\t%s\tno authentication\n", b.Addr("PLAINTEXT"))
	fmt.Fprintf(tw, "SSL\t%s\tTLS, no authentication\n", b.Addr("SSL"))
	for _, l := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
		for _, m := range broker.Mechanisms {
			u, p := b.User(m)
			fmt.Fprintf(tw, "%s\t%s\t%s\tusername %s\tpassword %s\n", l, b.Addr(l), m, u, p)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\tany unsigned token (alg none) with \"sub\" and \"exp\" claims\n", l, b.Addr(l), broker.OAuthBearer)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nSSL and SASL_SSL: trust %s (valid for 127.0.0.1 and localhost).\n"+
		"Ctrl-C stops the broker and removes %s.\n", b.CertFile(), b.Dir())
	return err
}

// answer runs one stdin command and prints its JSON answer line.
func answer(b *broker.Broker, line string, halted *bool) {
	cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	out := map[string]any{"ok": cmd}
	var err error
	switch cmd {
	case "":
		return
	case "halt":
		err = b.Halt()
		*halted = true
	case "resume", "restart":
		if cmd == "restart" {
			if err = b.Halt(); err != nil {
				break
			}
		}
		*halted = true
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		err = b.Resume(ctx)
		cancel()
		if err == nil {
			*halted = false
			out["pid"] = b.Pid()
		}
	case "pause":
		err = b.Pause()
	case "continue":
		err = b.Continue()
	case "count":
		out["count"] = b.LogContains(arg)
	default:
		err = fmt.Errorf("unknown command %q (halt, resume, restart, pause, continue, count S)", cmd)
	}
	if err != nil {
		out = map[string]any{"error": err.Error()}
	}
	data, _ := json.Marshal(out)
	os.Stdout.Write(append(data, '\n'))
}
