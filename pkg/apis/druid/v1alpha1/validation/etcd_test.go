package validation_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

// validEtcd is a fully specified, valid Etcd: each case below breaks exactly one thing.
func validEtcd() *druidv1alpha1.Etcd {
	tls := druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: secretRef("ca-etcd"), DataKey: ptr.To("bundle.crt")},
		ServerTLSSecretRef: secretRef("etcd-server-main"),
		ClientTLSSecretRef: secretRef("etcd-client"),
	}
	return &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--dev--a"},
		Spec: druidv1alpha1.EtcdSpec{
			Labels:   map[string]string{"role": "main", "app": "etcd-statefulset"},
			Replicas: 3,
			Etcd: druidv1alpha1.EtcdConfig{
				Quota:                   quantity("8Gi"),
				DefragmentationSchedule: ptr.To("0 3 * * *"),
				ClientPort:              ptr.To(int32(2379)),
				Metrics:                 ptr.To(druidv1alpha1.Extensive),
				ClientUrlTLS:            &tls,
				PeerUrlTLS:              &druidv1alpha1.PeerTLSConfig{TLSConfig: tls},
				HeartbeatDuration:       duration(10 * time.Second),
			},
			Backup: druidv1alpha1.BackupSpec{
				Store: &druidv1alpha1.StoreSpec{
					Container: ptr.To("gardener-backups-a1"),
					Prefix:    "shoot--dev--a--uid/etcd-main",
					Provider:  ptr.To(druidv1alpha1.StorageProviderS3),
					SecretRef: ptr.To(secretRef("etcd-backup")),
				},
				FullSnapshotSchedule:    ptr.To("0 */24 * * *"),
				GarbageCollectionPolicy: ptr.To(druidv1alpha1.GarbageCollectionPolicyExponential),
				GarbageCollectionPeriod: duration(12 * time.Hour),
				DeltaSnapshotPeriod:     duration(5 * time.Minute),
				SnapshotCompression:     &druidv1alpha1.CompressionSpec{Enabled: ptr.To(true), Policy: ptr.To(druidv1alpha1.GzipCompression)},
			},
			StorageClass:     ptr.To("premium"),
			StorageCapacity:  quantity("25Gi"),
			MemberNamePrefix: ptr.To("garden"),
		},
	}
}

func TestValidEtcdHasNoErrors(t *testing.T) {
	for name, etcd := range map[string]*druidv1alpha1.Etcd{
		"full":       validEtcd(),
		"hibernated": with(validEtcd(), func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0 }),
		"minimal": {
			ObjectMeta: metav1.ObjectMeta{Name: "etcd-events"},
			Spec:       druidv1alpha1.EtcdSpec{Labels: map[string]string{"role": "events"}, Replicas: 1},
		},
		"equal periods are not required when only one is set": with(validEtcd(), func(e *druidv1alpha1.Etcd) { e.Spec.Backup.GarbageCollectionPeriod = nil }),
		// Shapes upstream etcd-druid accepts; the webhook warns about some of them.
		"even replicas":        with(validEtcd(), func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 4 }),
		"upper-case container": with(validEtcd(), func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Container = ptr.To("Backups-EU") }),
		"additional peer URLs": with(validEtcd(), func(e *druidv1alpha1.Etcd) {
			peerURLs("etcd-main-0", "https://10.0.0.1:2380", "https://etcd-main-0.other.example:2380")(e)
			peerURLs("etcd-main-2", "https://[fd00::2]:2380")(e)
		}),
		"Local default container":   with(validEtcd(), localContainer(druidv1alpha1.StorageProviderLocal, "default.bkp")),
		"Local container with dash": with(validEtcd(), localContainer(druidv1alpha1.StorageProviderLocal, "backups-eu")),
		"S3 bucket with dots":       with(validEtcd(), localContainer(druidv1alpha1.StorageProviderS3, "..")),
		"stackit": with(validEtcd(), func(e *druidv1alpha1.Etcd) {
			e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProviderStackit)
		}),
		"lower-case s3": with(validEtcd(), func(e *druidv1alpha1.Etcd) {
			e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProvider("s3"))
		}),
		"upstream fields": with(validEtcd(), func(e *druidv1alpha1.Etcd) {
			e.Spec.Etcd.BackendBboltFreelistType = ptr.To(druidv1alpha1.BboltFreelistMap)
			e.Spec.Etcd.AdditionalAdvertisePeerURLs = []druidv1alpha1.MemberPeerURLs{{MemberName: "etcd-main-0", URLs: []string{"https://10.0.0.1:2380"}}}
			e.Spec.Etcd.BootstrapWithExistingCluster = &druidv1alpha1.BootstrapWithExistingCluster{
				Members:         []druidv1alpha1.BootstrapExistingMember{{Name: "source-0", PeerURLs: []string{"https://source-0.source-peer.old.svc:2380"}}},
				ClientEndpoints: []string{"https://source-client.old.svc:2379"},
			}
		}),
	} {
		if errs := validation.ValidateEtcd(etcd); len(errs) > 0 {
			t.Errorf("%s: unexpected errors: %v", name, errs)
		}
	}
}

