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
	"strconv"
	"strings"

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

type saslConfig struct {
	mechanism, user, password string
}

// scramMinIterations is the lowest iteration count accepted from a server (RFC 7677's
// minimum, which Kafka enforces too).
const scramMinIterations = 4096

// authenticate runs SaslHandshake v1 and the mechanism's SaslAuthenticate exchange.
func (c *Conn) authenticate(ctx context.Context, cfg *saslConfig) error {
	mech := strings.ToUpper(cfg.mechanism)
	var h func() hash.Hash
	switch mech {
	case "PLAIN":
	case "SCRAM-SHA-256":
		h = sha256.New
	case "SCRAM-SHA-512":
		h = sha512.New
	default:
		return &AuthError{Mechanism: cfg.mechanism, Message: "kwire supports PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512"}
	}
	if v, err := c.VersionFor(17); err != nil {
		return fmt.Errorf("kwire conn: SASL: %w", err)
	} else if v < 1 {
		return &AuthError{Mechanism: mech, Message: "the broker only knows SaslHandshake v0 (no SaslAuthenticate)"}
	}
	hs := codec.NewSaslHandshakeRequest()
	hs.Mechanism = mech
	resp, err := c.Do(ctx, hs)
	if err != nil {
		return fmt.Errorf("kwire conn: SASL handshake: %w", err)
	}
	if hr := resp.(*codec.SaslHandshakeResponse); hr.ErrorCode != 0 {
		return &AuthError{Mechanism: mech, Code: kerr.Code(hr.ErrorCode),
			Message: "the broker enables " + strings.Join(hr.Mechanisms, ", ")}
	}
	if h == nil {
		token := append(append(append([]byte{0}, cfg.user...), 0), cfg.password...)
		_, err := c.saslStep(ctx, mech, token)
		return err
	}
	return c.scram(ctx, mech, h, cfg.user, cfg.password)
}

// saslStep sends one SaslAuthenticate token and returns the broker's token.
func (c *Conn) saslStep(ctx context.Context, mech string, token []byte) ([]byte, error) {
	req := codec.NewSaslAuthenticateRequest()
	req.AuthBytes = token
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
	return ar.AuthBytes, nil
}

// scram runs RFC 5802's exchange: client-first, server-first, client-final with the
// proof, server-final whose signature the client checks.
func (c *Conn) scram(ctx context.Context, mech string, h func() hash.Hash, user, password string) error {
	var nb [24]byte
	if _, err := rand.Read(nb[:]); err != nil {
		return err
	}
	nonce := base64.RawStdEncoding.EncodeToString(nb[:])
	clientFirstBare := "n=" + scramName(user) + ",r=" + nonce
	serverFirst, err := c.saslStep(ctx, mech, []byte("n,,"+clientFirstBare))
	if err != nil {
		return err
	}
	clientFinal, serverSig, err := scramFinal(h, clientFirstBare, nonce, password, serverFirst)
	if err != nil {
		return &AuthError{Mechanism: mech, Message: err.Error()}
	}
	serverFinal, err := c.saslStep(ctx, mech, []byte(clientFinal))
	if err != nil {
		return err
	}
	fattrs, err := scramAttrs(serverFinal)
	if err != nil {
		return &AuthError{Mechanism: mech, Message: "server-final message: " + err.Error()}
	}
	if e, ok := fattrs["e"]; ok {
		return &AuthError{Mechanism: mech, Message: "server error " + e}
	}
	got, err := base64.StdEncoding.DecodeString(fattrs["v"])
	if err != nil || !hmac.Equal(got, serverSig) {
		return &AuthError{Mechanism: mech, Message: "the server's signature does not verify: it does not know the password"}
	}
	return nil
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
