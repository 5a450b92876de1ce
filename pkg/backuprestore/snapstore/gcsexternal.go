package snapstore

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// A GCS external_account configuration (workload identity) is checked as upstream etcd-backup-restore checks
// it before any token leaves the pod: the secret decides where the subject token is sent and which file is
// read as the token, so only Google's STS, Google's impersonation endpoint and the secret's own token file
// are accepted, and none of the other credential sources (a URL to fetch, a command to run).
var (
	gcsExternalAllowedTokenURLs = []string{"https://sts.googleapis.com/v1/token"}
	gcsImpersonationURLPattern  = regexp.MustCompile(`^https://iamcredentials\.googleapis\.com/v1/projects/-/serviceAccounts/.+:generateAccessToken$`)
	gcsProjectIDPattern         = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
)

const gcsJWTSubjectTokenType = "urn:ietf:params:oauth:token-type:jwt"

// gcsExternalRequiredFields must all be present; gcsExternalOptionalFields may be.
var (
	gcsExternalRequiredFields = []string{"audience", "credential_source", "subject_token_type", "token_url", "type", "universe_domain"}
	gcsExternalOptionalFields = []string{"service_account_impersonation_url"}
)

// gcsExternalAccount is the part of an external_account configuration that is checked.
type gcsExternalAccount struct {
	SubjectTokenType               string `json:"subject_token_type"`
	TokenURL                       string `json:"token_url"`
	ServiceAccountImpersonationURL string `json:"service_account_impersonation_url"`
}

// checkGCSExternalAccount checks an external_account configuration of the secret (see the variables above)
// and the secret's projectID; errors name the key or field.
func checkGCSExternalAccount(doc []byte, secret secretDir) error {
	key := backupsecret.KeyServiceAccount
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(doc, &fields); err != nil {
		return fmt.Errorf("key %q of the backup secret %s: %w", key, secret, err)
	}
	for _, f := range gcsExternalRequiredFields {
		if _, ok := fields[f]; !ok {
			return fmt.Errorf("key %q of the backup secret %s: external_account configuration lacks the field %q", key, secret, f)
		}
	}
	extra := maps.Clone(fields)
	for _, f := range append(slices.Clone(gcsExternalRequiredFields), gcsExternalOptionalFields...) {
		delete(extra, f)
	}
	if len(extra) > 0 {
		return fmt.Errorf("key %q of the backup secret %s: external_account configuration has fields %q, allowed are only %q",
			key, secret, slices.Sorted(maps.Keys(extra)), append(slices.Clone(gcsExternalRequiredFields), gcsExternalOptionalFields...))
	}
	var ea gcsExternalAccount
	if err := json.Unmarshal(doc, &ea); err != nil {
		return fmt.Errorf("key %q of the backup secret %s: %w", key, secret, err)
	}
	if ea.SubjectTokenType != gcsJWTSubjectTokenType {
		return fmt.Errorf("key %q of the backup secret %s: subject_token_type %q, must be %q", key, secret, ea.SubjectTokenType, gcsJWTSubjectTokenType)
	}
	if !slices.Contains(gcsExternalAllowedTokenURLs, ea.TokenURL) {
		return fmt.Errorf("key %q of the backup secret %s: token_url %q is not allowed (allowed: %s)", key, secret, ea.TokenURL, strings.Join(gcsExternalAllowedTokenURLs, ", "))
	}
	if u := ea.ServiceAccountImpersonationURL; u != "" && !gcsImpersonationURLPattern.MatchString(u) {
		return fmt.Errorf("key %q of the backup secret %s: service_account_impersonation_url %q does not match %s", key, secret, u, gcsImpersonationURLPattern)
	}
	var source any
	_ = json.Unmarshal(fields["credential_source"], &source)
	want := map[string]any{"file": secret.path(backupsecret.KeyToken), "format": map[string]any{"type": "text"}}
	if !reflect.DeepEqual(source, want) {
		return fmt.Errorf("key %q of the backup secret %s: credential_source must be the secret's own token file, {\"file\": %q, \"format\": {\"type\": \"text\"}} (is the secret mounted where the configuration expects it?)",
			key, secret, secret.path(backupsecret.KeyToken))
	}
	project, err := secret.required(backupsecret.KeyProjectID)
	if err != nil {
		return err
	}
	if !gcsProjectIDPattern.MatchString(project) {
		return fmt.Errorf("key %q of the backup secret %s: %q is not a project ID (%s)", backupsecret.KeyProjectID, secret, project, gcsProjectIDPattern)
	}
	return nil
}
