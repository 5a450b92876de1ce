package storeaccess

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// EtcdContainerField is where an Etcd names its store's container; errors about a Local container name
// it so that whoever reads the condition knows what to fix.
const EtcdContainerField = "spec.backup.store.container"

// LocalMount is a Local store's hostPath volume and the mount at $HOME/<container>, where etcdbrctl (with
// HOME=etcdpod.LocalHome) looks for the store. The volume is the allowed directory the store lies below
// (config.LocalBackup.Root) and the mount's subPath selects the store's directory in it: the kubelet
// builds a hostPath volume by following every symlink of its path, but refuses a subPath that leaves the
// volume through one, so a symlink placed below an allowed directory cannot hand the pod another node
// directory. Only LocalStoreVolume builds one, so every pod gets a directory that was checked.
type LocalMount struct {
	Volume corev1.Volume
	Mount  corev1.VolumeMount
}

// NodeDir is the node directory the mount reaches (the volume's path joined with the subPath): the
// store's directory, <hostPath>/<container>.
func (m *LocalMount) NodeDir() string {
	return path.Join(m.Volume.HostPath.Path, m.Mount.SubPath)
}

// ReadOnly is a copy of m whose mount is read-only, for a store a pod only reads (the copy Job's source).
func (m *LocalMount) ReadOnly() *LocalMount {
	ro := *m
	ro.Mount.ReadOnly = true
	return &ro
}

// LocalContainer is the Local provider's container directory name of the store.
func LocalContainer(store *druidv1alpha1.StoreSpec) string {
	if store.Container != nil && *store.Container != "" {
		return *store.Container
	}
	return DefaultLocalContainer
}

// LocalStoreDir is the node directory a Local store mounts: hostPath joined with the container. It is
// refused unless the container is one path segment and the joined directory is strictly below hostPath
// and allowed: the webhook refuses other containers, but an object stored before it did must not mount
// another node directory read-write either.
func LocalStoreDir(hostPath string, store *druidv1alpha1.StoreSpec, allowed config.LocalBackup) (string, error) {
	container := LocalContainer(store)
	if problem := druidv1alpha1.LocalContainerProblem(container); problem != "" {
		return "", fmt.Errorf("container %q %s", container, problem)
	}
	base := path.Clean(hostPath)
	dir := path.Clean(path.Join(base, container))
	if !strings.HasPrefix(dir, strings.TrimSuffix(base, "/")+"/") {
		return "", fmt.Errorf("container %q leaves the host path %q", container, hostPath)
	}
	if err := allowed.Check(dir); err != nil {
		return "", fmt.Errorf("container %q: %w", container, err)
	}
	return dir, nil
}

// LocalStoreVolume is the Local store's volume named name, for hostPath from the backup secret, or an
// error (naming containerField, where the store's owner sets the container) when LocalStoreDir refuses it.
// The volume is the allowed directory above the store (DirectoryOrCreate: the operator named it, so
// creating it on a node that lacks it is what the allow-list asks for and cannot be steered by a tenant),
// the mount's subPath the rest of the way, which the kubelet creates when missing.
func LocalStoreVolume(name, hostPath string, store *druidv1alpha1.StoreSpec, containerField string, allowed config.LocalBackup) (*LocalMount, error) {
	dir, err := LocalStoreDir(hostPath, store, allowed)
	if err != nil {
		return nil, refused(fmt.Errorf("%s: %w", containerField, err))
	}
	root, err := allowed.Root(dir)
	if err != nil {
		return nil, refused(fmt.Errorf("%s: %w", containerField, err))
	}
	return &LocalMount{
		Volume: corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: root, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}},
		Mount: corev1.VolumeMount{Name: name, MountPath: path.Join(etcdpod.LocalHome, LocalContainer(store)), SubPath: strings.TrimPrefix(dir, root+"/")},
	}, nil
}

// ResolveLocalStore is the volume of a Local store, or nil for other providers: what the StatefulSet and
// the Jobs that run etcdbrctl against the store mount. The node directory is the backup secret's
// hostPath (or the default), refused unless allowed permits it, joined with the container as
// LocalStoreVolume checks it; errors about the container name containerField. A secret reference without
// namespace points into namespace.
func ResolveLocalStore(ctx context.Context, reader client.Reader, store *druidv1alpha1.StoreSpec, containerField, namespace, volumeName string,
	allowed config.LocalBackup) (*LocalMount, error) {
	hostPath, source, err := localHostPath(ctx, reader, store, namespace)
	if err != nil || hostPath == "" {
		return nil, err
	}
	if err := allowed.Check(hostPath); err != nil {
		return nil, refused(fmt.Errorf("%s: %w", source, err))
	}
	return LocalStoreVolume(volumeName, hostPath, store, containerField, allowed)
}

// localHostPath is the unchecked node directory of a Local store (empty for other providers), with where the path came from for messages.
func localHostPath(ctx context.Context, reader client.Reader, store *druidv1alpha1.StoreSpec, namespace string) (string, string, error) {
	if CanonicalProvider(store) != druidv1alpha1.StorageProviderLocal {
		return "", "", nil
	}
	if store.SecretRef == nil || store.SecretRef.Name == "" {
		return DefaultLocalHostPath, "the default Local host path", nil
	}
	if store.SecretRef.Namespace != "" {
		namespace = store.SecretRef.Namespace
	}
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: store.SecretRef.Name}, secret); err != nil {
		return "", "", fmt.Errorf("backup secret %s/%s: %w", namespace, store.SecretRef.Name, err)
	}
	source := fmt.Sprintf("backup secret %s/%s, key %s", namespace, store.SecretRef.Name, LocalHostPathKey)
	if hostPath := string(secret.Data[LocalHostPathKey]); hostPath != "" {
		return hostPath, source, nil
	}
	return DefaultLocalHostPath, source + " (empty: the default)", nil
}

// LocalStoreRefusedError is ResolveLocalStore's and LocalStoreVolume's refusal of a Local store whose
// directory breaks the rules (a container that is not one segment, a host path outside the allowed
// directories), as opposed to a failed read of the backup secret: retrying cannot help, only a changed
// store, secret or configuration, so callers report it where the store's owner looks.
type LocalStoreRefusedError struct{ err error }

func refused(err error) error { return &LocalStoreRefusedError{err: err} }

func (e *LocalStoreRefusedError) Error() string { return e.err.Error() }

func (e *LocalStoreRefusedError) Unwrap() error { return e.err }

// IsLocalStoreRefused tells whether err is (or wraps) a LocalStoreRefusedError.
func IsLocalStoreRefused(err error) bool {
	var r *LocalStoreRefusedError
	return errors.As(err, &r)
}
