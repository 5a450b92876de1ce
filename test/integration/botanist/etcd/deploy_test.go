package etcd_test

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

func caRef(name, namespace string) druidv1alpha1.SecretReference {
	return druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: name, Namespace: namespace}, DataKey: ptr.To("bundle.crt")}
}

// The Gardener ⇄ extension ⇄ druid chain: the extension reconciles the BackupEntry and names etcd-backup in its status; Deploy
// waits for that, and writes the Etcd with that secret, the bucket from the secret and the TLS references.
func TestDeployWritesEtcdWithTLSAndTheBackupStoreOfTheBackupEntry(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	clock := &fixedClock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	v := s.mainValues()
	v.Clock = clock.Now
	g.Expect(etcd.New(env.Client, s.namespace, v).Deploy(ctx)).To(Succeed())

	be := getEntry(g, s.entry)
	g.Expect(be.Status.LastOperation.State).To(Equal(extensionsv1alpha1.LastOperationStateSucceeded), "Deploy returned before the entry was reconciled")
	g.Expect(be.Status.EtcdBackupSecretRef).NotTo(BeNil())
	backupSecret := getSecret(g, s.namespace, be.Status.EtcdBackupSecretRef.Name)

	main := getEtcd(g, s.namespace, "etcd-main")
	g.Expect(main.Annotations).To(HaveKeyWithValue("gardener.cloud/operation", "reconcile"))
	g.Expect(main.Annotations).To(HaveKeyWithValue("gardener.cloud/timestamp", "2026-03-01T10:00:00Z"))
	g.Expect(main.Labels).To(HaveKeyWithValue("role", "main"))
	g.Expect(main.Spec.Labels).To(HaveKeyWithValue("app", "etcd-statefulset"))
	g.Expect(main.Spec.Replicas).To(Equal(int32(1)))
	g.Expect(main.Spec.Etcd.ClientUrlTLS).To(Equal(&druidv1alpha1.TLSConfig{
		TLSCASecretRef:     caRef("ca-etcd", s.namespace),
		ServerTLSSecretRef: corev1.SecretReference{Name: "etcd-server-main", Namespace: s.namespace},
		ClientTLSSecretRef: corev1.SecretReference{Name: "etcd-client", Namespace: s.namespace},
	}))
	g.Expect(main.Spec.Backup.TLS).To(Equal(main.Spec.Etcd.ClientUrlTLS))
	g.Expect(main.Spec.Etcd.PeerUrlTLS).To(BeNil(), "a single member talks to no peer")
	g.Expect(*main.Spec.Etcd.ClientPort).To(Equal(int32(2379)))
	g.Expect(*main.Spec.Etcd.ServerPort).To(Equal(int32(2380)))
	g.Expect(*main.Spec.Backup.Port).To(Equal(int32(8080)))
	g.Expect(main.Spec.Etcd.Quota.String()).To(Equal("8Gi"))
	g.Expect(main.Spec.StorageCapacity.String()).To(Equal("25Gi"))
	g.Expect(main.Spec.VolumeClaimTemplate).To(Equal(ptr.To("main-etcd")), "Gardener's PVC names, main-etcd-etcd-main-<i>")

	store := main.Spec.Backup.Store
	g.Expect(store).NotTo(BeNil())
	g.Expect(*store.SecretRef).To(Equal(*be.Status.EtcdBackupSecretRef))
	g.Expect(*store.Container).To(Equal(string(backupSecret.Data["bucketName"])))
	g.Expect(*store.Container).To(Equal(s.bucket))
	g.Expect(*store.Provider).To(Equal(druidv1alpha1.StorageProviderLocal))
	g.Expect(store.Prefix).To(Equal(s.entry + "/etcd-main"))
	g.Expect(main.Spec.Backup.FullSnapshotSchedule).NotTo(BeNil())
	g.Expect(main.Spec.Backup.DeltaSnapshotPeriod.Duration).To(Equal(5 * time.Minute))
	g.Expect(main.Spec.Backup.DeltaSnapshotMemoryLimit.String()).To(Equal("100Mi"))
	g.Expect(*main.Spec.Backup.GarbageCollectionPolicy).To(Equal(druidv1alpha1.GarbageCollectionPolicyExponential))
	// Gardener's backup settings: gzip and the compaction Job's resources (druid's default thresholds);
	// no delta retention and no leader election tuning unless configured (gardenlet writes neither when
	// its etcd configuration has none).
	gzip := &druidv1alpha1.CompressionSpec{Enabled: ptr.To(true), Policy: ptr.To(druidv1alpha1.GzipCompression)}
	compaction := &druidv1alpha1.SnapshotCompactionSpec{Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("600m"), corev1.ResourceMemory: resource.MustParse("3Gi"),
	}}}
	g.Expect(main.Spec.Backup.SnapshotCompression).To(Equal(gzip))
	g.Expect(main.Spec.Backup.SnapshotCompaction).To(Equal(compaction))
	g.Expect(main.Spec.Backup.DeltaSnapshotRetentionPeriod).To(BeNil())
	g.Expect(main.Spec.Backup.LeaderElection).To(BeNil())

	// etcd-events: class normal, never backed up, same TLS shape.
	g.Expect(etcd.New(env.Client, s.namespace, values(etcd.RoleEvents)).Deploy(ctx)).To(Succeed())
	events := getEtcd(g, s.namespace, "etcd-events")
	g.Expect(events.Spec.Backup.Store).To(BeNil())
	g.Expect(events.Spec.Backup.FullSnapshotSchedule).To(BeNil())
	g.Expect(events.Spec.Backup.DeltaSnapshotRetentionPeriod).To(BeNil(), "no store, no deltas to keep")
	g.Expect(events.Spec.Backup.SnapshotCompression).To(Equal(gzip), "as Gardener writes it, store or not")
	g.Expect(events.Spec.Backup.SnapshotCompaction).To(Equal(compaction), "as Gardener writes it, store or not")
	g.Expect(events.Spec.StorageCapacity.String()).To(Equal("10Gi"))
	g.Expect(events.Spec.VolumeClaimTemplate).To(Equal(ptr.To("etcd-events")), "Gardener names a normal Etcd's PVC template after the Etcd")
	g.Expect(events.Spec.Etcd.ClientUrlTLS.ServerTLSSecretRef.Name).To(Equal("etcd-server-events"))
	g.Expect(getSecret(g, s.namespace, "etcd-server-events").Data).To(HaveKey("tls.crt"))
}

