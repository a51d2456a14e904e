package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kwire/kwire/codec"
)

// TestBroker starts each release once and checks every listener, the SASL mechanisms it
// announces, Kill and Stop.
func TestBroker(t *testing.T) {
	for _, v := range Versions {
		t.Run(v, func(t *testing.T) {
			b := StartT(t, Options{Version: v, Props: map[string]string{"auto.create.topics.enable": "false"}})
			if b.Version() != v {
				t.Errorf("Version() = %q, want %q", b.Version(), v)
			}
			props, err := os.ReadFile(b.Dir() + "/server.properties")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(props), "auto.create.topics.enable=false\n") {
				t.Errorf("Props not applied:\n%s", props)
			}

			// PLAINTEXT and SSL answer ApiVersions; the TLS config verifies the broker's certificate.
			for _, l := range []string{"PLAINTEXT", "SSL"} {
				c := dial(t, b, l)
				resp, err := RoundTrip(c, 7, codec.NewAPIVersionsRequest(), 0)
				c.Close()
				if err != nil {
					t.Fatalf("%s: ApiVersions: %v", l, err)
				}
				if n := len(resp.(*codec.APIVersionsResponse).APIKeys); n < 20 {
					t.Errorf("%s: ApiVersions lists %d apis", l, n)
				}
			}
			// An SSL listener refuses a client that does not trust its certificate.
			raw, err := tls.Dial("tcp", b.Addr("SSL"), &tls.Config{ServerName: "127.0.0.1"})
			if err == nil {
				raw.Close()
				t.Errorf("SSL: a client without the broker's certificate connected")
			}

			// The SASL listeners announce the four mechanisms.
			for _, l := range []string{"SASL_PLAINTEXT", "SASL_SSL"} {
				c := dial(t, b, l)
				hs := codec.NewSaslHandshakeRequest()
				hs.Mechanism = "NOT-A-MECHANISM"
				resp, err := RoundTrip(c, 1, hs, 1)
				c.Close()
				if err != nil {
					t.Fatalf("%s: SaslHandshake: %v", l, err)
				}
				got := strings.Join(resp.(*codec.SaslHandshakeResponse).Mechanisms, ",")
				if !strings.Contains(got, OAuthBearer) {
					t.Errorf("%s: mechanisms %q lack %s", l, got, OAuthBearer)
				}
				for _, m := range Mechanisms {
					if !strings.Contains(got, m) {
						t.Errorf("%s: mechanisms %q lack %s", l, got, m)
					}
					if u, p := b.User(m); u == "" || p == "" {
						t.Errorf("User(%s) is empty", m)
					}
				}
			}

			if v == DefaultVersion {
				checkKill(t, b)
			} else {
				checkStop(t, b)
			}
			if _, err := os.Stat(b.Dir()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Stop left %s: %v", b.Dir(), err)
			}
			if err := b.Stop(); err != nil {
				t.Errorf("second Stop: %v", err)
			}
		})
	}
}

// checkKill kills the broker: the process is gone and the port refuses connections;
// Stop then only removes the directory.
func checkKill(t *testing.T, b *Broker) {
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Done():
	default:
		t.Fatal("Kill returned before the process exited")
	}
	if c, err := net.DialTimeout("tcp", b.Addr("PLAINTEXT"), time.Second); err == nil {
		c.Close()
		t.Error("the killed broker still accepts connections")
	}
	if err := b.Stop(); err != nil {
		t.Errorf("Stop after Kill: %v", err)
	}
}

// checkStop stops the broker with SIGTERM: the process exits by itself, well before Stop
// would kill it, and no longer exists when Stop returns.
func checkStop(t *testing.T, b *Broker) {
	pid := b.Pid()
	t0 := time.Now()
	if err := b.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("clean stop took %v", time.Since(t0))
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists after Stop (kill -0: %v)", pid, err)
	}
}

// TestStartFailureKillsAndReports gives the broker a configuration it refuses: Start
// fails, the error carries the broker's log, and no process or directory is left.
func TestStartFailureKillsAndReports(t *testing.T) {
	if _, err := LibDir(DefaultVersion); err != nil {
		unavailable(t, err)
	}
	if _, err := javaPath(); err != nil {
		unavailable(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	before, _ := os.ReadDir(os.TempDir())
	_, err := Start(ctx, Options{Props: map[string]string{"num.io.threads": "not-a-number"}})
	if err == nil {
		t.Fatal("Start accepted num.io.threads=not-a-number")
	}
	if !strings.Contains(err.Error(), "num.io.threads") {
		t.Errorf("the error does not quote the broker's complaint:\n%v", err)
	}
	after, _ := os.ReadDir(os.TempDir())
	if n := countPrefix(after, "kwire-broker-") - countPrefix(before, "kwire-broker-"); n > 0 {
		t.Errorf("a failed Start left %d temporary directories", n)
	}
}

func countPrefix(es []os.DirEntry, prefix string) int {
	n := 0
	for _, e := range es {
		if strings.HasPrefix(e.Name(), prefix) {
			n++
		}
	}
	return n
}

func dial(t *testing.T, b *Broker, listener string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", b.Addr(listener), 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", listener, err)
	}
	if strings.HasSuffix(listener, "SSL") {
		tc := tls.Client(c, b.TLSConfig())
		if err := tc.Handshake(); err != nil {
			c.Close()
			t.Fatalf("%s: TLS handshake: %v", listener, err)
		}
		c = tc
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

func TestEscapeProp(t *testing.T) {
	for _, c := range []struct{ in, key, val string }{
		{"a.b", "a.b", "a.b"},
		{"x=y:z", `x\=y\:z`, "x=y:z"},
		{" lead", `\ lead`, `\ lead`},
		{`c:\d`, `c\:\\d`, `c:\\d`},
		{"é", `\u00e9`, `\u00e9`},
	} {
		if got := escapeProp(c.in, true); got != c.key {
			t.Errorf("key %q: %q, want %q", c.in, got, c.key)
		}
		if got := escapeProp(c.in, false); got != c.val {
			t.Errorf("value %q: %q, want %q", c.in, got, c.val)
		}
	}
}

// TestRemoveStale: a directory whose owner process is gone is removed; one whose owner
// lives, or that names no owner, stays.
func TestRemoveStale(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` command:", err)
	}
	dead := cmd.Process.Pid
	mk := func(owner string) string {
		d, err := os.MkdirTemp("", tempPrefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		if owner != "" {
			os.WriteFile(filepath.Join(d, ownerFile), []byte(owner), 0o600)
		}
		return d
	}
	stale, live, unowned := mk(strconv.Itoa(dead)), mk(strconv.Itoa(os.Getpid())), mk("")
	removeStale()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directory of dead process %d stayed", dead)
	}
	for _, d := range []string{live, unowned} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
