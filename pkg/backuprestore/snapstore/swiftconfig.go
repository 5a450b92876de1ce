package snapstore

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// Keys of the Swift backup secret: Gardener's OpenStack backup secret, as the upstream sidecar reads it
// (authURL, domainName, tenantName, region, username/password or the applicationCredential* keys), plus
// the TLS keys of Gardener's OpenStack credentials (insecure, caCert).
const (
	swiftKeyAuthURL       = "authURL"
	swiftKeyDomainName    = "domainName"
	swiftKeyTenantName    = "tenantName"
	swiftKeyRegion        = "region"
	swiftKeyUsername      = "username"
	swiftKeyPassword      = "password"
	swiftKeyAppCredID     = "applicationCredentialID"
	swiftKeyAppCredName   = "applicationCredentialName"
	swiftKeyAppCredSecret = "applicationCredentialSecret"
	swiftKeyInsecure      = "insecure"
	swiftKeyCACert        = "caCert"
)

// swiftAuth is how the store obtains its token and the object-store URL.
type swiftAuth string

const (
	// swiftAuthV1 is Swift's own v1 authentication (TempAuth, SwAuth): GET <authURL> with the user
	// ("account:user") and key, for Swift clusters without Keystone. Chosen when authURL ends in /auth/v1.0.
	swiftAuthV1 swiftAuth = "v1"
	// swiftAuthKeystoneV2 is Keystone's v2.0 API (authURL ending in /v2.0): user, password and tenant, no domains.
	swiftAuthKeystoneV2 swiftAuth = "Keystone v2.0"
	// swiftAuthKeystoneV3 is Keystone's v3 API (any other authURL; gophercloud discovers the version of an
	// unversioned one): a user of a domain scoped to a tenant (project), or an application credential.
	swiftAuthKeystoneV3 swiftAuth = "Keystone v3"
)

// swiftV1AuthPath is the path of Swift's v1 authentication endpoint.
const swiftV1AuthPath = "/auth/v1.0"

// swiftConfig is the resolved configuration of a Swift store.
type swiftConfig struct {
	container string
	auth      swiftAuth
	authURL   string
	region    string // selects the object-store endpoint of Keystone's catalog; empty: the first one
	username  string // with v1: "account:user"
	password  string // with v1: the key
	// Keystone only.
	domainName, tenantName                string
	appCredID, appCredName, appCredSecret string
	// endpoint replaces the object-store URL of the catalog or of the v1 authentication.
	endpoint string
	insecure bool
	caCert   []byte // PEM, added to the system roots
}

func swiftConfigFrom(cfg Config, secret secretDir) (swiftConfig, error) {
	if err := secret.checkDir(ProviderSwift); err != nil {
		return swiftConfig{}, err
	}
	var c swiftConfig
	var err error
	if c.container, err = containerFrom(cfg, secret, ProviderSwift, ""); err != nil {
		return swiftConfig{}, err
	}
	if c.authURL, err = secret.required(swiftKeyAuthURL); err != nil {
		return swiftConfig{}, err
	}
	u, err := url.Parse(c.authURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return swiftConfig{}, fmt.Errorf("key %q of the backup secret in %s: %q is not an http(s) URL", swiftKeyAuthURL, secret.dir, c.authURL)
	}
	optional := map[string]*string{
		swiftKeyRegion: &c.region, swiftKeyDomainName: &c.domainName, swiftKeyTenantName: &c.tenantName,
		swiftKeyUsername: &c.username, swiftKeyPassword: &c.password,
		swiftKeyAppCredID: &c.appCredID, swiftKeyAppCredName: &c.appCredName, swiftKeyAppCredSecret: &c.appCredSecret,
	}
	for key, dst := range optional {
		if *dst, _, err = secret.optional(key); err != nil {
			return swiftConfig{}, err
		}
	}
	switch path := strings.TrimSuffix(u.Path, "/"); {
	case strings.HasSuffix(path, swiftV1AuthPath):
		c.auth = swiftAuthV1
	case strings.HasSuffix(path, "/v2.0"):
		c.auth = swiftAuthKeystoneV2
	default:
		c.auth = swiftAuthKeystoneV3
	}
	if err := c.checkCredentials(secret); err != nil {
		return swiftConfig{}, err
	}
	c.endpoint = cfg.EndpointOverride
	if c.insecure, err = secret.boolean(swiftKeyInsecure); err != nil {
		return swiftConfig{}, err
	}
	if c.caCert, _, err = secret.raw(swiftKeyCACert); err != nil {
		return swiftConfig{}, err
	}
	if len(c.caCert) > 0 {
		if _, err := c.rootCAs(); err != nil {
			return swiftConfig{}, fmt.Errorf("key %q of the backup secret in %s: %w", swiftKeyCACert, secret.dir, err)
		}
	}
	return c, nil
}