// An entry reconciled by an older extension has no status.etcdBackupSecretRef; the component then uses
// etcd-backup in the control-plane namespace, and the provider from the entry's type.
func TestDeployFallsBackToEtcdBackupForEntriesOfOlderExtensions(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	entry := legacyEntry(t, namespace, "gcp")
	g.Expect(env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-backup", Namespace: namespace},
		Data:       map[string][]byte{"bucketName": []byte("gcs-bucket"), "serviceaccount.json": []byte("{}")},
	})).To(Succeed())

	v := values(etcd.RoleMain)
	v.BackupConfig = &etcd.BackupConfig{BackupEntryName: entry}
	g.Expect(etcd.New(env.Client, namespace, v).Deploy(ctx)).To(Succeed())
	store := getEtcd(g, namespace, "etcd-main").Spec.Backup.Store
	g.Expect(*store.SecretRef).To(Equal(corev1.SecretReference{Name: "etcd-backup", Namespace: namespace}))
	g.Expect(*store.Provider).To(Equal(druidv1alpha1.StorageProviderGCS))
	g.Expect(*store.Container).To(Equal("gcs-bucket"))
}

func TestDeployGivesUpOnABackupEntryThatIsNeverReconciled(t *testing.T) {
	g := NewWithT(t)
	namespace := env.CreateNamespace(t)
	v := values(etcd.RoleMain)
	v.WaitTimeout = time.Second
	v.BackupConfig = &etcd.BackupConfig{BackupEntryName: namespace + "--missing"}
	err := etcd.New(env.Client, namespace, v).Deploy(context.Background())
	g.Expect(err).To(MatchError(ContainSubstring("BackupEntry " + namespace + "--missing not reconciled after 1s: it does not exist")))
	g.Expect(etcdExists(namespace, "etcd-main")).To(BeFalse())
}

