package statefulset

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// Volume names of the pod template. The peer TLS names matter beyond this file: the scale-up decision
// compares them between the existing StatefulSet and the spec.
const (
	volumeConfig          = "etcd-config-file"
	volumeClientCA        = "client-url-ca-etcd"
	volumeClientServerTLS = "client-url-etcd-server-tls"
	volumeClientTLS       = "client-url-etcd-client-tls"
	VolumePeerCA          = "peer-url-ca-etcd"
	VolumePeerServerTLS   = "peer-url-etcd-server-tls"
	volumeBackupCA        = "backup-restore-ca"
	volumeBackupServerTLS = "backup-restore-server-tls"
	volumeBackupClientTLS = "backup-restore-client-tls"
	volumeBackupSecret    = "etcd-backup"
	volumeLocalStore      = "local-backup"
	// volumeTmp is each container's writable /tmp under a read-only root file system.
	volumeTmp = "tmp"
)

// secretVolume spells out the mode the apiserver would default, so that an unchanged spec compares equal.
func secretVolume(name, secretName string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secretName, DefaultMode: ptr.To(corev1.SecretVolumeSourceDefaultMode)}}}
}

// volumes lists the pod's volumes for the spec; local is the Local store's volume (nil for other providers).
func volumes(etcd *druidv1alpha1.Etcd, local *storeaccess.LocalMount) []corev1.Volume {
	vols := []corev1.Volume{{Name: volumeConfig, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: druidv1alpha1.ConfigMapName(etcd)},
		Items:                []corev1.KeyToPath{{Key: etcdpod.ConfigFileName, Path: etcdpod.ConfigFileName}},
		DefaultMode:          ptr.To(corev1.ConfigMapVolumeSourceDefaultMode),
	}}}, {Name: volumeTmp, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	if tls := etcd.Spec.Etcd.ClientUrlTLS; tls != nil {
		vols = append(vols,
			secretVolume(volumeClientCA, tls.TLSCASecretRef.Name),
			secretVolume(volumeClientServerTLS, tls.ServerTLSSecretRef.Name))
		if tls.ClientTLSSecretRef.Name != "" {
			vols = append(vols, secretVolume(volumeClientTLS, tls.ClientTLSSecretRef.Name))
		}
	}
	vols = append(vols, peerTLSVolumes(etcd)...)
	if tls := etcd.Spec.Backup.TLS; tls != nil {
		vols = append(vols,
			secretVolume(volumeBackupCA, tls.TLSCASecretRef.Name),
			secretVolume(volumeBackupServerTLS, tls.ServerTLSSecretRef.Name))
		if tls.ClientTLSSecretRef.Name != "" {
			vols = append(vols, secretVolume(volumeBackupClientTLS, tls.ClientTLSSecretRef.Name))
		}
	}
	if store := etcd.Spec.Backup.Store; store != nil {
		if store.SecretRef != nil && store.SecretRef.Name != "" {
			vols = append(vols, secretVolume(volumeBackupSecret, store.SecretRef.Name))
		}
		if local != nil {
			vols = append(vols, local.Volume)
		}
	}
	return vols
}

// peerTLSVolumes are the volumes that enable peer TLS; empty without spec.etcd.peerUrlTls.
func peerTLSVolumes(etcd *druidv1alpha1.Etcd) []corev1.Volume {
	tls := etcd.Spec.Etcd.PeerUrlTLS
	if tls == nil {
		return nil
	}
	return []corev1.Volume{
		secretVolume(VolumePeerCA, tls.TLSCASecretRef.Name),
		secretVolume(VolumePeerServerTLS, tls.ServerTLSSecretRef.Name),
	}
}

