package storeaccess

import (
	"context"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// localStore is a Local store without backup secret (the default host path) and the given container.
func localStore(provider druidv1alpha1.StorageProvider, container string) *druidv1alpha1.StoreSpec {
	return &druidv1alpha1.StoreSpec{Provider: ptr.To(provider), Container: ptr.To(container), Prefix: "etcd-main"}
}

// A Local store's container is mounted below the allowed host directory, so it must be one path
// segment: anything else would mount another node directory read-write into the pods.
func TestResolveLocalStoreRefusesAContainerThatLeavesTheHostDirectory(t *testing.T) {
	ctx := context.Background()
	for _, container := range []string{"..", "../x", "../../var/lib/kubelet", "a/b", "/abs", ".", "bkp/", "x\x00"} {
		for _, provider := range []druidv1alpha1.StorageProvider{druidv1alpha1.StorageProviderLocal, "local"} {
			mount, err := ResolveLocalStore(ctx, nil, localStore(provider, container), EtcdContainerField, "ns", "local-backup", config.LocalBackup{})
			if err == nil || !strings.Contains(err.Error(), EtcdContainerField) {
				t.Errorf("%s container %q: mount %+v, err %v; want an error naming %s", provider, container, mount, err, EtcdContainerField)
			}
		}
	}
	for _, container := range []string{"default.bkp", "backups-eu", "..bkp"} {
		mount, err := ResolveLocalStore(ctx, nil, localStore(druidv1alpha1.StorageProviderLocal, container), EtcdContainerField, "ns", "local-backup", config.LocalBackup{})
		if err != nil {
			t.Errorf("container %q: %v", container, err)
			continue
		}
		if got, want := mount.Volume.HostPath.Path, DefaultLocalHostPath+"/"+container; got != want {
			t.Errorf("container %q: hostPath %q, want %q", container, got, want)
		}
	}
	if mount, err := ResolveLocalStore(ctx, nil, &druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderS3), Container: ptr.To("..")},
		EtcdContainerField, "ns", "local-backup", config.LocalBackup{}); mount != nil || err != nil {
		t.Errorf("S3 store: %+v, %v; want neither a volume nor an error", mount, err)
	}
}

// The joined directory is checked on its own: below the host path and against the allow-list.
func TestLocalStoreDir(t *testing.T) {
	allowed := config.LocalBackup{AllowedHostPaths: []string{"/srv/buckets"}}
	store := localStore(druidv1alpha1.StorageProviderLocal, "bkp")
	if dir, err := LocalStoreDir("/srv/buckets/", store, allowed); err != nil || dir != "/srv/buckets/bkp" {
		t.Errorf("LocalStoreDir = %q, %v; want /srv/buckets/bkp", dir, err)
	}
	if _, err := LocalStoreDir("/srv/other", store, allowed); err == nil || !strings.Contains(err.Error(), "not below a directory druid allows") {
		t.Errorf("a host path outside the allow-list: err = %v", err)
	}
	if _, err := LocalStoreDir("/srv/buckets", localStore(druidv1alpha1.StorageProviderLocal, ".."), config.LocalBackup{AllowedHostPaths: []string{"/srv"}}); err == nil {
		t.Error("a container climbing to an allowed parent was accepted")
	}
}