func etcdExists(namespace, name string) bool {
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, &druidv1alpha1.Etcd{})
	return !apierrors.IsNotFound(err)
}

// With the TLS secrets owned by someone else, a missing secret or key stops Deploy before anything is written.
func TestDeployRefusesWhileATLSSecretOrKeyIsMissing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	_, err := etcd.NewTLSSecrets(env.Client, namespace, etcd.TLSValues{Role: etcd.RoleEvents}).Ensure(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "etcd-client", Namespace: namespace}})).To(Succeed())
	ca := getSecret(g, namespace, "ca-etcd")
	delete(ca.Data, "bundle.crt")
	g.Expect(env.Client.Update(ctx, ca)).To(Succeed())

	v := values(etcd.RoleEvents)
	v.TLS = etcd.ExistingTLS{Refs: etcd.DefaultTLSSecretRefs(etcd.RoleEvents)}
	err = etcd.New(env.Client, namespace, v).Deploy(ctx)
	var missing *etcd.MissingSecretError
	g.Expect(errors.As(err, &missing)).To(BeTrue(), "want a *MissingSecretError, got %v", err)
	g.Expect(missing.Missing).To(ConsistOf(
		etcd.MissingSecret{Name: "ca-etcd", Keys: []string{"bundle.crt"}},
		etcd.MissingSecret{Name: "etcd-client"},
	))
	g.Expect(err.Error()).To(ContainSubstring("secret " + namespace + "/etcd-client is missing"))
	g.Expect(err.Error()).To(ContainSubstring("secret " + namespace + "/ca-etcd lacks key(s) bundle.crt"))
	g.Expect(etcdExists(namespace, "etcd-events")).To(BeFalse(), "nothing may be written while secrets are missing")

	// When the component owns the TLS secrets, Deploy simply repairs them.
	g.Expect(etcd.New(env.Client, namespace, values(etcd.RoleEvents)).Deploy(ctx)).To(Succeed())
	g.Expect(getSecret(g, namespace, "etcd-client").Data).To(HaveKey("tls.key"))
	g.Expect(getSecret(g, namespace, "ca-etcd").Data).To(HaveKey("bundle.crt"))
}

func TestDeployRefusesABackupSecretWithoutBucketName(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	g.Eventually(func(g Gomega) {
		g.Expect(getEntry(g, s.entry).Status.EtcdBackupSecretRef).NotTo(BeNil())
	}, timeout, interval).Should(Succeed())
	secret := getSecret(g, s.namespace, "etcd-backup")
	delete(secret.Data, "bucketName")
	g.Expect(env.Client.Update(ctx, secret)).To(Succeed())

	err := etcd.New(env.Client, s.namespace, s.mainValues()).Deploy(ctx)
	var missing *etcd.MissingSecretError
	g.Expect(errors.As(err, &missing)).To(BeTrue(), "want a *MissingSecretError, got %v", err)
	g.Expect(missing.Missing).To(Equal([]etcd.MissingSecret{{Name: "etcd-backup", Keys: []string{"bucketName"}, Provider: druidv1alpha1.StorageProviderLocal}}))
	g.Expect(err.Error()).To(ContainSubstring("etcd-backup (backup secret of provider Local) lacks key(s) bucketName"))
	g.Expect(etcdExists(s.namespace, "etcd-main")).To(BeFalse())
}

