package conn

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	mrand "math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/codec"
	"github.com/kwire/kwire/codec/kerr"
)

// ErrAuthentication is wrapped by every SASL failure: the broker refused the mechanism
// or the credentials, or the exchange broke the mechanism's rules.
var ErrAuthentication = errors.New("kwire conn: SASL authentication failed")

// AuthError is a SASL failure reported by the broker or found in its answers.
type AuthError struct {
	Mechanism string
	// Code is the broker's error code (0 when the client found the fault).
	Code kerr.Code
	// Message is the broker's error message, or the client's finding.
	Message string
}

// Error reports the mechanism, the code and the message.
func (e *AuthError) Error() string {
	s := "kwire conn: SASL " + e.Mechanism + " authentication failed"
	if e.Code != 0 {
		s += " (" + e.Code.String() + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is makes errors.Is(err, ErrAuthentication) hold.
func (e *AuthError) Is(target error) bool { return target == ErrAuthentication }

// SASL configures authentication for WithSASL. Mechanism is "PLAIN", "SCRAM-SHA-256",
// "SCRAM-SHA-512" (Username and Password) or "OAUTHBEARER" (Token).
type SASL struct {
	Mechanism string
	// Username and Password are the credentials of PLAIN and SCRAM. The password never
	// appears in an error.
	Username, Password string
	// Token returns the OAUTHBEARER token (a JWT, without "Bearer "). It is called at
	// every authentication, re-authentications included, so it may fetch a fresh one.
	Token func(ctx context.Context) (string, error)
	// Extensions are OAUTHBEARER's optional SASL extensions (RFC 7628 key=value pairs).
	Extensions map[string]string
}

// ReauthTimeout bounds one re-authentication exchange (SaslHandshake and every
// SaslAuthenticate); a broker that does not answer in time fails the connection.
const ReauthTimeout = 30 * time.Second

// scramMinIterations is the lowest iteration count accepted from a server (RFC 7677's
// minimum, which Kafka enforces too).
const scramMinIterations = 4096

// authKey marks the context of the authentication exchange: its requests pass the gate
// that holds every other request during a re-authentication.
type authKey struct{}

func saslHash(mech string) (func() hash.Hash, bool) {
	switch mech {
	case "PLAIN", "OAUTHBEARER":
		return nil, true
	case "SCRAM-SHA-256":
		return sha256.New, true
	case "SCRAM-SHA-512":
		return sha512.New, true
	}
	return nil, false
}

// authenticate runs SaslHandshake v1 and the mechanism's SaslAuthenticate exchange, and
// returns the session lifetime the broker grants (0: no re-authentication needed).
func (c *Conn) authenticate(ctx context.Context, cfg *SASL) (time.Duration, error) {
	ctx = context.WithValue(ctx, authKey{}, true)
	mech := strings.ToUpper(cfg.Mechanism)
	h, ok := saslHash(mech)
	if !ok {
		return 0, &AuthError{Mechanism: cfg.Mechanism, Message: "kwire supports PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER"}
	}
	if mech == "OAUTHBEARER" && cfg.Token == nil {
		return 0, &AuthError{Mechanism: mech, Message: "no token callback (SASL.Token)"}
	}
	if v, err := c.VersionFor(17); err != nil {
		return 0, fmt.Errorf("kwire conn: SASL: %w", err)
	} else if v < 1 {
		return 0, &AuthError{Mechanism: mech, Message: "the broker only knows SaslHandshake v0 (unframed tokens, before Kafka 1.0), which kwire does not speak"}
	}
	hs := codec.NewSaslHandshakeRequest()
	hs.Mechanism = mech
	resp, err := c.Do(ctx, hs)
	if err != nil {
		return 0, fmt.Errorf("kwire conn: SASL handshake: %w", err)
	}
	if hr := resp.(*codec.SaslHandshakeResponse); hr.ErrorCode != 0 {
		msg := "the broker enables " + strings.Join(hr.Mechanisms, ", ")
		if len(hr.Mechanisms) == 0 {
			msg = "the broker enables no SASL mechanism on this listener"
		}
		return 0, &AuthError{Mechanism: mech, Code: kerr.Code(hr.ErrorCode), Message: msg}
	}
	switch {
	case mech == "PLAIN":
		token := append(append(append([]byte{0}, cfg.Username...), 0), cfg.Password...)
		ar, err := c.saslStep(ctx, mech, token)
		if err != nil {
			return 0, err
		}
		return lifetime(ar), nil
	case mech == "OAUTHBEARER":
		return c.oauthBearer(ctx, cfg)
	default:
		return c.scram(ctx, mech, h, cfg.Username, cfg.Password)
	}
}

func lifetime(ar *codec.SaslAuthenticateResponse) time.Duration {
	return time.Duration(ar.SessionLifetimeMs) * time.Millisecond
}

// oauthBearer sends RFC 7628's client response: the gs2 header, then auth=Bearer <token>
// and the extensions, each ended by 0x01. A broker that refuses the token answers with a
// JSON error challenge, which the client acknowledges with 0x01 before the broker fails
// the exchange with its message.
func (c *Conn) oauthBearer(ctx context.Context, cfg *SASL) (time.Duration, error) {
	const mech = "OAUTHBEARER"
	token, err := cfg.Token(ctx)
	if err != nil {
		return 0, &AuthError{Mechanism: mech, Message: "the token callback failed: " + err.Error()}
	}
	token = strings.TrimPrefix(token, "Bearer ")
	if token == "" || strings.ContainsAny(token, "\x01 ") {
		return 0, &AuthError{Mechanism: mech, Message: "the token callback returned an empty or malformed token"}
	}
	msg := []byte("n,,\x01auth=Bearer " + token + "\x01")
	keys := make([]string, 0, len(cfg.Extensions))
	for k := range cfg.Extensions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		msg = append(msg, k+"="+cfg.Extensions[k]+"\x01"...)
	}
	msg = append(msg, 1)
	ar, err := c.saslStep(ctx, mech, msg)
	if err != nil {
		return 0, err
	}
	if len(ar.AuthBytes) == 0 {
		return lifetime(ar), nil
	}
	challenge := string(ar.AuthBytes)
	_, err = c.saslStep(ctx, mech, []byte{1})
	var ae *AuthError
	if errors.As(err, &ae) {
		ae.Message = strings.TrimSpace(ae.Message + " (broker challenge " + challenge + ")")
		return 0, ae
	}
	if err != nil {
		return 0, err
	}
	return 0, &AuthError{Mechanism: mech, Message: "the broker refused the token: " + challenge}
}

// saslStep sends one SaslAuthenticate token and returns the broker's answer.
func (c *Conn) saslStep(ctx context.Context, mech string, token []byte) (*codec.SaslAuthenticateResponse, error) {
	req := codec.NewSaslAuthenticateRequest()
	req.AuthBytes = token
	c.saslAuthenticates.Add(1)
	c.mu.Lock()
	c.authSent = time.Now() // the broker's session starts after this: the lifetime counts from here
	c.mu.Unlock()
	resp, err := c.Do(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("kwire conn: SASL %s: %w", mech, err)
	}
	ar := resp.(*codec.SaslAuthenticateResponse)
	if ar.ErrorCode != 0 {
		msg := ""
		if ar.ErrorMessage != nil {
			msg = *ar.ErrorMessage
		}
		return nil, &AuthError{Mechanism: mech, Code: kerr.Code(ar.ErrorCode), Message: msg}
	}
	return ar, nil
}

// reauthDelay is when to re-authenticate a session of the given lifetime: at a random
// point between 85% and 95% of it, as Kafka's Java client does, but at least a second
// before it ends (and not before its middle). The requests on the wire are answered
// before the exchange starts, and a broker closes a connection whose session has
// expired on its next request, the re-authentication's own included: 5-15% of a
// lifetime of a few seconds is too little margin on a busy host or a slow network.
func reauthDelay(life time.Duration) time.Duration {
	d := time.Duration(float64(life) * (0.85 + 0.10*mrand.Float64()))
	return min(d, max(life-reauthMargin, life/2))
}

// reauthMargin is the least time left on a session when its re-authentication starts.
const reauthMargin = time.Second

// scheduleReauth starts the goroutine that re-authenticates after reauthDelay(life).
func (c *Conn) scheduleReauth(life time.Duration) {
	c.mu.Lock()
	c.lifetime = life
	sent := c.authSent
	c.mu.Unlock()
	if life <= 0 || c.opts.noReauth {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		// Counted from when the last SaslAuthenticate went out, not from its answer: a
		// slow answer must not eat into the margin before the broker's deadline.
		t := time.NewTimer(max(reauthDelay(life)-time.Since(sent), 0))
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.closed:
			return
		}
		c.reauthMu.Lock()
		if c.reauthStopped {
			c.reauthMu.Unlock()
			return
		}
		next, err := c.reauthenticate()
		if err == nil {
			c.reauths.Add(1)
		}
		c.reauthMu.Unlock()
		if err != nil {
			c.die(fmt.Errorf("re-authentication: %w", err))
			return
		}
		c.scheduleReauth(next)
	}()
}