// peerURLs adds an additionalAdvertisePeerURLs entry.
func peerURLs(member string, urls ...string) func(*druidv1alpha1.Etcd) {
	return func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.AdditionalAdvertisePeerURLs = append(e.Spec.Etcd.AdditionalAdvertisePeerURLs, druidv1alpha1.MemberPeerURLs{MemberName: member, URLs: urls})
	}
}

// localContainer sets the store's provider and container.
func localContainer(provider druidv1alpha1.StorageProvider, container string) func(*druidv1alpha1.Etcd) {
	return func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store.Provider = ptr.To(provider)
		e.Spec.Backup.Store.Container = ptr.To(container)
	}
}

func TestInvalidEtcdIsRejectedNamingTheField(t *testing.T) {
	cases := []struct {
		name      string
		mutate    func(*druidv1alpha1.Etcd)
		field     string
		errorType field.ErrorType
		message   string
	}{
		{"negative replicas", func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = -1 }, "spec.replicas", field.ErrorTypeInvalid, "0 (hibernated)"},
		{"empty container", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Container = ptr.To("") }, "spec.backup.store.container", field.ErrorTypeInvalid, "name the bucket"},
		{"unknown provider", func(e *druidv1alpha1.Etcd) {
			e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProvider("ftp"))
		}, "spec.backup.store.provider", field.ErrorTypeNotSupported, "stackit"},
		{"unknown freelist type", func(e *druidv1alpha1.Etcd) {
			e.Spec.Etcd.BackendBboltFreelistType = ptr.To(druidv1alpha1.BboltFreelistType("list"))
		}, "spec.etcd.backendBboltFreelistType", field.ErrorTypeNotSupported, "array"},
		{"empty prefix", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Prefix = "" }, "spec.backup.store.prefix", field.ErrorTypeRequired, "path of this cluster's snapshots"},
		{"unknown provider", func(e *druidv1alpha1.Etcd) {
			e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProvider("ftp"))
		}, "spec.backup.store.provider", field.ErrorTypeNotSupported, `"S3"`},
		{"delta period equal to gc period", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.DeltaSnapshotPeriod = duration(12 * time.Hour) }, "spec.backup.deltaSnapshotPeriod", field.ErrorTypeInvalid, "shorter than spec.backup.garbageCollectionPeriod"},
		{"delta period longer than gc period", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.DeltaSnapshotPeriod = duration(13 * time.Hour) }, "spec.backup.deltaSnapshotPeriod", field.ErrorTypeInvalid, "shorter than"},
		{"bad full snapshot schedule", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.FullSnapshotSchedule = ptr.To("every day") }, "spec.backup.fullSnapshotSchedule", field.ErrorTypeInvalid, "cron"},
		{"bad defrag schedule", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.DefragmentationSchedule = ptr.To("61 * * * *") }, "spec.etcd.defragmentationSchedule", field.ErrorTypeInvalid, "cron"},
		{"unknown gc policy", func(e *druidv1alpha1.Etcd) {
			e.Spec.Backup.GarbageCollectionPolicy = ptr.To(druidv1alpha1.GarbageCollectionPolicy("Forever"))
		}, "spec.backup.garbageCollectionPolicy", field.ErrorTypeNotSupported, "LimitBased"},
		{"zero max backups", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.MaxBackupsLimitBasedGC = ptr.To(int32(0)) }, "spec.backup.maxBackupsLimitBasedGC", field.ErrorTypeInvalid, "at least 1"},
		{"unknown compression", func(e *druidv1alpha1.Etcd) {
			e.Spec.Backup.SnapshotCompression.Policy = ptr.To(druidv1alpha1.CompressionPolicy("xz"))
		}, "spec.backup.compression.policy", field.ErrorTypeNotSupported, "gzip"},
		{"port out of range", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientPort = ptr.To(int32(70000)) }, "spec.etcd.clientPort", field.ErrorTypeInvalid, "1 to 65535"},
		{"unknown metrics level", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Metrics = ptr.To(druidv1alpha1.MetricsLevel("all")) }, "spec.etcd.metrics", field.ErrorTypeNotSupported, "extensive"},
		{"TLS without CA", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientUrlTLS.TLSCASecretRef.Name = "" }, "spec.etcd.clientUrlTls.tlsCASecretRef.name", field.ErrorTypeRequired, "CA bundle"},
		{"peer TLS without server cert", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.PeerUrlTLS.ServerTLSSecretRef.Name = "" }, "spec.etcd.peerUrlTls.serverTLSSecretRef.name", field.ErrorTypeRequired, "tls.crt"},
		{"empty CA data key", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientUrlTLS.TLSCASecretRef.DataKey = ptr.To("") }, "spec.etcd.clientUrlTls.tlsCASecretRef.dataKey", field.ErrorTypeInvalid, "ca.crt"},
		{"zero quota", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.Quota = quantity("0") }, "spec.etcd.quota", field.ErrorTypeInvalid, "greater than zero"},
		{"negative heartbeat", func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.HeartbeatDuration = duration(-time.Second) }, "spec.etcd.heartbeatDuration", field.ErrorTypeInvalid, "at least 1s"},
		{"invalid label", func(e *druidv1alpha1.Etcd) { e.Spec.Labels["bad key!"] = "x" }, "spec.labels", field.ErrorTypeInvalid, "name part"},
		{"invalid member name prefix", func(e *druidv1alpha1.Etcd) { e.Spec.MemberNamePrefix = ptr.To("Garden_") }, "spec.memberNamePrefix", field.ErrorTypeInvalid, "RFC 1123"},
		{"name too long for the client service", func(e *druidv1alpha1.Etcd) { e.Name = strings.Repeat("e", 60) }, "metadata.name", field.ErrorTypeInvalid, "-client"},
		{"backup secret without name", func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.SecretRef.Name = "" }, "spec.backup.store.secretRef.name", field.ErrorTypeRequired, "backup secret"},
		{"additional peer URL of the wrong scheme", peerURLs("etcd-main-0", "http://10.0.0.1:2380"), "spec.etcd.additionalAdvertisePeerURLs[0].urls[0]", field.ErrorTypeInvalid, "scheme https"},
		{"additional peer URL breaking the initial-cluster list", peerURLs("etcd-main-0", "https://a:2380,etcd-x=https://b:2380"), "spec.etcd.additionalAdvertisePeerURLs[0].urls[0]", field.ErrorTypeInvalid, "comma"},
		{"additional peer URL without host", peerURLs("etcd-main-0", "https://:2380"), "spec.etcd.additionalAdvertisePeerURLs[0].urls[0]", field.ErrorTypeInvalid, "host"},
		{"additional peer URLs of no pod", peerURLs("etcd-events-0", "https://10.0.0.1:2380"), "spec.etcd.additionalAdvertisePeerURLs[0].memberName", field.ErrorTypeInvalid, "etcd-main-<ordinal>"},
		{"Local container climbing out of the host directory", localContainer(druidv1alpha1.StorageProviderLocal, "../../var/lib/kubelet"), "spec.backup.store.container", field.ErrorTypeInvalid, "one path segment"},
		{"Local container of dot-dot", localContainer(druidv1alpha1.StorageProviderLocal, ".."), "spec.backup.store.container", field.ErrorTypeInvalid, "one path segment"},
		{"Local container of dot", localContainer(druidv1alpha1.StorageProviderLocal, "."), "spec.backup.store.container", field.ErrorTypeInvalid, "one path segment"},
		{"Local container of two segments", localContainer(druidv1alpha1.StorageProviderLocal, "a/b"), "spec.backup.store.container", field.ErrorTypeInvalid, "one path segment"},
		{"Local container of an absolute path", localContainer(druidv1alpha1.StorageProviderLocal, "/var/lib/kubelet"), "spec.backup.store.container", field.ErrorTypeInvalid, "one path segment"},
		{"Local container with NUL", localContainer(druidv1alpha1.StorageProviderLocal, "bkp\x00"), "spec.backup.store.container", field.ErrorTypeInvalid, "one path segment"},
		{"lower-case local alias with a traversing container", localContainer("local", "../x"), "spec.backup.store.container", field.ErrorTypeInvalid, "one path segment"},
		{"toleration of every taint with a value", func(e *druidv1alpha1.Etcd) {
			e.Spec.SchedulingConstraints.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists, Value: "x"}}
		}, "spec.schedulingConstraints.tolerations[0].value", field.ErrorTypeInvalid, "empty when operator is Exists"},
		{"toleration of an unknown effect", func(e *druidv1alpha1.Etcd) {
			e.Spec.SchedulingConstraints.Tolerations = []corev1.Toleration{{Key: "k", Value: "v", Effect: "NoWay"}}
		}, "spec.schedulingConstraints.tolerations[0].effect", field.ErrorTypeNotSupported, "NoExecute"},
		{"toleration seconds without NoExecute", func(e *druidv1alpha1.Etcd) {
			e.Spec.SchedulingConstraints.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](5)}}
		}, "spec.schedulingConstraints.tolerations[0].tolerationSeconds", field.ErrorTypeInvalid, "NoExecute"},
		{"external member address with a port", func(e *druidv1alpha1.Etcd) {
			e.Spec.ExternallyManagedMemberAddresses = []string{"10.0.0.1", "10.0.0.2:2380", "etcd-2.example.com"}
		}, "spec.externallyManagedMemberAddresses[1]", field.ErrorTypeInvalid, "without scheme or port"},
		{"external member addresses fewer than members", func(e *druidv1alpha1.Etcd) {
			e.Spec.ExternallyManagedMemberAddresses = []string{"10.0.0.1", "fd00::2"}
		}, "spec.externallyManagedMemberAddresses", field.ErrorTypeInvalid, "one address per member"},
		{"additional peer URLs of one pod twice", func(e *druidv1alpha1.Etcd) {
			peerURLs("etcd-main-1", "https://10.0.0.1:2380")(e)
			peerURLs("etcd-main-1", "https://10.0.0.2:2380")(e)
		}, "spec.etcd.additionalAdvertisePeerURLs[1].memberName", field.ErrorTypeDuplicate, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			etcd := validEtcd()
			tc.mutate(etcd)
			expectSingleError(t, validation.ValidateEtcd(etcd), tc.field, tc.errorType, tc.message)
		})
	}
}

