package sidecar

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/defrag"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
)

func etcdSpec(customize func(*druidv1alpha1.Etcd)) *druidv1alpha1.Etcd {
	e := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--p--s"}}
	e.Spec.Replicas = 3
	if customize != nil {
		customize(e)
	}
	druidv1alpha1.SetDefaults(e)
	return e
}

// parse runs `etcdbrctl server` with args and returns the options it would run with.
func parse(t *testing.T, args []string) (Options, error) {
	t.Helper()
	var got Options
	cmd := NewCommand(func(_ context.Context, o Options, _ logr.Logger) error {
		err := o.Validate() // parses what only validation parses (the restore source's time)
		got = o
		return err
	})
	if args[0] != "server" {
		t.Fatalf("druid's args start with %q, want the server subcommand", args[0])
	}
	cmd.SetArgs(args[1:])
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(t.Context())
	return got, err
}

func TestAcceptsTheArgumentsDruidGenerates(t *testing.T) {
	tls := func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.ClientUrlTLS = &druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca"}},
			ServerTLSSecretRef: corev1.SecretReference{Name: "server"},
			ClientTLSSecretRef: corev1.SecretReference{Name: "client"},
		}
		e.Spec.Backup.TLS = &druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "br-ca"}},
			ServerTLSSecretRef: corev1.SecretReference{Name: "br-server"},
			ClientTLSSecretRef: corev1.SecretReference{Name: "br-client"},
		}
	}
	s3Store := func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "shoot--p--s/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProvider("aws")),
			Container: ptr.To("bucket"), SecretRef: &corev1.SecretReference{Name: "etcd-backup"}, EndpointOverride: ptr.To("http://127.0.0.1:7070")}
		e.Spec.Backup.FullSnapshotSchedule = ptr.To("0 */6 * * *")
		e.Spec.Backup.DeltaSnapshotPeriod = &metav1.Duration{Duration: 5 * time.Minute}
		e.Spec.Backup.DeltaSnapshotMemoryLimit = ptr.To(resource.MustParse("100Mi"))
		e.Spec.Backup.GarbageCollectionPolicy = ptr.To(druidv1alpha1.GarbageCollectionPolicyLimitBased)
		e.Spec.Backup.MaxBackupsLimitBasedGC = ptr.To(int32(5))
		e.Spec.Backup.GarbageCollectionPeriod = &metav1.Duration{Duration: 12 * time.Hour}
		e.Spec.Backup.SnapshotCompression = &druidv1alpha1.CompressionSpec{Enabled: ptr.To(true), Policy: ptr.To(druidv1alpha1.ZlibCompression)}
		e.Spec.Etcd.DefragmentationSchedule = ptr.To("0 3 * * *")
	}
	for name, tc := range map[string]struct {
		etcd  *druidv1alpha1.Etcd
		check func(g Gomega, o Options)
	}{
		"defaults without store": {etcdSpec(nil), func(g Gomega, o Options) {
			g.Expect(o.EnableMemberLeaseRenewal).To(BeTrue())
			g.Expect(o.InsecureTransport).To(BeTrue())
			g.Expect(o.Endpoints).To(Equal([]string{"http://etcd-main-local:2379"}))
			g.Expect(o.ServiceEndpoints).To(Equal([]string{"http://etcd-main-client.shoot--p--s.svc:2379"}))
			g.Expect(o.DataDir).To(Equal("/var/etcd/data/new.etcd"))
			g.Expect(o.Store.Provider).To(BeEmpty())
			g.Expect(o.EnableSnapshotLeaseRenewal).To(BeFalse())
			g.Expect(o.wrapperURL()).To(Equal("http://etcd-main-local:9095"))
		}},
		"TLS everywhere": {etcdSpec(tls), func(g Gomega, o Options) {
			g.Expect(o.InsecureTransport).To(BeFalse())
			g.Expect(o.Endpoints).To(Equal([]string{"https://etcd-main-local:2379"}))
			g.Expect(o.CACert).To(Equal("/var/etcd/ssl/ca/ca.crt"))
			g.Expect(o.Cert).To(Equal("/var/etcd/ssl/client/tls.crt"))
			g.Expect(o.ServerCert).To(Equal("/var/etcdbr/ssl/server/tls.crt"))
			g.Expect(o.ServerKey).To(Equal("/var/etcdbr/ssl/server/tls.key"))
			g.Expect(o.ServerCACert).To(Equal("/var/etcdbr/ssl/ca/ca.crt"))
		}},
		"S3 store with every backup option": {etcdSpec(s3Store), func(g Gomega, o Options) {
			g.Expect(o.Store.Provider).To(BeEquivalentTo("S3"))
			g.Expect(o.Store.Container).To(Equal("bucket"))
			g.Expect(o.Store.Prefix).To(Equal("shoot--p--s/etcd-main"))
			g.Expect(o.Store.EndpointOverride).To(Equal("http://127.0.0.1:7070"))
			g.Expect(o.EnableSnapshotLeaseRenewal).To(BeTrue())
			g.Expect(o.FullSnapshotLeaseName).To(Equal("etcd-main-full-snap"))
			g.Expect(o.DeltaSnapshotLeaseName).To(Equal("etcd-main-delta-snap"))
			g.Expect(o.Schedule).To(Equal("0 */6 * * *"))
			g.Expect(o.DeltaSnapshotPeriod).To(Equal(5 * time.Minute))
			g.Expect(o.DeltaSnapshotMemoryLimit).To(Equal(int64(100 << 20)))
			g.Expect(o.GarbageCollectionPolicy).To(Equal("LimitBased"))
			g.Expect(o.MaxBackups).To(Equal(5))
			g.Expect(o.GarbageCollectionPeriod).To(Equal(12 * time.Hour))
			g.Expect(o.Compression).To(Equal(snapshot.CompressionZlib))
			g.Expect(o.DefragmentationSchedule).To(Equal("0 3 * * *"))
			g.Expect(o.keepOptions()).To(Equal(defrag.KeepOptions{Schedule: "0 3 * * *", CheckPeriod: 30 * time.Second,
				Thresholds: defrag.Thresholds{Fragmentation: 0.5, MinReclaimable: 32 << 20, Quota: 0.8}}),
				"druid renders no defragmentation check flags: NOSPACE recovery and the thresholds are on by default")
		}},
		"restore source annotations of a new Etcd": {etcdSpec(func(e *druidv1alpha1.Etcd) {
			s3Store(e)
			e.Annotations = map[string]string{druidv1alpha1.RestoreSourcePrefixAnnotation: "shoot--p--old/etcd-main",
				druidv1alpha1.RestoreSourceTimeAnnotation: "2026-11-28T14:00:00Z"}
		}), func(g Gomega, o Options) {
			g.Expect(o.RestoreSource.Prefix).To(Equal("shoot--p--old/etcd-main"))
			g.Expect(o.RestoreSource.Revision).To(BeZero())
			g.Expect(o.RestoreSource.time).To(Equal(time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)))
			g.Expect(o.restoreSourceConfig()).To(And(
				HaveField("Prefix", "shoot--p--old/etcd-main"), HaveField("Container", "bucket"), HaveField("Provider", BeEquivalentTo("S3"))),
				"the own store's container and credentials, the source's prefix")
			g.Expect(o.Store.Prefix).To(Equal("shoot--p--s/etcd-main"), "the own prefix stays")
		}},
		"Local store, single member, custom ports": {etcdSpec(func(e *druidv1alpha1.Etcd) {
			e.Spec.Replicas = 1
			e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderLocal)}
			e.Spec.Backup.Port = ptr.To(int32(8081))
			e.Spec.Etcd.ClientPort = ptr.To(int32(12379))
			e.Spec.Etcd.HeartbeatDuration = &metav1.Duration{Duration: 15 * time.Second}
			e.Spec.Etcd.WrapperPort = ptr.To(int32(9096))
		}), func(g Gomega, o Options) {
			g.Expect(o.wrapperURL()).To(Equal("http://etcd-main-local:9096"), "spec.etcd.wrapperPort")
			g.Expect(o.Store.Provider).To(BeEquivalentTo("Local"))
			g.Expect(o.ServerPort).To(Equal(8081))
			g.Expect(o.Endpoints).To(Equal([]string{"http://etcd-main-local:12379"}))
			g.Expect(o.HeartbeatDuration).To(Equal(15 * time.Second))
		}},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			o, err := parse(t, statefulset.BackupRestoreArgs(tc.etcd, imagecaps.AllOurs.BackupRestore))
			g.Expect(err).NotTo(HaveOccurred())
			tc.check(g, o)
		})
	}
}

