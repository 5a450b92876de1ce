package storeflags_test

import (
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/storeflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
)

// A Swift store finds its secret through the variable druid sets for it (OPENSTACK_APPLICATION_CREDENTIALS,
// SOURCE_-prefixed for the source of a copy), whichever of the provider's names the Etcd uses.
func TestSwiftSecretFromDruidsVariable(t *testing.T) {
	for _, tc := range []struct {
		provider                    druidv1alpha1.StorageProvider
		flagPrefix, envPrefix, path string
	}{
		{druidv1alpha1.StorageProviderSwift, "", "", "/var/etcd-backup"},
		{druidv1alpha1.StorageProviderOpenStack, "source-", "SOURCE_", "/var/source-etcd-backup"},
	} {
		store := &druidv1alpha1.StoreSpec{Provider: ptr.To(tc.provider), SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}
		env := map[string]string{}
		for _, e := range storeaccess.StoreCredentialsEnv(store, tc.path, tc.envPrefix) {
			env[e.Name] = e.Value
		}
		if len(env) != 1 {
			t.Fatalf("druid sets %v for %s, want one variable", env, tc.provider)
		}
		var cfg snapstore.Config
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		flags := storeflags.Bind(fs, &cfg, tc.flagPrefix, tc.envPrefix)
		flags.LookupEnv = func(name string) (string, bool) { v, ok := env[name]; return v, ok }
		if err := fs.Parse([]string{"--" + tc.flagPrefix + "storage-provider=" + string(tc.provider)}); err != nil {
			t.Fatal(err)
		}
		got, err := flags.Config()
		if err != nil || got.SecretDir != tc.path {
			t.Fatalf("%s: secret dir %q (%v), want %s from %v", tc.provider, got.SecretDir, err, tc.path, env)
		}
		if p, err := snapstore.CanonicalProvider(got.Provider); err != nil || p != snapstore.ProviderSwift {
			t.Fatalf("%s: provider %q, %v", tc.provider, p, err)
		}
	}
}

// Upstream druid passes a store's container in <prefix>STORAGE_CONTAINER (the sidecar only there):
// it is taken when --<prefix>store-container is not given, and the flag wins when it is.
func TestContainerFromDruidsVariable(t *testing.T) {
	for _, tc := range []struct {
		name, flagPrefix, envPrefix string
		args                        []string
		want                        string
	}{
		{"variable only", "", "", nil, "from-env"},
		{"flag wins", "", "", []string{"--store-container=from-flag"}, "from-flag"},
		{"source store of a copy", "source-", "SOURCE_", nil, "from-env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg snapstore.Config
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			flags := storeflags.Bind(fs, &cfg, tc.flagPrefix, tc.envPrefix)
			env := map[string]string{tc.envPrefix + storeflags.EnvStorageContainer: "from-env"}
			flags.LookupEnv = func(name string) (string, bool) { v, ok := env[name]; return v, ok }
			if err := fs.Parse(append([]string{"--" + tc.flagPrefix + "storage-provider=Local"}, tc.args...)); err != nil {
				t.Fatal(err)
			}
			got, err := flags.Config()
			if err != nil {
				t.Fatal(err)
			}
			if got.Container != tc.want {
				t.Errorf("container %q, want %q", got.Container, tc.want)
			}
		})
	}
}