func TestImmutableFieldsOnUpdate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*druidv1alpha1.Etcd)
		field  string
	}{
		{"storageClass changed", func(e *druidv1alpha1.Etcd) { e.Spec.StorageClass = ptr.To("standard") }, "spec.storageClass"},
		{"storageClass removed", func(e *druidv1alpha1.Etcd) { e.Spec.StorageClass = nil }, "spec.storageClass"},
		{"volumeClaimTemplate set", func(e *druidv1alpha1.Etcd) { e.Spec.VolumeClaimTemplate = ptr.To("data") }, "spec.volumeClaimTemplate"},
		{"memberNamePrefix changed", func(e *druidv1alpha1.Etcd) { e.Spec.MemberNamePrefix = ptr.To("other") }, "spec.memberNamePrefix"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old := validEtcd()
			updated := old.DeepCopy()
			tc.mutate(updated)
			expectSingleError(t, validation.ValidateEtcdUpdate(updated, old), tc.field, field.ErrorTypeForbidden, "immutable")
		})
	}

	old := validEtcd()
	smaller := with(old.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.StorageCapacity = quantity("24Gi") })
	expectSingleError(t, validation.ValidateEtcdUpdate(smaller, old), "spec.storageCapacity", field.ErrorTypeForbidden, "may not decrease (25Gi to 24Gi)")
	scaled := with(old.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 5; e.Spec.StorageCapacity = quantity("50Gi") })
	if errs := validation.ValidateEtcdUpdate(scaled, old); len(errs) > 0 {
		t.Errorf("changing mutable fields must be allowed, got %v", errs)
	}
}