// stopReauth waits for a re-authentication in progress to end and starts no more.
func (c *Conn) stopReauth() {
	c.reauthMu.Lock()
	c.reauthStopped = true
	c.reauthMu.Unlock()
}

// reauthenticate holds new requests at the gate, waits until every request on the wire
// is answered, runs the handshake and the exchange again on the same connection, and
// opens the gate. Requests keep their order: the held ones are sent after it, in the
// order they arrived at the gate.
func (c *Conn) reauthenticate() (time.Duration, error) {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return 0, c.err
	}
	gate := make(chan struct{})
	c.gate = gate
	var idle chan struct{}
	if len(c.calls) > 0 {
		idle = make(chan struct{})
		c.idle = idle
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.gate, c.idle = nil, nil
		c.mu.Unlock()
		close(gate)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), ReauthTimeout)
	defer cancel()
	if idle != nil {
		select {
		case <-idle:
		case <-c.closed:
			return 0, c.err
		case <-ctx.Done():
			return 0, errors.New("requests in flight were not answered within " + ReauthTimeout.String())
		}
	}
	return c.authenticate(ctx, c.opts.sasl)
}

// scram runs RFC 5802's exchange: client-first, server-first, client-final with the
// proof, server-final whose signature the client checks.
func (c *Conn) scram(ctx context.Context, mech string, h func() hash.Hash, user, password string) (time.Duration, error) {
	var nb [24]byte
	if _, err := rand.Read(nb[:]); err != nil {
		return 0, err
	}
	nonce := base64.RawStdEncoding.EncodeToString(nb[:])
	clientFirstBare := "n=" + scramName(user) + ",r=" + nonce
	first, err := c.saslStep(ctx, mech, []byte("n,,"+clientFirstBare))
	if err != nil {
		return 0, err
	}
	serverFirst := first.AuthBytes
	clientFinal, serverSig, err := scramFinal(h, clientFirstBare, nonce, password, serverFirst)
	if err != nil {
		return 0, &AuthError{Mechanism: mech, Message: err.Error()}
	}
	final, err := c.saslStep(ctx, mech, []byte(clientFinal))
	if err != nil {
		return 0, err
	}
	fattrs, err := scramAttrs(final.AuthBytes)
	if err != nil {
		return 0, &AuthError{Mechanism: mech, Message: "server-final message: " + err.Error()}
	}
	if e, ok := fattrs["e"]; ok {
		return 0, &AuthError{Mechanism: mech, Message: "server error " + e}
	}
	got, err := base64.StdEncoding.DecodeString(fattrs["v"])
	if err != nil || !hmac.Equal(got, serverSig) {
		return 0, &AuthError{Mechanism: mech, Message: "the server's signature does not verify: it does not know the password"}
	}
	return lifetime(final), nil
}

