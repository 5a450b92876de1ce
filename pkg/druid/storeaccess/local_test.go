package storeaccess

import (
	"context"
	"path"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

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
			if err == nil || !strings.Contains(err.Error(), EtcdContainerField) || !IsLocalStoreRefused(err) {
				t.Errorf("%s container %q: mount %+v, err %v; want an error naming %s", provider, container, mount, err, EtcdContainerField)
			}
		}
	}
	// Leading dots name an ordinary directory: only "." and ".." are path elements of their own.
	for _, container := range []string{"default.bkp", "backups-eu", "..bkp", "...", ".hidden"} {
		mount, err := ResolveLocalStore(ctx, nil, localStore(druidv1alpha1.StorageProviderLocal, container), EtcdContainerField, "ns", "local-backup", config.LocalBackup{})
		if err != nil {
			t.Errorf("container %q: %v", container, err)
			continue
		}
		if got, want := mount.NodeDir(), DefaultLocalHostPath+"/"+container; got != want || mount.Mount.SubPath != container {
			t.Errorf("container %q: node directory %q (subPath %q), want %q", container, got, mount.Mount.SubPath, want)
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
	// A backup secret that cannot be read is no refusal: the next attempt may succeed.
	secretRef := localStore(druidv1alpha1.StorageProviderLocal, "bkp")
	secretRef.SecretRef = &corev1.SecretReference{Name: "missing"}
	if _, err := ResolveLocalStore(context.Background(), fake.NewClientBuilder().Build(), secretRef, EtcdContainerField, "ns", "v", allowed); err == nil || IsLocalStoreRefused(err) {
		t.Errorf("missing backup secret: err = %v; want an error that is no refusal", err)
	}
	if _, err := LocalStoreDir("/srv/other", store, allowed); err == nil || !strings.Contains(err.Error(), "not below a directory druid allows") {
		t.Errorf("a host path outside the allow-list: err = %v", err)
	}
	if _, err := LocalStoreDir("/srv/buckets", localStore(druidv1alpha1.StorageProviderLocal, ".."), config.LocalBackup{AllowedHostPaths: []string{"/srv"}}); err == nil {
		t.Error("a container climbing to an allowed parent was accepted")
	}
}

// The pods mount the allow-listed directory itself and reach the store through the mount's subPath: the
// kubelet refuses a subPath that leaves its volume through a symlink, where a hostPath volume of
// <hostPath>/<container> would follow a symlink the container names to anywhere on the node. The sidecar
// still finds the store at $HOME/<container>, and the node directory is the one mounted before.
func TestLocalStoreVolumeMountsTheAllowedDirectoryAndSelectsTheStoreBySubPath(t *testing.T) {
	for _, tc := range []struct {
		name, hostPath, container string
		allowed                   []string
		wantRoot, wantSubPath     string
	}{
		{"default directory", DefaultLocalHostPath, "default.bkp", nil, DefaultLocalHostPath, "default.bkp"},
		{"host path below the allowed directory", "/srv/buckets/tenant-a/", "bkp", []string{"/srv/buckets"}, "/srv/buckets", "tenant-a/bkp"},
		{"most specific allowed directory", "/srv/buckets/x", "bkp", []string{"/srv", "/srv/buckets/"}, "/srv/buckets", "x/bkp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mount, err := LocalStoreVolume("local-backup", tc.hostPath, localStore(druidv1alpha1.StorageProviderLocal, tc.container), EtcdContainerField,
				config.LocalBackup{AllowedHostPaths: tc.allowed})
			if err != nil {
				t.Fatal(err)
			}
			hp := mount.Volume.HostPath
			if hp == nil || hp.Path != tc.wantRoot || hp.Type == nil || *hp.Type != corev1.HostPathDirectoryOrCreate {
				t.Errorf("volume %+v; want hostPath %s (DirectoryOrCreate)", mount.Volume.VolumeSource, tc.wantRoot)
			}
			want := corev1.VolumeMount{Name: "local-backup", MountPath: "/home/nonroot/" + tc.container, SubPath: tc.wantSubPath}
			if !reflect.DeepEqual(mount.Mount, want) {
				t.Errorf("mount %+v, want %+v", mount.Mount, want)
			}
			if got, wantDir := mount.NodeDir(), path.Join(tc.hostPath, tc.container); got != wantDir {
				t.Errorf("NodeDir() = %q, want %q: the store's node directory must not move", got, wantDir)
			}
			if ro := mount.ReadOnly(); !ro.Mount.ReadOnly || mount.Mount.ReadOnly {
				t.Errorf("ReadOnly() = %+v (original %+v); want a read-only copy", ro.Mount, mount.Mount)
			}
		})
	}
}