// A backup secret without its provider's keys (here OSS, chosen through BackupConfig.Provider, on the secret
// of a local BackupEntry) stops Deploy naming provider and keys; once the keys are there, Deploy writes the
// Etcd with that provider.
func TestDeployRefusesABackupSecretWithoutItsProvidersKeys(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	v := s.mainValues()
	v.BackupConfig.Provider = ptr.To(druidv1alpha1.StorageProviderAlicloud)

	err := etcd.New(env.Client, s.namespace, v).Deploy(ctx)
	var missing *etcd.MissingSecretError
	g.Expect(errors.As(err, &missing)).To(BeTrue(), "want a *MissingSecretError, got %v", err)
	g.Expect(missing.Missing).To(Equal([]etcd.MissingSecret{{Name: "etcd-backup", Provider: druidv1alpha1.StorageProviderOSS,
		Keys: []string{"storageEndpoint", "accessKeyID", "accessKeySecret"}}}))
	g.Expect(err.Error()).To(ContainSubstring("etcd-backup (backup secret of provider OSS) lacks key(s) storageEndpoint, accessKeyID, accessKeySecret"))
	g.Expect(etcdExists(s.namespace, "etcd-main")).To(BeFalse())

	secret := getSecret(g, s.namespace, "etcd-backup")
	secret.Data["storageEndpoint"] = []byte("oss-eu-central-1.aliyuncs.com")
	secret.Data["accessKeyID"] = []byte("AK")
	secret.Data["accessKeySecret"] = []byte("SK")
	g.Expect(env.Client.Update(ctx, secret)).To(Succeed())
	g.Expect(etcd.New(env.Client, s.namespace, v).Deploy(ctx)).To(Succeed())
	g.Expect(*getEtcd(g, s.namespace, "etcd-main").Spec.Backup.Store.Provider).To(Equal(druidv1alpha1.StorageProviderAlicloud), "the configured name, which druid resolves")
}

