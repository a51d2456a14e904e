package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/conformance/broker"
	"github.com/kwire/kwire/internal/proctest"
)

// textListing is what the test reads from the -text output.
type textListing struct {
	pid     int                  // the broker's process
	dir     string               // the broker's directory, removed on stop
	addrs   map[string]string    // listener -> address
	users   map[string][2]string // "SASL_PLAINTEXT PLAIN" -> username, password
	oauth   []string             // the listeners with an OAUTHBEARER line
	certPEM string               // the file the TLS listeners' line names
}

var (
	servingLine = regexp.MustCompile(`^Kafka (\S+) is serving on 127\.0\.0\.1 \(broker pid (\d+), `)
	trustLine   = regexp.MustCompile(`^SSL and SASL_SSL: trust (\S+) `)
	stopLine    = regexp.MustCompile(`^Ctrl-C stops the broker and removes (\S+)\.$`)
)

// readListing waits for the -text output's last line and reads the listing.
func readListing(t *testing.T, p *proctest.Proc) textListing {
	t.Helper()
	complete := func() bool {
		for _, line := range strings.Split(p.Stdout.String(), "\n") {
			if stopLine.MatchString(line) {
				return true
			}
		}
		return false
	}
	if err := p.Await(complete, 4*time.Minute); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 && os.Getenv(broker.RequireEnv) != "1" {
			t.Skipf("no Kafka broker here (exit 3):\n%s", p.Stderr)
		}
		t.Fatalf("kwire-broker's listing is not complete (%v):\n%s", err, p.Stderr)
	}
	l := textListing{addrs: map[string]string{}, users: map[string][2]string{}}
	for _, line := range strings.Split(p.Stdout.String(), "\n") {
		if m := servingLine.FindStringSubmatch(line); m != nil {
			if m[1] != broker.DefaultVersion {
				t.Errorf("serving %s, want %s", m[1], broker.DefaultVersion)
			}
			l.pid, _ = strconv.Atoi(m[2])
			continue
		}
		if m := trustLine.FindStringSubmatch(line); m != nil {
			l.certPEM = m[1]
			continue
		}
		if m := stopLine.FindStringSubmatch(line); m != nil {
			l.dir = m[1]
			break
		}
		f := strings.Fields(line)
		if len(f) < 3 || !strings.HasPrefix(f[1], "127.0.0.1:") {
			continue
		}
		l.addrs[f[0]] = f[1]
		switch {
		case f[2] == broker.OAuthBearer:
			l.oauth = append(l.oauth, f[0])
		case len(f) == 7 && f[3] == "username" && f[5] == "password":
			l.users[f[0]+" "+f[2]] = [2]string{f[4], f[6]}
		}
	}
	return l
}

// TestTextListingAndInterrupt runs the launcher as make broker does (-text): its plain
// text names every listener and every SASL user with a password that works; the
// PLAINTEXT listener answers ApiVersions; SIGINT then stops it with exit status 0, and
// afterwards the broker's process, its directory and its listener are gone.
func TestTextListingAndInterrupt(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kwire-broker")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	p := proctest.Start(t, exec.Command(bin, "-text")) // the broker dies with it (Pdeathsig)
	stderr := p.Stderr
	l := readListing(t, p)
	for _, name := range broker.Listeners {
		if l.addrs[name] == "" {
			t.Errorf("no address for listener %s", name)
		}
	}
	for _, listener := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
		for _, m := range broker.Mechanisms {
			if u := l.users[listener+" "+m]; u[0] == "" || u[1] == "" {
				t.Errorf("%s %s: no username and password", listener, m)
			}
		}
	}
	if strings.Join(l.oauth, ",") != "SASL_PLAINTEXT,SASL_SSL" {
		t.Errorf("OAUTHBEARER lines for %v", l.oauth)
	}
	if pem, err := os.ReadFile(l.certPEM); err != nil || !bytes.Contains(pem, []byte("BEGIN CERTIFICATE")) {
		t.Errorf("the certificate file %q: %v", l.certPEM, err)
	}
	if l.pid <= 0 || syscall.Kill(l.pid, 0) != nil {
		t.Fatalf("broker pid %d is not a running process", l.pid)
	}

	// The PLAINTEXT address answers ApiVersions; SASL PLAIN accepts the printed password.
	c := dialT(t, l.addrs["PLAINTEXT"])
	resp, err := broker.RoundTrip(c, 1, codec.NewAPIVersionsRequest(), 0)
	c.Close()
	if err != nil {
		t.Fatalf("ApiVersions on PLAINTEXT: %v", err)
	}
	if av := resp.(*codec.APIVersionsResponse); av.ErrorCode != 0 || len(av.APIKeys) < 20 {
		t.Errorf("ApiVersions: error %d, %d apis", av.ErrorCode, len(av.APIKeys))
	}
	plain := l.users["SASL_PLAINTEXT PLAIN"]
	if code, msg := saslPlain(t, l.addrs["SASL_PLAINTEXT"], plain[0], plain[1]); code != 0 {
		t.Errorf("SASL PLAIN with the printed password: error %d %q", code, msg)
	}
	if code, _ := saslPlain(t, l.addrs["SASL_PLAINTEXT"], plain[0], plain[1]+"x"); code == 0 {
		t.Errorf("SASL PLAIN accepted a wrong password")
	}

	if err := p.Interrupt(time.Minute); err != nil {
		t.Fatalf("kwire-broker after SIGINT: %v\n%s", err, stderr)
	}
	if err := syscall.Kill(l.pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("broker process %d still exists after the launcher stopped (kill -0: %v)", l.pid, err)
	}
	if _, err := os.Stat(l.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the broker's directory %s is still there (%v)", l.dir, err)
	}
	if c, err := net.DialTimeout("tcp", l.addrs["PLAINTEXT"], time.Second); err == nil {
		c.Close()
		t.Errorf("something still listens on %s", l.addrs["PLAINTEXT"])
	}
	if !strings.Contains(stderr.String(), "kwire-broker: stopped") {
		t.Errorf("stderr does not say it stopped:\n%s", stderr)
	}
}

func dialT(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return c
}

// saslPlain authenticates with SASL PLAIN (SaslHandshake v1, SaslAuthenticate v2) and
// returns SaslAuthenticate's error code and message.
func saslPlain(t *testing.T, addr, user, password string) (int16, string) {
	t.Helper()
	c := dialT(t, addr)
	defer c.Close()
	hs := codec.NewSaslHandshakeRequest()
	hs.Mechanism = "PLAIN"
	resp, err := broker.RoundTrip(c, 1, hs, 1)
	if err != nil {
		t.Fatalf("SaslHandshake: %v", err)
	}
	if code := resp.(*codec.SaslHandshakeResponse).ErrorCode; code != 0 {
		t.Fatalf("SaslHandshake PLAIN: error %d", code)
	}
	auth := codec.NewSaslAuthenticateRequest()
	auth.AuthBytes = []byte("\x00" + user + "\x00" + password)
	resp, err = broker.RoundTrip(c, 2, auth, 2)
	if err != nil {
		t.Fatalf("SaslAuthenticate: %v", err)
	}
	r := resp.(*codec.SaslAuthenticateResponse)
	msg := ""
	if r.ErrorMessage != nil {
		msg = *r.ErrorMessage
	}
	return r.ErrorCode, msg
}