// scramFinal computes the client-final message answering serverFirst, and the server
// signature the server-final message must carry.
func scramFinal(h func() hash.Hash, clientFirstBare, nonce, password string, serverFirst []byte) (string, []byte, error) {
	attrs, err := scramAttrs(serverFirst)
	if err != nil {
		return "", nil, fmt.Errorf("server-first message: %w", err)
	}
	if e, ok := attrs["e"]; ok {
		return "", nil, errors.New("server error " + e)
	}
	serverNonce, salt64, iter64 := attrs["r"], attrs["s"], attrs["i"]
	if !strings.HasPrefix(serverNonce, nonce) || len(serverNonce) == len(nonce) {
		return "", nil, errors.New("the server nonce does not extend the client's")
	}
	salt, err := base64.StdEncoding.DecodeString(salt64)
	if err != nil || len(salt) == 0 {
		return "", nil, errors.New("the server sent no valid salt")
	}
	iter, err := strconv.Atoi(iter64)
	if err != nil || iter < scramMinIterations {
		return "", nil, errors.New("iteration count " + strconv.Quote(iter64) + " (at least 4096 needed)")
	}
	salted, err := pbkdf2.Key(h, password, salt, iter, h().Size())
	if err != nil {
		return "", nil, fmt.Errorf("PBKDF2: %w", err)
	}
	clientKey := hmacSum(h, salted, []byte("Client Key"))
	storedKey := hashSum(h, clientKey)
	finalNoProof := "c=biws,r=" + serverNonce // biws: base64 of the gs2 header "n,,"
	authMessage := []byte(clientFirstBare + "," + string(serverFirst) + "," + finalNoProof)
	signature := hmacSum(h, storedKey, authMessage)
	proof := make([]byte, len(clientKey))
	for i := range proof {
		proof[i] = clientKey[i] ^ signature[i]
	}
	serverSig := hmacSum(h, hmacSum(h, salted, []byte("Server Key")), authMessage)
	return finalNoProof + ",p=" + base64.StdEncoding.EncodeToString(proof), serverSig, nil
}

// scramName escapes a user name for SCRAM: "=" as "=3D", "," as "=2C".
func scramName(s string) string {
	return strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s)
}

// scramAttrs splits "k=v,k=v" into a map; it refuses mandatory extensions ("m=").
func scramAttrs(msg []byte) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range bytes.Split(msg, []byte(",")) {
		if len(part) < 2 || part[1] != '=' {
			return nil, fmt.Errorf("malformed attribute %q", part)
		}
		k := string(part[:1])
		if k == "m" {
			return nil, errors.New("mandatory extension not supported")
		}
		out[k] = string(part[2:])
	}
	return out, nil
}

func hmacSum(h func() hash.Hash, key, msg []byte) []byte {
	m := hmac.New(h, key)
	m.Write(msg)
	return m.Sum(nil)
}

func hashSum(h func() hash.Hash, b []byte) []byte {
	x := h()
	x.Write(b)
	return x.Sum(nil)
}