func TestDeployIsIdempotentAndKeepsWhatIsAlreadyOnTheObject(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	clock := &fixedClock{now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	v := s.mainValues()
	v.Clock = clock.Now
	v.MaintenanceWindow = &etcd.MaintenanceWindow{Begin: "030000+0200", End: "040000+0200"}
	g.Expect(etcd.New(env.Client, s.namespace, v).Deploy(ctx)).To(Succeed())
	first := getEtcd(g, s.namespace, "etcd-main")
	g.Expect(*first.Spec.Backup.FullSnapshotSchedule).To(MatchRegexp(`^\d+ 1 \* \* \*$`), "01:xx UTC is inside 03:00-04:00+0200")

	clock.now = clock.now.Add(time.Hour)
	g.Expect(etcd.New(env.Client, s.namespace, v).Deploy(ctx)).To(Succeed())
	second := getEtcd(g, s.namespace, "etcd-main")
	g.Expect(second.Spec).To(Equal(first.Spec))
	g.Expect(second.Generation).To(Equal(first.Generation))
	g.Expect(second.Annotations["gardener.cloud/timestamp"]).To(Equal("2026-03-01T11:00:00Z"))
	delete(first.Annotations, "gardener.cloud/timestamp")
	delete(second.Annotations, "gardener.cloud/timestamp")
	g.Expect(second.Annotations).To(Equal(first.Annotations))
	g.Expect(second.Labels).To(Equal(first.Labels))

	// Someone (druid's scale subresource, a provider webhook, an operator) changed values since.
	patch := client.MergeFrom(second.DeepCopy())
	second.Spec.StorageCapacity = ptr.To(resource.MustParse("40Gi"))
	second.Spec.Etcd.DefragmentationSchedule = ptr.To("7 3 * * 6")
	second.Spec.Backup.FullSnapshotSchedule = ptr.To("0 */12 * * *")
	g.Expect(env.Client.Patch(ctx, second, patch)).To(Succeed())

	// A Deploy without backup config, replicas or schedules keeps all of it.
	plain := values(etcd.RoleMain)
	g.Expect(etcd.New(env.Client, s.namespace, plain).Deploy(ctx)).To(Succeed())
	kept := getEtcd(g, s.namespace, "etcd-main")
	g.Expect(kept.Spec.StorageCapacity.String()).To(Equal("40Gi"))
	g.Expect(*kept.Spec.Etcd.DefragmentationSchedule).To(Equal("7 3 * * 6"))
	g.Expect(*kept.Spec.Backup.FullSnapshotSchedule).To(Equal("0 */12 * * *"))
	g.Expect(kept.Spec.Backup.Store).To(Equal(first.Spec.Backup.Store))

	// A volume never shrinks, and schedules passed in Values do not move the existing ones (Gardener's
	// rule); only a defragmentation every N days gives way.
	plain.StorageCapacity = ptr.To(resource.MustParse("30Gi"))
	plain.FullSnapshotSchedule = ptr.To("15 2 * * *")
	plain.DefragmentationSchedule = ptr.To("20 2 * * *")
	g.Expect(etcd.New(env.Client, s.namespace, plain).Deploy(ctx)).To(Succeed())
	kept = getEtcd(g, s.namespace, "etcd-main")
	g.Expect(kept.Spec.StorageCapacity.String()).To(Equal("40Gi"))
	g.Expect(*kept.Spec.Backup.FullSnapshotSchedule).To(Equal("0 */12 * * *"))
	g.Expect(*kept.Spec.Etcd.DefragmentationSchedule).To(Equal("7 3 * * 6"))
	patch = client.MergeFrom(kept.DeepCopy())
	kept.Spec.Etcd.DefragmentationSchedule = ptr.To("7 3 */3 * *")
	g.Expect(env.Client.Patch(ctx, kept, patch)).To(Succeed())
	g.Expect(etcd.New(env.Client, s.namespace, plain).Deploy(ctx)).To(Succeed())
	g.Expect(*getEtcd(g, s.namespace, "etcd-main").Spec.Etcd.DefragmentationSchedule).To(Equal("20 2 * * *"))
}

// An Etcd created before (by another Gardener side, or an older version of ours) without a PVC template keeps
// none: the field is immutable, and its volumes are named after the Etcd.
func TestDeployKeepsTheVolumeClaimTemplateOfAnExistingEtcd(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	c := etcd.New(env.Client, s.namespace, s.mainValues())
	g.Expect(c.Deploy(ctx)).To(Succeed())
	existing := getEtcd(g, s.namespace, "etcd-main")
	// Recreate it as an older writer left it; the API allows no change of the field on an existing object.
	g.Expect(env.Client.Delete(ctx, existing)).To(Succeed())
	g.Eventually(func() bool { return !etcdExists(s.namespace, "etcd-main") }, timeout, interval).Should(BeTrue())
	existing.ResourceVersion, existing.UID, existing.Spec.VolumeClaimTemplate = "", "", nil
	g.Expect(env.Client.Create(ctx, existing)).To(Succeed())

	g.Expect(c.Deploy(ctx)).To(Succeed())
	g.Expect(getEtcd(g, s.namespace, "etcd-main").Spec.VolumeClaimTemplate).To(BeNil(), "the existing volumes stay in use")
}

// legacyEntry creates a BackupEntry as an older extension leaves it: reconciled, but without
// status.etcdBackupSecretRef. Its type has no controller in this suite, so the test plays the extension.
func legacyEntry(t *testing.T, namespace, providerType string) string {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	entry := namespace + "--0a1b2c3d"
	be := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: entry},
		Spec: extensionsv1alpha1.BackupEntrySpec{
			DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: providerType},
			Region:      "europe-west1", BucketName: "gcs-bucket",
			SecretRef: corev1.SecretReference{Name: "entry-" + entry, Namespace: "garden"},
		},
	}
	g.Expect(env.Client.Create(ctx, be)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, be) })
	be.Status.ObservedGeneration = be.Generation
	be.Status.LastOperation = &extensionsv1alpha1.LastOperation{Type: extensionsv1alpha1.LastOperationTypeCreate, State: extensionsv1alpha1.LastOperationStateSucceeded, LastUpdateTime: metav1.Now()}
	g.Expect(env.Client.Status().Update(ctx, be)).To(Succeed())
	return entry
}