func TestUpdateRatchetsUnchangedFields(t *testing.T) {
	// Stored with values create refuses: an unknown provider, a schedule that is no cron, a bad label.
	old := with(validEtcd(), func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProvider("ftp"))
		e.Spec.Backup.FullSnapshotSchedule = ptr.To("daily")
		e.Spec.Labels["not a label"] = "x"
	})
	if errs := validation.ValidateEtcd(old); len(errs) != 3 {
		t.Fatalf("want the stored object refused on create with 3 errors, got %v", errs)
	}
	unrelated := with(old.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 5; e.Spec.Annotations = map[string]string{"a": "b"} })
	if errs := validation.ValidateEtcdUpdate(unrelated, old); len(errs) > 0 {
		t.Errorf("an update that keeps the refused values must pass, got %v", errs)
	}
	changed := with(old.DeepCopy(), func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProvider("sftp"))
	})
	expectSingleError(t, validation.ValidateEtcdUpdate(changed, old), "spec.backup.store.provider", field.ErrorTypeNotSupported, "sftp")
	removed := with(old.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Backup.FullSnapshotSchedule = ptr.To("at noon") })
	expectSingleError(t, validation.ValidateEtcdUpdate(removed, old), "spec.backup.fullSnapshotSchedule", field.ErrorTypeInvalid, "cron")
	negative := with(old.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = -1 })
	expectSingleError(t, validation.ValidateEtcdUpdate(negative, old), "spec.replicas", field.ErrorTypeInvalid, "0 (hibernated)")
}