// checkCredentials requires the keys of the selected authentication: username and password (v1, Keystone
// v2 with tenantName, Keystone v3 with tenantName and domainName), or for Keystone v3 an application
// credential (its ID, or its name with the owner's username and domainName, plus the secret). Password and
// application credential together are refused, as by the upstream sidecar: which one wins would be a guess.
func (c swiftConfig) checkCredentials(secret secretDir) error {
	appCred := c.appCredID != "" || c.appCredName != "" || c.appCredSecret != ""
	need := func(keys ...string) error {
		values := map[string]string{
			swiftKeyUsername: c.username, swiftKeyPassword: c.password, swiftKeyTenantName: c.tenantName,
			swiftKeyDomainName: c.domainName, swiftKeyAppCredSecret: c.appCredSecret,
		}
		for _, k := range keys {
			if values[k] == "" {
				return fmt.Errorf("backup secret in %s lacks the required key %q (%s authentication with %s %s)",
					secret.dir, k, c.auth, swiftKeyAuthURL, c.authURL)
			}
		}
		return nil
	}
	switch {
	case appCred && c.password != "":
		return fmt.Errorf("backup secret in %s has both %q and application credential keys: keep one way to authenticate", secret.dir, swiftKeyPassword)
	case appCred && c.auth != swiftAuthKeystoneV3:
		return fmt.Errorf("backup secret in %s has application credential keys, which only Keystone v3 knows (%s is %s)",
			secret.dir, swiftKeyAuthURL, c.auth)
	case appCred && c.appCredID == "" && c.appCredName == "":
		return fmt.Errorf("backup secret in %s lacks the required key %q (or %q)", secret.dir, swiftKeyAppCredID, swiftKeyAppCredName)
	case appCred && c.appCredID == "":
		// A credential named rather than identified belongs to a user, who is named within a domain.
		return need(swiftKeyAppCredSecret, swiftKeyUsername, swiftKeyDomainName)
	case appCred:
		return need(swiftKeyAppCredSecret)
	case c.auth == swiftAuthV1:
		return need(swiftKeyUsername, swiftKeyPassword)
	case c.auth == swiftAuthKeystoneV2:
		return need(swiftKeyUsername, swiftKeyPassword, swiftKeyTenantName)
	default:
		return need(swiftKeyUsername, swiftKeyPassword, swiftKeyTenantName, swiftKeyDomainName)
	}
}

// keystoneOptions are the Keystone credentials. Tokens expire; AllowReauth lets gophercloud log in again
// with them when a request is refused with 401.
func (c swiftConfig) keystoneOptions() gophercloud.AuthOptions {
	opts := gophercloud.AuthOptions{
		IdentityEndpoint: c.authURL,
		Username:         c.username,
		Password:         c.password,
		TenantName:       c.tenantName,
		AllowReauth:      true,
	}
	if c.auth == swiftAuthKeystoneV3 {
		opts.DomainName = c.domainName
		opts.ApplicationCredentialID = c.appCredID
		opts.ApplicationCredentialName = c.appCredName
		opts.ApplicationCredentialSecret = c.appCredSecret
		if c.appCredID != "" || c.appCredName != "" {
			// An application credential is scoped already; Keystone refuses a second scope.
			opts.TenantName = ""
			if c.appCredID != "" {
				opts.Username, opts.DomainName = "", ""
			}
		}
	}
	return opts
}

// endpointOpts selects the object-store endpoint of Keystone's catalog.
func (c swiftConfig) endpointOpts() gophercloud.EndpointOpts {
	return gophercloud.EndpointOpts{Region: c.region, Availability: gophercloud.AvailabilityPublic}
}

// rootCAs is the system pool plus the CA of the secret.
func (c swiftConfig) rootCAs() (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(c.caCert) {
		return nil, fmt.Errorf("no PEM certificate found")
	}
	return pool, nil
}

// swiftRequestTimeout bounds the wait for a response's headers (not the streaming of a body). It is
// generous because Swift answers a manifest upload only after checking every segment.
const swiftRequestTimeout = 5 * time.Minute

func (c swiftConfig) httpClient() (http.Client, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.insecure} //nolint:gosec // opt-in via the secret
	if len(c.caCert) > 0 {
		pool, err := c.rootCAs()
		if err != nil {
			return http.Client{}, err
		}
		tlsConfig.RootCAs = pool
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig
	transport.ResponseHeaderTimeout = swiftRequestTimeout
	return http.Client{Transport: transport}, nil
}