// Values.DeltaSnapshotPeriod replaces Gardener's five minutes (the e2e suite needs delta snapshots within
// seconds); Deploy keeps writing the value it is given.
func TestDeployWritesTheConfiguredDeltaSnapshotPeriod(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	v := s.mainValues()
	v.DeltaSnapshotPeriod = 10 * time.Second
	g.Expect(etcd.New(env.Client, s.namespace, v).Deploy(ctx)).To(Succeed())
	g.Expect(getEtcd(g, s.namespace, "etcd-main").Spec.Backup.DeltaSnapshotPeriod.Duration).To(Equal(10 * time.Second))
}

// A configured delta retention and leader election are written, and compaction thresholds someone set on
// the object survive a Deploy (only the Job's resources are Gardener's).
func TestDeployWritesTheConfiguredDeltaRetentionAndLeaderElectionAndKeepsCompactionThresholds(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	v := s.mainValues()
	v.DeltaSnapshotRetentionPeriod = 72 * time.Hour
	election := &druidv1alpha1.LeaderElectionSpec{EtcdConnectionTimeout: &metav1.Duration{Duration: 10 * time.Second}, ReelectionPeriod: &metav1.Duration{Duration: 11 * time.Second}}
	v.BackupLeaderElection = election
	g.Expect(etcd.New(env.Client, s.namespace, v).Deploy(ctx)).To(Succeed())
	main := getEtcd(g, s.namespace, "etcd-main")
	g.Expect(main.Spec.Backup.DeltaSnapshotRetentionPeriod).To(Equal(&metav1.Duration{Duration: 72 * time.Hour}))
	g.Expect(main.Spec.Backup.LeaderElection).To(Equal(election))

	main.Spec.Backup.SnapshotCompaction.EventsThreshold = ptr.To(int64(500_000))
	main.Spec.Backup.SnapshotCompaction.TriggerFullSnapshotThreshold = ptr.To(int64(2_000_000))
	g.Expect(env.Client.Update(ctx, main)).To(Succeed())
	g.Expect(etcd.New(env.Client, s.namespace, v).Deploy(ctx)).To(Succeed())
	c := getEtcd(g, s.namespace, "etcd-main").Spec.Backup.SnapshotCompaction
	g.Expect(c.EventsThreshold).To(Equal(ptr.To(int64(500_000))))
	g.Expect(c.TriggerFullSnapshotThreshold).To(Equal(ptr.To(int64(2_000_000))))
	g.Expect(c.Resources.Requests.Memory().String()).To(Equal("3Gi"))
}

// A delta retention the Etcd already has (an earlier Deploy's, or an operator's) stays when Values set none:
// dropping it would let garbage collection delete the deltas of older full snapshot sets, the history a
// restore to an earlier revision needs.
func TestDeployKeepsAnExistingDeltaRetentionWhenValuesSetNone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	v := s.mainValues()
	v.DeltaSnapshotRetentionPeriod = 72 * time.Hour
	g.Expect(etcd.New(env.Client, s.namespace, v).Deploy(ctx)).To(Succeed())
	v.DeltaSnapshotRetentionPeriod = 0
	g.Expect(etcd.New(env.Client, s.namespace, v).Deploy(ctx)).To(Succeed())
	g.Expect(getEtcd(g, s.namespace, "etcd-main").Spec.Backup.DeltaSnapshotRetentionPeriod).To(Equal(&metav1.Duration{Duration: 72 * time.Hour}))
}
