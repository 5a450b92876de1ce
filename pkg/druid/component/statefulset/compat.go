package statefulset

import (
	"context"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
)

// CompatibilityNotice is one behaviour of the etcd pod that differs because an image is an upstream one.
type CompatibilityNotice struct {
	// Reason names the difference (a stable key for logs and tests).
	Reason string
	// Message says what it means.
	Message string
}

// CompatibilityNotices lists what the pod of etcd does differently with the images of caps than with ours
// where security or behaviour changes (docs/compatibility.md, "Running the upstream images under our
// druid"). Empty for our images.
func CompatibilityNotices(etcd *druidv1alpha1.Etcd, caps imagecaps.Caps) []CompatibilityNotice {
	var notices []CompatibilityNotice
	if !caps.BackupRestore.ServerCACert && etcd.Spec.Backup.TLS != nil {
		notices = append(notices, CompatibilityNotice{Reason: "NoSidecarClientVerification",
			Message: "the upstream backup-restore image takes no --server-cacert: its HTTPS API verifies no client certificate, so /snapshot/* answers any caller that reaches the port"})
	}
	if !caps.BackupRestore.Livez {
		notices = append(notices, CompatibilityNotice{Reason: "NoSidecarLivenessProbe",
			Message: "the upstream backup-restore image serves no /livez: the backup-restore container gets no liveness probe, so a hung sidecar is not restarted"})
	}
	if !caps.EtcdWrapper.Phase {
		notices = append(notices, CompatibilityNotice{Reason: "NoWrapperLivenessProbe",
			Message: "the upstream etcd-wrapper image serves no /phase: the etcd container gets no liveness probe, so a hung wrapper is not restarted"})
	}
	return notices
}

// noticeOnce logs each of etcd's compatibility notices once per druid process, Etcd and image.
func noticeOnce(ctx context.Context, etcd *druidv1alpha1.Etcd, brImage, wrapperImage string, caps imagecaps.Caps) {
	for _, n := range CompatibilityNotices(etcd, caps) {
		imagecaps.NoticeOnce(ctx, etcd.Namespace+"/"+etcd.Name+"|"+brImage+"|"+wrapperImage+"|"+n.Reason,
			"Rendering for an upstream image: "+n.Message, "etcd", etcd.Namespace+"/"+etcd.Name, "reason", n.Reason,
			"backupRestoreImage", brImage, "etcdWrapperImage", wrapperImage)
	}
}
