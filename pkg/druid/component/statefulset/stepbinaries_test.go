package statefulset

import (
	"context"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
)

const (
	ourWrapperImage       = "ghcr.io/gardener-etcd/etcd-wrapper:v0.1.0"
	ourBackupRestoreImage = "ghcr.io/gardener-etcd/etcdbrctl:v0.1.0"
)

var stepFlags = []string{"--step-etcd-3.5-binary=/usr/local/bin/etcd-3.5", "--step-etcd-3.6-binary=/usr/local/bin/etcd-3.6"}

// Only our wrapper image carries the old etcd servers and takes the flags that name them: the upstream
// wrapper (by repository or forced) would refuse them as unknown, and the sidecar never gets them.
func TestStepBinariesOnlyForOurWrapperImage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		images config.Images
		want   bool
	}{
		{name: "ours", images: config.Images{EtcdWrapper: ourWrapperImage, BackupRestore: ourBackupRestoreImage}, want: true},
		{name: "our wrapper, upstream sidecar", images: config.Images{EtcdWrapper: ourWrapperImage, BackupRestore: upstreamBackupRestoreImage}, want: true},
		{name: "upstream", images: config.Images{EtcdWrapper: upstreamWrapperImage, BackupRestore: upstreamBackupRestoreImage}},
		{name: "upstream wrapper, our sidecar", images: config.Images{EtcdWrapper: upstreamWrapperImage, BackupRestore: ourBackupRestoreImage}},
		{name: "ours forced upstream", images: config.Images{EtcdWrapper: ourWrapperImage, BackupRestore: ourBackupRestoreImage,
			Compatibility: imagecaps.Config{Mode: imagecaps.ModeUpstream}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, etcd := range []string{"plain", "full"} {
				e := newEtcd()
				if etcd == "full" {
					e = fullEtcd()
				}
				tmpl := podTemplate(e, renderInput{images: tc.images, configChecksum: "c"})
				etcdArgs, brArgs := tmpl.Spec.Containers[0].Args, tmpl.Spec.Containers[1].Args
				var got []string
				for _, a := range etcdArgs {
					if strings.HasPrefix(a, "--step-etcd-") {
						got = append(got, a)
					}
				}
				if tc.want && !slices.Equal(got, stepFlags) {
					t.Errorf("%s: etcd container's step flags %v, want %v", etcd, got, stepFlags)
				}
				if !tc.want && len(got) != 0 {
					t.Errorf("%s: etcd container gets %v for an upstream wrapper image", etcd, got)
				}
				if slices.ContainsFunc(brArgs, func(a string) bool { return strings.HasPrefix(a, "--step-etcd-") }) {
					t.Errorf("%s: the backup-restore container gets step flags: %v", etcd, brArgs)
				}
			}
		})
	}
}

// The step flags are constants: every reconcile renders the same template and checksum, so an Etcd on
// our images rolls once when druid starts passing them, and never again for them.
func TestStepBinariesRenderStably(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	for _, images := range []config.Images{
		{EtcdWrapper: ourWrapperImage, BackupRestore: ourBackupRestoreImage},
		{EtcdWrapper: upstreamWrapperImage, BackupRestore: upstreamBackupRestoreImage},
	} {
		first, err := Render(ctx, c, images, config.LocalBackup{}, fullEtcd())
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			again, err := Render(ctx, c, images, config.LocalBackup{}, fullEtcd())
			if err != nil {
				t.Fatal(err)
			}
			if again.Checksum != first.Checksum {
				t.Fatalf("%s: checksum %s, then %s", images.EtcdWrapper, first.Checksum, again.Checksum)
			}
			if a, b := first.template.Spec.Containers[0].Args, again.template.Spec.Containers[0].Args; !slices.Equal(a, b) {
				t.Fatalf("%s: etcd args %v, then %v", images.EtcdWrapper, a, b)
			}
		}
	}
}
