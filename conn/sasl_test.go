package conn

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestScramVector checks the SCRAM computation against the SCRAM-SHA-256 example of RFC
// 7677 (user "user", password "pencil").
func TestScramVector(t *testing.T) {
	const (
		nonce       = "rOprNGfwEbeRWgbNEkqO"
		serverFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
		clientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
		serverSig   = "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
	)
	got, sig, err := scramFinal(sha256.New, "n=user,r="+nonce, nonce, "pencil", []byte(serverFirst))
	if err != nil {
		t.Fatal(err)
	}
	if got != clientFinal {
		t.Errorf("client-final\n got %s\nwant %s", got, clientFinal)
	}
	if s := base64.StdEncoding.EncodeToString(sig); s != serverSig {
		t.Errorf("server signature %s, want %s", s, serverSig)
	}
}

func TestScramRefusals(t *testing.T) {
	const nonce = "abc"
	for _, c := range []struct{ name, serverFirst, want string }{
		{"nonce not extended", "r=xyz123,s=c2FsdA==,i=4096", "nonce"},
		{"nonce not extended at all", "r=abc,s=c2FsdA==,i=4096", "nonce"},
		{"few iterations", "r=abcdef,s=c2FsdA==,i=1000", "iteration"},
		{"no salt", "r=abcdef,i=4096", "salt"},
		{"server error", "e=other-error", "other-error"},
		{"mandatory extension", "m=ext,r=abcdef,s=c2FsdA==,i=4096", "extension"},
		{"garbage", "hello", "malformed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := scramFinal(sha256.New, "n=u,r="+nonce, nonce, "pw", []byte(c.serverFirst))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

func TestScramName(t *testing.T) {
	if got := scramName("a=b,c"); got != "a=3Db=2Cc" {
		t.Fatalf("scramName: %q", got)
	}
}

func TestAuthErrorIs(t *testing.T) {
	err := error(&AuthError{Mechanism: "PLAIN", Code: 58, Message: "bad"})
	if !errors.Is(err, ErrAuthentication) || !strings.Contains(err.Error(), "SASL_AUTHENTICATION_FAILED") {
		t.Fatalf("%v", err)
	}
}

// TestReauthDelay: 85-95% of a long lifetime; at least reauthMargin before the end of
// a short one, and never before its middle.
func TestReauthDelay(t *testing.T) {
	for _, c := range []struct {
		life, lo, hi time.Duration
	}{
		{time.Hour, 51 * time.Minute, 57 * time.Minute},
		{20 * time.Second, 17 * time.Second, 19 * time.Second},
		{4 * time.Second, 3 * time.Second, 3 * time.Second},
		{1500 * time.Millisecond, 750 * time.Millisecond, 750 * time.Millisecond},
	} {
		for range 200 {
			if d := reauthDelay(c.life); d < c.lo || d > c.hi {
				t.Fatalf("reauthDelay(%v) = %v, want %v..%v", c.life, d, c.lo, c.hi)
			}
		}
	}
}
