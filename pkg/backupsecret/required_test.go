package backupsecret

import (
	"slices"
	"testing"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func has(keys ...string) func(string) bool {
	return func(k string) bool { return slices.Contains(keys, k) }
}

func TestRequiredByProviderAndAlias(t *testing.T) {
	for provider, want := range map[druidv1alpha1.StorageProvider]string{
		"Local":     "",
		"aws":       `("accessKeyID" and "secretAccessKey") or ("roleARN" and "token"), "region"`,
		"azure":     `"storageAccount", "storageKey"`,
		"gcp":       `"serviceaccount.json"`,
		"alicloud":  `"storageEndpoint", "accessKeyID", "accessKeySecret"`,
		"dell":      `"endpoint", "accessKeyID", "secretAccessKey"`,
		"openshift": `"endpoint", "accessKeyID", "secretAccessKey", "region"`,
		"ftp":       "",
	} {
		if got := Describe(Required(provider)); got != want {
			t.Errorf("Required(%s) = %s, want %s", provider, got, want)
		}
	}
}

// Swift takes a password or an application credential (by ID, or by name with the user).
func TestSwiftAlternatives(t *testing.T) {
	base := []string{KeyAuthURL, KeyDomainName, KeyTenantName, KeyRegion}
	for name, tc := range map[string]struct {
		keys  []string
		unmet string
	}{
		"password":                 {append(slices.Clone(base), KeyUsername, KeyPassword), ""},
		"application credential":   {append(slices.Clone(base), KeyApplicationCredentialID, KeyApplicationCredentialSecret), ""},
		"named app credential":     {append(slices.Clone(base), KeyUsername, KeyApplicationCredentialName, KeyApplicationCredentialSecret), ""},
		"username without secrets": {append(slices.Clone(base), KeyUsername), `("username" and "password") or ("applicationCredentialID" and "applicationCredentialSecret") or ("username" and "applicationCredentialName" and "applicationCredentialSecret")`},
		"no auth URL":              {[]string{KeyDomainName, KeyTenantName, KeyRegion, KeyUsername, KeyPassword}, `"authURL"`},
	} {
		if got := Describe(Unmet(Required(druidv1alpha1.StorageProviderOpenStack), has(tc.keys...))); got != tc.unmet {
			t.Errorf("%s: unmet %s, want %s", name, got, tc.unmet)
		}
	}
}

// bucketName is required where the sidecar would take the container from the secret: not for Local, which
// has a default container, nor when the store names one. A GCS emulator needs no service account.
func TestRequiredForStore(t *testing.T) {
	store := func(provider druidv1alpha1.StorageProvider, container, endpoint string) *druidv1alpha1.StoreSpec {
		return &druidv1alpha1.StoreSpec{Provider: &provider, Container: &container, EndpointOverride: &endpoint}
	}
	for name, tc := range map[string]struct {
		store *druidv1alpha1.StoreSpec
		want  string
	}{
		"OSS without container": {store("alicloud", "", ""), `"storageEndpoint", "accessKeyID", "accessKeySecret", "bucketName"`},
		"OSS with container":    {store("OSS", "b", ""), `"storageEndpoint", "accessKeyID", "accessKeySecret"`},
		"Local":                 {store("Local", "", ""), ""},
		"GCS":                   {store("gcp", "b", ""), `"serviceaccount.json"`},
		"GCS emulator":          {store("GCS", "b", "http://127.0.0.1:4443"), ""},
		"no provider":           {&druidv1alpha1.StoreSpec{}, ""},
	} {
		if got := Describe(RequiredForStore(tc.store)); got != tc.want {
			t.Errorf("%s: %s, want %s", name, got, tc.want)
		}
	}
}

func TestInDataNeedsAValue(t *testing.T) {
	in := InData(map[string][]byte{"set": []byte("v"), "empty": nil})
	if !in("set") || in("empty") || in("absent") {
		t.Fatal("a key counts only with a non-empty value")
	}
}
