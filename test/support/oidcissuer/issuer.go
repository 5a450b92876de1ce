// Package oidcissuer is a minimal OpenID provider for tests of workload identity: a discovery document, a
// JWKS and tokens signed with its key, as a cluster's service account issuer serves them. MinIO's STS
// (test/support/minioserver) verifies AssumeRoleWithWebIdentity tokens against it.
package oidcissuer

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// keyID names the issuer's one signing key in its JWKS and in the tokens' headers.
const keyID = "test"

// Issuer is a running OpenID provider.
type Issuer struct {
	// URL is the issuer (http://host:port), also the tokens' iss claim.
	URL string
	// Key signs the tokens the JWKS vouches for.
	Key *rsa.PrivateKey

	srv  *http.Server
	done chan struct{}
}

// Start serves an issuer on 127.0.0.1 for t and stops it at the end of the test.
func Start(t testing.TB) *Issuer {
	t.Helper()
	iss, err := Listen("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = iss.Close() })
	return iss
}

// Listen serves an issuer on a free port of host (an address of this machine: 127.0.0.1, or a bridge
// address when servers elsewhere must reach it) until Close.
func Listen(host string) (*Issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("OpenID issuer: %w", err)
	}
	iss := &Issuer{URL: "http://" + l.Addr().String(), Key: key, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss.URL, "jwks_uri": iss.URL + "/keys",
			"authorization_endpoint": iss.URL + "/auth", "token_endpoint": iss.URL + "/token",
			"response_types_supported": []string{"id_token"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: keyID, Algorithm: "RS256", Use: "sig"}}})
	})
	iss.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(iss.done)
		_ = iss.srv.Serve(l)
	}()
	return iss, nil
}

// ConfigURL is the discovery document's URL, which MinIO is configured with.
func (iss *Issuer) ConfigURL() string { return iss.URL + "/.well-known/openid-configuration" }

// Token signs a token of subject for audience, valid from a minute ago until expiry from now (negative:
// already expired). A key other than Key makes a token the issuer does not vouch for.
func (iss *Issuer) Token(key *rsa.PrivateKey, subject, audience string, expiry time.Duration) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", keyID))
	if err != nil {
		return "", err
	}
	now := time.Now()
	return jwt.Signed(signer).Claims(jwt.Claims{Issuer: iss.URL, Subject: subject, Audience: jwt.Audience{audience},
		IssuedAt: jwt.NewNumericDate(now.Add(-time.Minute)), NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)),
		Expiry: jwt.NewNumericDate(now.Add(expiry))}).Serialize()
}

// Close stops serving.
func (iss *Issuer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := iss.srv.Shutdown(ctx)
	<-iss.done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