// PeerTLSVolumesUpToDate tells whether existing (a pod template's volumes) mounts exactly the peer TLS
// secrets of the spec. False means peer TLS was newly enabled (or its secrets were switched), which makes
// the members restart before a scale-up may continue.
func PeerTLSVolumesUpToDate(existing []corev1.Volume, etcd *druidv1alpha1.Etcd) bool {
	for _, want := range peerTLSVolumes(etcd) {
		found := false
		for _, have := range existing {
			if have.Name == want.Name && have.Secret != nil && have.Secret.SecretName == want.Secret.SecretName {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// tmpMount gives a container a writable /tmp (the wrapper writes etcd's configuration there).
func tmpMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: volumeTmp, MountPath: etcdpod.TmpMountPath}
}

// etcdMounts are the etcd (wrapper) container's mounts: data, the TLS material named in the etcd
// configuration, and what the wrapper needs to call the sidecar and to check etcd's health.
func etcdMounts(etcd *druidv1alpha1.Etcd) []corev1.VolumeMount {
	mounts := []corev1.VolumeMount{dataMount(etcd), tmpMount()}
	if tls := etcd.Spec.Etcd.ClientUrlTLS; tls != nil {
		mounts = append(mounts,
			corev1.VolumeMount{Name: volumeClientCA, MountPath: etcdpod.ClientCAMountPath},
			corev1.VolumeMount{Name: volumeClientServerTLS, MountPath: etcdpod.ClientServerTLSMountPath})
		if tls.ClientTLSSecretRef.Name != "" {
			mounts = append(mounts, corev1.VolumeMount{Name: volumeClientTLS, MountPath: etcdpod.ClientTLSMountPath})
		}
	}
	if etcd.Spec.Etcd.PeerUrlTLS != nil {
		mounts = append(mounts,
			corev1.VolumeMount{Name: VolumePeerCA, MountPath: etcdpod.PeerCAMountPath},
			corev1.VolumeMount{Name: VolumePeerServerTLS, MountPath: etcdpod.PeerServerTLSMountPath})
	}
	if tls := etcd.Spec.Backup.TLS; tls != nil {
		mounts = append(mounts, corev1.VolumeMount{Name: volumeBackupCA, MountPath: etcdpod.BackupCAMountPath})
		if tls.ClientTLSSecretRef.Name != "" {
			mounts = append(mounts, corev1.VolumeMount{Name: volumeBackupClientTLS, MountPath: etcdpod.BackupClientTLSMountPath})
		}
	}
	return mounts
}

// backupRestoreMounts are the sidecar's mounts: data, the configuration template, its client credentials
// for etcd, its HTTPS server certificate, the backup secret and the Local store directory (local, nil for
// other providers).
func backupRestoreMounts(etcd *druidv1alpha1.Etcd, local *storeaccess.LocalMount) []corev1.VolumeMount {
	mounts := []corev1.VolumeMount{
		dataMount(etcd),
		tmpMount(),
		{Name: volumeConfig, MountPath: etcdpod.ConfigMountPath},
	}
	if tls := etcd.Spec.Etcd.ClientUrlTLS; tls != nil {
		mounts = append(mounts, corev1.VolumeMount{Name: volumeClientCA, MountPath: etcdpod.ClientCAMountPath})
		if tls.ClientTLSSecretRef.Name != "" {
			mounts = append(mounts, corev1.VolumeMount{Name: volumeClientTLS, MountPath: etcdpod.ClientTLSMountPath})
		}
	}
	if etcd.Spec.Backup.TLS != nil {
		mounts = append(mounts,
			corev1.VolumeMount{Name: volumeBackupCA, MountPath: etcdpod.BackupCAMountPath},
			corev1.VolumeMount{Name: volumeBackupServerTLS, MountPath: etcdpod.BackupServerTLSMountPath})
	}
	if store := etcd.Spec.Backup.Store; store != nil {
		if store.SecretRef != nil && store.SecretRef.Name != "" {
			mounts = append(mounts, corev1.VolumeMount{Name: volumeBackupSecret, MountPath: storeaccess.SecretMountPath(store, false)})
		}
		if local != nil {
			mounts = append(mounts, local.Mount)
		}
	}
	return mounts
}

func dataMount(etcd *druidv1alpha1.Etcd) corev1.VolumeMount {
	return corev1.VolumeMount{Name: druidv1alpha1.VolumeClaimTemplateName(etcd), MountPath: etcdpod.DataVolumeMountPath}
}
