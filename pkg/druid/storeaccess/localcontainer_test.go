package storeaccess

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/storeflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// A Local store without container mounts <hostPath>/default.bkp at $HOME/default.bkp. The sidecar, left
// to itself, takes a missing --store-container from $STORAGE_CONTAINER and then from the backup secret's
// bucketName (which Gardener always sets) before its default: should it ever read the secret, it would
// write the backups to $HOME/<bucketName>, a directory of the container's own file system that is gone
// with the pod. The flags therefore always name the container druid mounted.
func TestLocalStoreFlagsNameTheMountedContainer(t *testing.T) {
	store := &druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderLocal), Prefix: "etcd-main"}
	mount, err := ResolveLocalStore(context.Background(), nil, store, EtcdContainerField, "ns", "local-backup", config.LocalBackup{})
	if err != nil {
		t.Fatal(err)
	}

	// The sidecar, parsing druid's flags, with the backup secret (bucketName set) in reach.
	secretDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(secretDir, backupsecret.KeyBucketName), []byte("shoot--bucket"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	var cfg snapstore.Config
	fs := pflag.NewFlagSet("sidecar", pflag.ContinueOnError)
	flags := storeflags.Bind(fs, &cfg, "", "")
	flags.LookupEnv = func(string) (string, bool) { return "", false }
	if err := fs.Parse(append(StoreLocationArgs(store, ""), "--store-secret-dir="+secretDir)); err != nil {
		t.Fatal(err)
	}
	resolved, err := flags.Config()
	if err != nil {
		t.Fatal(err)
	}
	resolved.LocalRoot = home
	s, err := snapstore.New(context.Background(), resolved, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()

	mounted := filepath.Join(home, filepath.Base(mount.Mount.MountPath))
	if _, err := os.Stat(mounted); err != nil {
		entries, _ := os.ReadDir(home)
		t.Errorf("the sidecar's store is not the mounted directory %s (%v); $HOME holds %v", mount.Mount.MountPath, err, entries)
	}
}
