package backupsecret

import (
	"fmt"
	"strings"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Requirement is one thing a secret must hold: every key of one of its alternatives, with data. Most
// requirements are a single key; Swift accepts a password or an application credential.
type Requirement struct {
	// AnyOf are the alternative key sets; never empty.
	AnyOf [][]string
}

// Keys makes one single-key requirement per key.
func Keys(keys ...string) []Requirement {
	reqs := make([]Requirement, 0, len(keys))
	for _, k := range keys {
		reqs = append(reqs, Requirement{AnyOf: [][]string{{k}}})
	}
	return reqs
}

// OneOf is a requirement met by any one of the key sets.
func OneOf(alternatives ...[]string) Requirement { return Requirement{AnyOf: alternatives} }

// MetBy tells whether has reports data for every key of one alternative.
func (r Requirement) MetBy(has func(key string) bool) bool {
	for _, keys := range r.AnyOf {
		all := true
		for _, k := range keys {
			all = all && has(k)
		}
		if all {
			return true
		}
	}
	return false
}

// String names the keys: `"region"`, or for alternatives
// `"username" and "password" or "applicationCredentialID" and "applicationCredentialSecret"` with each
// alternative in parentheses when it has more than one key.
func (r Requirement) String() string {
	alts := make([]string, 0, len(r.AnyOf))
	for _, keys := range r.AnyOf {
		quoted := make([]string, len(keys))
		for i, k := range keys {
			quoted[i] = fmt.Sprintf("%q", k)
		}
		alt := strings.Join(quoted, " and ")
		if len(r.AnyOf) > 1 && len(keys) > 1 {
			alt = "(" + alt + ")"
		}
		alts = append(alts, alt)
	}
	return strings.Join(alts, " or ")
}

// Unmet returns the requirements has does not meet, in order.
func Unmet(reqs []Requirement, has func(key string) bool) []Requirement {
	var unmet []Requirement
	for _, r := range reqs {
		if !r.MetBy(has) {
			unmet = append(unmet, r)
		}
	}
	return unmet
}

// InData adapts a Secret's data: a key is present when it has a non-empty value.
func InData(data map[string][]byte) func(key string) bool {
	return func(key string) bool { return len(data[key]) > 0 }
}

// Describe joins requirements for a message: `"accessKeyID", "region"`.
func Describe(reqs []Requirement) string {
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// Required lists what the backup secret of a provider (name or alias) must hold for the sidecar to open
// the store; nil for Local (whose hostPath has a default) and for unknown providers. KeyBucketName is not
// included: it is needed only where no container is configured (see RequiredForStore).
func Required(provider druidv1alpha1.StorageProvider) []Requirement {
	canonical, _ := druidv1alpha1.CanonicalStorageProvider(provider)
	switch canonical {
	case druidv1alpha1.StorageProviderS3:
		// Static keys, or workload identity: the role to assume with the token file.
		return append([]Requirement{OneOf([]string{KeyAccessKeyID, KeySecretAccessKey}, []string{KeyRoleARN, KeyToken})}, Keys(KeyRegion)...)
	case druidv1alpha1.StorageProviderABS:
		return Keys(KeyStorageAccount, KeyStorageKey)
	case druidv1alpha1.StorageProviderGCS:
		return Keys(KeyServiceAccount)
	case druidv1alpha1.StorageProviderSwift:
		return append(Keys(KeyAuthURL, KeyDomainName, KeyTenantName, KeyRegion), OneOf(
			[]string{KeyUsername, KeyPassword},
			[]string{KeyApplicationCredentialID, KeyApplicationCredentialSecret},
			[]string{KeyUsername, KeyApplicationCredentialName, KeyApplicationCredentialSecret},
		))
	case druidv1alpha1.StorageProviderOSS:
		return Keys(KeyStorageEndpoint, KeyAccessKeyID, KeyAccessKeySecret)
	case druidv1alpha1.StorageProviderECS:
		return Keys(KeyEndpoint, KeyAccessKeyID, KeySecretAccessKey)
	case druidv1alpha1.StorageProviderOCS:
		return Keys(KeyEndpoint, KeyAccessKeyID, KeySecretAccessKey, KeyRegion)
	}
	return nil
}

// RequiredForStore is what the backup secret of store must hold for the sidecar: Required, except that a
// GCS store with an endpoint override (an emulator) needs no service account, as the sidecar accepts; plus
// KeyBucketName when the store names no container and is not Local (Local falls back to its default
// container), since the sidecar then takes the bucket from the secret.
func RequiredForStore(store *druidv1alpha1.StoreSpec) []Requirement {
	if store == nil || store.Provider == nil {
		return nil
	}
	canonical, _ := druidv1alpha1.CanonicalStorageProvider(*store.Provider)
	var reqs []Requirement
	if canonical != druidv1alpha1.StorageProviderGCS || store.EndpointOverride == nil || *store.EndpointOverride == "" {
		reqs = Required(canonical)
	}
	if (store.Container == nil || *store.Container == "") && canonical != druidv1alpha1.StorageProviderLocal {
		reqs = append(reqs, Keys(KeyBucketName)...)
	}
	return reqs
}