// The rule between the delta snapshot and the garbage collection periods is judged when either period
// changes: a shorter garbage-collection period alone would remove deltas before a full snapshot covers them.
func TestUpdateOfEitherBackupPeriodIsJudged(t *testing.T) {
	old := validEtcd()
	gcOnly := with(old.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Backup.GarbageCollectionPeriod = duration(time.Minute) })
	expectSingleError(t, validation.ValidateEtcdUpdate(gcOnly, old), "spec.backup.deltaSnapshotPeriod", field.ErrorTypeInvalid, "shorter than spec.backup.garbageCollectionPeriod")
	deltaOnly := with(old.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Backup.DeltaSnapshotPeriod = duration(13 * time.Hour) })
	expectSingleError(t, validation.ValidateEtcdUpdate(deltaOnly, old), "spec.backup.deltaSnapshotPeriod", field.ErrorTypeInvalid, "shorter than spec.backup.garbageCollectionPeriod")
}

// Ratcheting never lets an update add an invalid block: the required secret names of a client TLS block
// added with empty references are missing in both objects (omitted when empty), yet the block they are
// in is new, so they are judged.
func TestUpdateAddingATLSBlockWithEmptyReferencesIsRefused(t *testing.T) {
	old := with(validEtcd(), func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientUrlTLS = nil })
	if errs := validation.ValidateEtcd(old); len(errs) > 0 {
		t.Fatalf("want a valid stored Etcd, got %v", errs)
	}
	added := with(old.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientUrlTLS = &druidv1alpha1.TLSConfig{} })
	errs := validation.ValidateEtcdUpdate(added, old)
	var fields []string
	for _, e := range errs {
		fields = append(fields, e.Field)
	}
	for _, want := range []string{"spec.etcd.clientUrlTls.tlsCASecretRef.name", "spec.etcd.clientUrlTls.serverTLSSecretRef.name"} {
		if !slices.Contains(fields, want) {
			t.Errorf("adding an empty client TLS block: errors on %v, want one on %s", fields, want)
		}
	}
}

