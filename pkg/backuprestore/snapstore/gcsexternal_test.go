package snapstore

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	"golang.org/x/oauth2/google"
)

// gcsWorkloadIdentitySecret is a GCS backup secret as Gardener's GCP extension writes it for a workload
// identity, mounted at dir: serviceaccount.json and credentialsConfig hold the same external_account
// configuration, whose subject token is dir/token.
func gcsWorkloadIdentitySecret(t *testing.T, edit func(config map[string]any)) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	config := map[string]any{
		"type":                              "external_account",
		"audience":                          "//iam.googleapis.com/projects/11/locations/global/workloadIdentityPools/pool/providers/shoot",
		"subject_token_type":                "urn:ietf:params:oauth:token-type:jwt",
		"token_url":                         "https://sts.googleapis.com/v1/token",
		"service_account_impersonation_url": "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/etcd@my-project.iam.gserviceaccount.com:generateAccessToken",
		"universe_domain":                   "googleapis.com",
		"credential_source":                 map[string]any{"file": filepath.Join(dir, "token"), "format": map[string]any{"type": "text"}},
	}
	if edit != nil {
		edit(config)
	}
	doc, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	return dir, map[string]string{"serviceaccount.json": string(doc), "credentialsConfig": string(doc),
		"projectID": "my-project", "token": "eyJhbGciOiJSUzI1NiJ9.e30.sig", "bucketName": "bkt"}
}

// writeInto writes secret keys as files into dir (a secret mounted there).
func writeInto(t *testing.T, dir string, keys map[string]string) {
	t.Helper()
	for k, v := range keys {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// The workload-identity secret becomes external_account credentials reading the secret's token file; the
// store opens without reaching Google (the exchange happens at the first request). The exchange itself is
// not exercised: it only talks to Google's STS, which nothing here implements.
func TestGCSWorkloadIdentityConfig(t *testing.T) {
	dir, keys := gcsWorkloadIdentitySecret(t, nil)
	writeInto(t, dir, keys)
	c, err := gcsConfigFrom(Config{}, secretDir{dir: dir})
	if err != nil {
		t.Fatalf("workload identity secret refused: %v", err)
	}
	if c.bucket != "bkt" || c.credentialsType != google.ExternalAccount {
		t.Fatalf("config %+v", c)
	}
	creds, err := c.credentials(t.Context())
	if err != nil || creds.TokenSource == nil {
		t.Fatalf("credentials: %v", err)
	}
	store, err := New(t.Context(), Config{Provider: "gcp", Prefix: "p", SecretDir: dir}, testr.New(t))
	if err != nil {
		t.Fatalf("New GCS store with workload identity: %v", err)
	}
	_ = store.Close()
}

// What the secret decides (where the token goes, which file is read) is held to Google's endpoints and the
// secret's own token file, as upstream etcd-backup-restore holds it; each refusal names what is wrong.
func TestGCSWorkloadIdentityRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		edit   func(map[string]any)
		keys   func(map[string]string)
		reason string
	}{
		"foreign token URL": {edit: func(c map[string]any) { c["token_url"] = "https://attacker.example/token" }, reason: `token_url "https://attacker.example/token" is not allowed`},
		"token file elsewhere": {edit: func(c map[string]any) {
			c["credential_source"] = map[string]any{"file": "/var/.gcp/token", "format": map[string]any{"type": "text"}}
		}, reason: "credential_source must be the secret's own token file"},
		"token from a URL": {edit: func(c map[string]any) { c["credential_source"] = map[string]any{"url": "http://169.254.169.254/token"} }, reason: "credential_source must be"},
		"command credential": {edit: func(c map[string]any) {
			c["credential_source"] = map[string]any{"executable": map[string]any{"command": "/bin/sh"}}
		}, reason: "credential_source must be"},
		"unknown field":         {edit: func(c map[string]any) { c["workforce_pool_user_project"] = "x" }, reason: `fields ["workforce_pool_user_project"]`},
		"missing audience":      {edit: func(c map[string]any) { delete(c, "audience") }, reason: `lacks the field "audience"`},
		"SAML subject token":    {edit: func(c map[string]any) { c["subject_token_type"] = "urn:ietf:params:oauth:token-type:saml2" }, reason: "subject_token_type"},
		"foreign impersonation": {edit: func(c map[string]any) { c["service_account_impersonation_url"] = "https://evil.example/x" }, reason: "service_account_impersonation_url"},
		"no project":            {keys: func(k map[string]string) { delete(k, "projectID") }, reason: `lacks the required key "projectID"`},
		"malformed project":     {keys: func(k map[string]string) { k["projectID"] = "Not_A_Project" }, reason: `key "projectID"`},
		"impersonated account":  {edit: func(c map[string]any) { c["type"] = "impersonated_service_account" }, reason: `credential type "impersonated_service_account"`},
	} {
		t.Run(name, func(t *testing.T) {
			dir, keys := gcsWorkloadIdentitySecret(t, tc.edit)
			keys = maps.Clone(keys)
			if tc.keys != nil {
				tc.keys(keys)
			}
			writeInto(t, dir, keys)
			_, err := gcsConfigFrom(Config{}, secretDir{dir: dir})
			if err == nil || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("err = %v, want one containing %q", err, tc.reason)
			}
		})
	}
}

// Without any backup secret (an Etcd without spec.backup.store.secretRef) the store uses the pod's own
// identity; it must name its bucket, as there is no secret to take bucketName from.
func TestGCSAmbientConfig(t *testing.T) {
	c, err := gcsConfigFrom(Config{Container: "bkt"}, secretDir{})
	if err != nil || !c.ambient || c.bucket != "bkt" {
		t.Fatalf("ambient config: %+v, %v", c, err)
	}
	if _, err := gcsConfigFrom(Config{}, secretDir{}); err == nil || !strings.Contains(err.Error(), "--store-container") {
		t.Fatalf("ambient without container: err = %v", err)
	}
}
