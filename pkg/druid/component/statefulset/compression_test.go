package statefulset

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// The sidecar's compression flags as upstream etcd-druid renders them (internal/component/statefulset
// builder.go, getBackupStoreCommandArgs): always both, with its API's defaults for what spec.backup.compression
// leaves out (enabled true, policy gzip), for either image kind. An absent field therefore compresses with
// gzip, and `enabled: false` is passed on, so that a sidecar whose own default is on (upstream's) does not
// compress either.
func TestCompressionFlagsAsUpstreamDruid(t *testing.T) {
	for _, tc := range []struct {
		name        string
		compression *druidv1alpha1.CompressionSpec
		want        []string
	}{
		{name: "absent", want: []string{"--compress-snapshots=true", "--compression-policy=gzip"}},
		{name: "empty", compression: &druidv1alpha1.CompressionSpec{}, want: []string{"--compress-snapshots=true", "--compression-policy=gzip"}},
		{name: "enabled", compression: &druidv1alpha1.CompressionSpec{Enabled: ptr.To(true)},
			want: []string{"--compress-snapshots=true", "--compression-policy=gzip"}},
		{name: "disabled", compression: &druidv1alpha1.CompressionSpec{Enabled: ptr.To(false)},
			want: []string{"--compress-snapshots=false", "--compression-policy=gzip"}},
		{name: "policy only", compression: &druidv1alpha1.CompressionSpec{Policy: ptr.To(druidv1alpha1.LzwCompression)},
			want: []string{"--compress-snapshots=true", "--compression-policy=lzw"}},
		{name: "disabled with policy", compression: &druidv1alpha1.CompressionSpec{Enabled: ptr.To(false), Policy: ptr.To(druidv1alpha1.ZlibCompression)},
			want: []string{"--compress-snapshots=false", "--compression-policy=zlib"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			etcd := fullEtcd(func(e *druidv1alpha1.Etcd) { e.Spec.Backup.SnapshotCompression = tc.compression })
			for kind, args := range map[string][]string{
				"ours": BackupRestoreArgs(etcd, oursCaps.BackupRestore), "upstream": BackupRestoreArgs(etcd, upstreamCaps.BackupRestore),
			} {
				var got []string
				for _, a := range args {
					if strings.HasPrefix(a, "--compress") {
						got = append(got, a)
					}
				}
				g.Expect(got).To(HaveExactElements(tc.want), "%s image", kind)
			}
		})
	}
}
