package copybackupstask

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// The flags of `etcdbrctl copy` in gardener/etcd-backup-restore (cmd/options.go copierOptions: the copy
// flags and the snapstore flags, once plain and once with the source- prefix); --store-endpoint-override
// and --source-store-endpoint-override are upstream druid's own (it passes them for the copy Job).
var upstreamCopyFlags = func() []string {
	store := []string{"storage-provider", "store-container", "store-prefix", "store-endpoint-override", "max-parallel-chunk-uploads", "min-chunk-size", "snapstore-temp-directory"}
	flags := []string{"max-backups-to-copy", "max-backup-age", "max-parallel-copy-operations", "wait-for-final-snapshot", "wait-for-final-snapshot-timeout"}
	for _, f := range store {
		flags = append(flags, f, SourceFlagPrefix+f)
	}
	return flags
}()

// The copy Job renders the same arguments for our image and the upstream one: every flag it renders is
// one the upstream `etcdbrctl copy` defines, so no capability switches a flag here. A flag added to
// CopyArgs that the upstream copy does not know fails this test and needs a capability.
func TestCopyArgsAreAcceptedByUpstreamCopy(t *testing.T) {
	task := &druidv1alpha1.EtcdCopyBackupsTask{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main-copy-backups", Namespace: "shoot"}}
	task.Spec.SourceStore = druidv1alpha1.StoreSpec{Prefix: "source", Provider: ptr.To(druidv1alpha1.StorageProviderS3), Container: ptr.To("old"), EndpointOverride: ptr.To("https://s3.old")}
	task.Spec.TargetStore = druidv1alpha1.StoreSpec{Prefix: "target", Provider: ptr.To(druidv1alpha1.StorageProviderGCP), Container: ptr.To("new"), EndpointOverride: ptr.To("https://gcs.new")}
	task.Spec.MaxBackupAge = ptr.To(uint32(7))
	task.Spec.MaxBackups = ptr.To(uint32(3))
	task.Spec.WaitForFinalSnapshot = &druidv1alpha1.WaitForFinalSnapshotSpec{Enabled: true, Timeout: &metav1.Duration{Duration: time.Hour}}

	args := CopyArgs(task)
	if args[0] != "copy" {
		t.Fatalf("got subcommand %q, want copy", args[0])
	}
	if len(args) != 13 {
		t.Errorf("got %d arguments, want 13 (every optional setting rendered): %v", len(args), args)
	}
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !slices.Contains(upstreamCopyFlags, name) {
			t.Errorf("etcdbrctl copy of gardener/etcd-backup-restore defines no --%s", name)
		}
	}
}
