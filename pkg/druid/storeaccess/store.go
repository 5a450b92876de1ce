// Package storeaccess is how a pod reaches the backup store: the flags that locate it, the environment
// and secret mount through which etcdbrctl finds its credentials, the Local provider's host directory and
// its mount, the compression flags and the network-policy labels. Every pod that runs etcdbrctl against a
// store uses it: the etcd pods the StatefulSet operator renders and the compaction, copy-backups and
// surviving-data Jobs, so that they address a store alike.
package storeaccess

import (
	"path"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Local provider facts, as the upstream sidecar and druid spell them.
const (
	// LocalHostPathKey is the backup secret key naming the node directory that holds the buckets.
	LocalHostPathKey = backupsecret.KeyHostPath
	// DefaultLocalHostPath is used when the backup secret has no hostPath.
	DefaultLocalHostPath = config.DefaultLocalBackupHostPath
	// DefaultLocalContainer is the sidecar's container when spec.backup.store.container is unset.
	DefaultLocalContainer = "default.bkp"
)

// CanonicalProvider returns the provider name the sidecar's --storage-provider flag expects for the store
// (Gardener's aliases mapped), or "" without a store or provider.
func CanonicalProvider(store *druidv1alpha1.StoreSpec) druidv1alpha1.StorageProvider {
	if store == nil || store.Provider == nil {
		return ""
	}
	return druidv1alpha1.ResolveStorageProvider(*store.Provider)
}

// StoreLocationArgs are the flags that locate a store: --<p>storage-provider, --<p>store-container,
// --<p>store-prefix and --<p>store-endpoint-override with p = flagPrefix ("" for the store a command works
// on, "source-" for the store `etcdbrctl copy` reads from). Unset optional values are left out, except a
// Local store's container (see LocalContainer).
func StoreLocationArgs(store *druidv1alpha1.StoreSpec, flagPrefix string) []string {
	var args []string
	if provider := CanonicalProvider(store); provider != "" {
		args = append(args, podwire.Arg(flagPrefix+podwire.FlagStorageProvider, string(provider)))
	}
	switch {
	case CanonicalProvider(store) == druidv1alpha1.StorageProviderLocal:
		// Always the directory LocalStoreVolume mounts: left unset, the sidecar would fall back to
		// $STORAGE_CONTAINER or the backup secret's bucketName, a directory nothing mounts.
		args = append(args, podwire.Arg(flagPrefix+podwire.FlagStoreContainer, LocalContainer(store)))
	case store.Container != nil && *store.Container != "":
		args = append(args, podwire.Arg(flagPrefix+podwire.FlagStoreContainer, *store.Container))
	}
	args = append(args, podwire.Arg(flagPrefix+podwire.FlagStorePrefix, store.Prefix))
	if store.EndpointOverride != nil && *store.EndpointOverride != "" {
		args = append(args, podwire.Arg(flagPrefix+podwire.FlagStoreEndpointOverride, *store.EndpointOverride))
	}
	return args
}

// StoreCredentialsEnv are the environment variables through which etcdbrctl finds the store's credentials,
// as the upstream druid sets them (backupsecret): the variable naming the mounted secret (mountPath), named
// envPrefix + the provider's variable (e.g. SOURCE_AWS_APPLICATION_CREDENTIALS for the copy source); for
// ECS, which has no such variable, one variable per secret key taken from the secret itself. Empty without
// a secret or for providers that need none (Local).
func StoreCredentialsEnv(store *druidv1alpha1.StoreSpec, mountPath, envPrefix string) []corev1.EnvVar {
	if store == nil || store.SecretRef == nil || store.SecretRef.Name == "" {
		return nil
	}
	provider := CanonicalProvider(store)
	if provider == druidv1alpha1.StorageProviderECS {
		env := make([]corev1.EnvVar, 0, len(backupsecret.ECSKeyEnv))
		for _, k := range backupsecret.ECSKeyEnv {
			env = append(env, corev1.EnvVar{Name: envPrefix + k.Env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: store.SecretRef.Name}, Key: k.Key, Optional: ptr.To(k.Optional),
			}}})
		}
		return env
	}
	name, ok := backupsecret.CredentialsEnv[provider]
	if !ok {
		return nil
	}
	value := mountPath
	if provider == druidv1alpha1.StorageProviderGCS {
		value = path.Join(mountPath, backupsecret.KeyServiceAccount)
	}
	return []corev1.EnvVar{{Name: envPrefix + name, Value: value}}
}

// The compression of an Etcd whose spec.backup.compression leaves it out, as in upstream etcd-druid's API
// (DefaultCompressionEnabled, DefaultCompression) and upstream etcd-backup-restore's own flag defaults.
const (
	DefaultCompressionEnabled = true
	DefaultCompressionPolicy  = druidv1alpha1.GzipCompression
)

// CompressionArgs are the sidecar's snapshot compression flags, for every command that writes snapshots the
// sidecar must read back (the sidecar, the quorum-loss recovery's preserve-data Job), rendered as upstream
// etcd-druid renders them: always both flags, with its API's defaults for what spec.backup.compression
// leaves out (enabled, gzip). Explicit values, because the sidecars' own defaults are not to be relied on:
// an older sidecar of this project compressed nothing unless told.
func CompressionArgs(backup druidv1alpha1.BackupSpec) []string {
	enabled, policy := DefaultCompressionEnabled, DefaultCompressionPolicy
	if c := backup.SnapshotCompression; c != nil {
		enabled, policy = ptr.Deref(c.Enabled, enabled), ptr.Deref(c.Policy, policy)
	}
	return []string{
		podwire.Arg(podwire.FlagCompressSnapshots, strconv.FormatBool(enabled)),
		podwire.Arg(podwire.FlagCompressionPolicy, string(policy)),
	}
}

// StoreNetworkPolicyLabels let a Job pod that talks to the store (compaction, preserve-data) reach DNS and
// the object store through a Gardener seed's network policies, as the etcd pods do.
func StoreNetworkPolicyLabels() map[string]string {
	return map[string]string{
		"networking.gardener.cloud/to-dns":              "allowed",
		"networking.gardener.cloud/to-private-networks": "allowed",
		"networking.gardener.cloud/to-public-networks":  "allowed",
	}
}