func TestWarnings(t *testing.T) {
	for replicas, want := range map[int32]string{0: "", 1: "", 3: "", 2: "2 members tolerate the failure of 0, no more than 1", 4: "4 members tolerate the failure of 1, no more than 3"} {
		if got := validation.EvenReplicasWarning(replicas); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("EvenReplicasWarning(%d) = %q, want %q", replicas, got, want)
		}
	}
	fld := field.NewPath("spec", "backup", "store")
	for name, tc := range map[string]struct {
		store *druidv1alpha1.StoreSpec
		want  []string
	}{
		"none":              {nil, nil},
		"canonical":         {&druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderS3), Container: ptr.To("backups")}, nil},
		"stackit and local": {&druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProviderStackit)}, nil},
		"lower-case":        {&druidv1alpha1.StoreSpec{Provider: ptr.To(druidv1alpha1.StorageProvider("gcs"))}, []string{`spec.backup.store.provider: "gcs" is taken as "GCS"`}},
		"upper-case bucket": {&druidv1alpha1.StoreSpec{Container: ptr.To("Backups")}, []string{`spec.backup.store.container: "Backups"`}},
	} {
		got := validation.StoreWarnings(tc.store, fld)
		if len(got) != len(tc.want) {
			t.Errorf("%s: StoreWarnings = %q, want %q", name, got, tc.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], tc.want[i]) {
				t.Errorf("%s: warning %q, want it to start with %q", name, got[i], tc.want[i])
			}
		}
	}
}

func expectSingleError(t *testing.T, errs field.ErrorList, fieldPath string, errorType field.ErrorType, message string) {
	t.Helper()
	if len(errs) != 1 {
		t.Fatalf("want exactly one error on %s, got %d: %v", fieldPath, len(errs), errs)
	}
	err := errs[0]
	if err.Field != fieldPath && !strings.HasPrefix(err.Field, fieldPath+"[") {
		t.Errorf("error names field %q, want %q: %v", err.Field, fieldPath, err)
	}
	if err.Type != errorType {
		t.Errorf("error type %q, want %q: %v", err.Type, errorType, err)
	}
	if !strings.Contains(err.Error(), message) {
		t.Errorf("error %q does not say %q", err.Error(), message)
	}
}

func with(e *druidv1alpha1.Etcd, mutate func(*druidv1alpha1.Etcd)) *druidv1alpha1.Etcd {
	mutate(e)
	return e
}

func secretRef(name string) corev1.SecretReference {
	return corev1.SecretReference{Name: name, Namespace: "shoot--dev--a"}
}

func quantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

func duration(d time.Duration) *metav1.Duration { return &metav1.Duration{Duration: d} }