func TestRejectsInconsistentFlags(t *testing.T) {
	g := NewWithT(t)
	_, err := parse(t, []string{"server", "--server-cert=/c", "--garbage-collection-policy=Forever", "--schedule=every hour"})
	g.Expect(err).To(MatchError(And(ContainSubstring("--server-key"), ContainSubstring("Forever"), ContainSubstring("--schedule"))))
	_, err = parse(t, []string{"server", "--no-such-flag"})
	g.Expect(err).To(HaveOccurred())
}

// The restore source flags are refused naming the flag: without a store, the own prefix, both targets, a
// negative revision, a time that is not RFC3339, a target without a source.
func TestRestoreSourceFlags(t *testing.T) {
	g := NewWithT(t)
	_, err := parse(t, []string{"server", "--restore-source-store-prefix=old", "--restore-source-revision=-1", "--restore-source-time=yesterday"})
	g.Expect(err).To(MatchError(And(ContainSubstring("--restore-source-store-prefix needs a store"),
		ContainSubstring("--restore-source-revision -1 must be positive"), ContainSubstring("--restore-source-revision and --restore-source-time are exclusive"),
		ContainSubstring(`--restore-source-time "yesterday" is no RFC3339 time`))))
	_, err = parse(t, []string{"server", "--storage-provider=Local", "--store-prefix=own/", "--restore-source-store-prefix=own"})
	g.Expect(err).To(MatchError(ContainSubstring(`--restore-source-store-prefix "own" is the own --store-prefix`)))
	_, err = parse(t, []string{"server", "--storage-provider=Local", "--store-prefix=x/own", "--restore-source-store-prefix=x//own"})
	g.Expect(err).To(MatchError(ContainSubstring(`--restore-source-store-prefix "x//own" is the own --store-prefix`)), "an empty segment names the same location")
	_, err = parse(t, []string{"server", "--restore-source-revision=5"})
	g.Expect(err).To(MatchError(ContainSubstring("need --restore-source-store-prefix")))
	o, err := parse(t, []string{"server", "--storage-provider=Local", "--store-prefix=new", "--restore-source-store-prefix=old", "--restore-source-revision=5"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(o.RestoreSource).To(HaveField("Revision", int64(5)))
}

// The defragmentation checks take a period and two shares of [0, 1), 0 switching each off; other values
// are refused naming the flag.
func TestDefragmentationCheckFlags(t *testing.T) {
	g := NewWithT(t)
	o, err := parse(t, []string{"server", "--defragmentation-check-period=0", "--defragmentation-fragmentation-threshold=0",
		"--defragmentation-quota-threshold=0.7"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(o.keepOptions()).To(Equal(defrag.KeepOptions{Thresholds: defrag.Thresholds{MinReclaimable: 32 << 20, Quota: 0.7}}))

	_, err = parse(t, []string{"server", "--defragmentation-check-period=-1s", "--defragmentation-fragmentation-threshold=1",
		"--defragmentation-quota-threshold=-0.1"})
	g.Expect(err).To(MatchError(And(ContainSubstring("--defragmentation-check-period"),
		ContainSubstring("--defragmentation-fragmentation-threshold 1"), ContainSubstring("--defragmentation-quota-threshold -0.1"))))
}
