package snapstore

import (
	"maps"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
)

// keystoneSecret is Gardener's OpenStack backup secret with a user and password.
func keystoneSecret() map[string]string {
	return map[string]string{
		"authURL": "https://keystone.example.com/v3\n", "domainName": "dom", "tenantName": "proj", "region": " eu-de-1 ",
		"username": "etcd", "password": "secret", "bucketName": "bkp-from-secret",
	}
}

func without(m map[string]string, keys ...string) map[string]string {
	out := maps.Clone(m)
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

func with(m map[string]string, kv ...string) map[string]string {
	out := maps.Clone(m)
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func TestSwiftConfigSelectsAuthentication(t *testing.T) {
	v1 := map[string]string{"authURL": "http://swift.example.com:8080/auth/v1.0", "username": "acct:user", "password": "key"}
	appCred := with(without(keystoneSecret(), "username", "password"), "applicationCredentialID", "ac-id", "applicationCredentialName", "ac-name", "applicationCredentialSecret", "ac-secret")
	for name, tc := range map[string]struct {
		secret map[string]string
		auth   swiftAuth
		want   gophercloud.AuthOptions // Keystone only
	}{
		"TempAuth":                       {secret: v1, auth: swiftAuthV1},
		"TempAuth with a trailing slash": {secret: with(v1, "authURL", "http://swift.example.com:8080/auth/v1.0/"), auth: swiftAuthV1},
		"Keystone v3 password": {secret: keystoneSecret(), auth: swiftAuthKeystoneV3, want: gophercloud.AuthOptions{
			IdentityEndpoint: "https://keystone.example.com/v3", Username: "etcd", Password: "secret", TenantName: "proj", DomainName: "dom", AllowReauth: true}},
		"Keystone unversioned is v3 (discovered)": {secret: with(keystoneSecret(), "authURL", "https://keystone.example.com:5000"), auth: swiftAuthKeystoneV3, want: gophercloud.AuthOptions{
			IdentityEndpoint: "https://keystone.example.com:5000", Username: "etcd", Password: "secret", TenantName: "proj", DomainName: "dom", AllowReauth: true}},
		"Keystone v2 has no domains": {secret: with(without(keystoneSecret(), "domainName"), "authURL", "https://keystone.example.com/v2.0"), auth: swiftAuthKeystoneV2, want: gophercloud.AuthOptions{
			IdentityEndpoint: "https://keystone.example.com/v2.0", Username: "etcd", Password: "secret", TenantName: "proj", AllowReauth: true}},
		"application credential by ID (as Gardener writes it)": {secret: appCred, auth: swiftAuthKeystoneV3, want: gophercloud.AuthOptions{
			IdentityEndpoint: "https://keystone.example.com/v3", ApplicationCredentialID: "ac-id", ApplicationCredentialName: "ac-name", ApplicationCredentialSecret: "ac-secret", AllowReauth: true}},
		"application credential by name and user": {secret: with(without(appCred, "applicationCredentialID"), "username", "etcd"), auth: swiftAuthKeystoneV3, want: gophercloud.AuthOptions{
			IdentityEndpoint: "https://keystone.example.com/v3", Username: "etcd", DomainName: "dom", ApplicationCredentialName: "ac-name", ApplicationCredentialSecret: "ac-secret", AllowReauth: true}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeSecretDir(t, tc.secret)
			c, err := swiftConfigFrom(Config{Container: "bkp"}, secretDir{dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if c.auth != tc.auth || c.container != "bkp" {
				t.Fatalf("auth %q, container %q; want %q, bkp", c.auth, c.container, tc.auth)
			}
			if tc.auth != swiftAuthV1 {
				if got := c.keystoneOptions(); got != tc.want {
					t.Fatalf("Keystone options\n got %+v\nwant %+v", got, tc.want)
				}
			}
		})
	}
}

func TestSwiftConfigRegionContainerAndEndpoint(t *testing.T) {
	dir := writeSecretDir(t, keystoneSecret())
	c, err := swiftConfigFrom(Config{SecretDir: dir}, secretDir{dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if eo := c.endpointOpts(); eo.Region != "eu-de-1" || eo.Availability != gophercloud.AvailabilityPublic {
		t.Fatalf("endpoint options %+v, want region eu-de-1 of the public interface", eo)
	}
	if c.container != "bkp-from-secret" || c.endpoint != "" {
		t.Fatalf("container %q endpoint %q, want the secret's bucketName and the catalog's endpoint", c.container, c.endpoint)
	}
	c, err = swiftConfigFrom(Config{Container: "flag", EndpointOverride: "https://swift.internal/v1/AUTH_p"}, secretDir{dir: writeSecretDir(t, without(keystoneSecret(), "region"))})
	if err != nil || c.container != "flag" || c.endpoint != "https://swift.internal/v1/AUTH_p" || c.endpointOpts().Region != "" {
		t.Fatalf("flags: %+v, %v", c, err)
	}
}

func TestSwiftConfigErrorsNameKeyAndDirectory(t *testing.T) {
	appCred := with(without(keystoneSecret(), "username", "password"), "applicationCredentialID", "ac-id", "applicationCredentialSecret", "ac-secret")
	v1 := map[string]string{"authURL": "http://swift.example.com/auth/v1.0", "username": "a:u", "password": "k"}
	for name, tc := range map[string]struct {
		secret map[string]string
		want   string
	}{
		"no authURL":                    {without(keystoneSecret(), "authURL"), `"authURL"`},
		"authURL not a URL":             {with(keystoneSecret(), "authURL", "keystone:5000"), `"authURL"`},
		"v3 without domainName":         {without(keystoneSecret(), "domainName"), `"domainName"`},
		"v3 without tenantName":         {without(keystoneSecret(), "tenantName"), `"tenantName"`},
		"v3 without password":           {without(keystoneSecret(), "password"), `"password"`},
		"v2 without tenantName":         {with(without(keystoneSecret(), "tenantName"), "authURL", "https://k/v2.0"), `"tenantName"`},
		"TempAuth without password":     {without(v1, "password"), `"password"`},
		"TempAuth without username":     {without(v1, "username"), `"username"`},
		"app credential without secret": {without(appCred, "applicationCredentialSecret"), `"applicationCredentialSecret"`},
		"app credential by name without user": {with(without(appCred, "applicationCredentialID"), "applicationCredentialName", "n"),
			`"username"`},
		"app credential and password":  {with(appCred, "password", "p"), `"password"`},
		"app credential with TempAuth": {with(v1, "applicationCredentialID", "x", "applicationCredentialSecret", "y", "password", ""), "only Keystone v3"},
		"insecure not a boolean":       {with(keystoneSecret(), "insecure", "yes"), `"insecure"`},
		"caCert not PEM":               {with(keystoneSecret(), "caCert", "not a certificate"), `"caCert"`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := writeSecretDir(t, tc.secret)
			_, err := swiftConfigFrom(Config{Container: "bkp"}, secretDir{dir: dir})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("err = %v, want one naming %s and %s", err, tc.want, dir)
			}
		})
	}
	if _, err := swiftConfigFrom(Config{Container: "bkp"}, secretDir{}); err == nil || !strings.Contains(err.Error(), "Swift") {
		t.Fatalf("no secret directory: err = %v", err)
	}
	if _, err := swiftConfigFrom(Config{}, secretDir{dir: writeSecretDir(t, without(keystoneSecret(), "bucketName"))}); err == nil || !strings.Contains(err.Error(), "bucketName") {
		t.Fatalf("no container: err = %v", err)
	}
}

// The segment size grows so that Swift's 1000 segments hold an 8 GiB database with the default chunk,
// and never exceeds Swift's 5 GiB object limit.
func TestSwiftSegmentSize(t *testing.T) {
	if got := swiftSegmentSize(DefaultChunkSize, 0); got != DefaultChunkSize {
		t.Fatalf("first segment %d, want the chunk size", got)
	}
	if got := swiftSegmentSize(DefaultChunkSize, swiftSegmentsPerDoubling); got != 2*DefaultChunkSize {
		t.Fatalf("segment %d is %d bytes, want twice the chunk", swiftSegmentsPerDoubling, got)
	}
	var capacity int64
	for n := range swiftMaxSegments {
		capacity += int64(swiftSegmentSize(DefaultChunkSize, n))
	}
	if capacity < 8<<30 {
		t.Fatalf("%d segments hold %d bytes, less than etcd's 8 GiB", swiftMaxSegments, capacity)
	}
	if got := swiftSegmentSize(4<<30, swiftMaxSegments-1); got != swiftMaxSegmentSize {
		t.Fatalf("huge chunks: last segment %d bytes, want Swift's limit %d", got, swiftMaxSegmentSize)
	}
}
