package webhook

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// The restore source annotations are admitted on a new Etcd with a valid source and target, refused with
// the annotation named when the source is the Etcd's own prefix, both targets are given, the revision is
// not a number or the time not RFC3339, and refused when added or changed later; removing them passes.
func TestValidationWebhookChecksTheRestoreSourceAnnotations(t *testing.T) {
	ctx := context.Background()
	source := map[string]string{druidv1alpha1.RestoreSourcePrefixAnnotation: "shoot--dev--old/etcd-main"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range source {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	for name, tc := range map[string]struct {
		annotations map[string]string
		want        []string
	}{
		"the own prefix": {
			nil,
			[]string{"metadata.annotations[restore.gardener-etcd.io/source-prefix]", "is spec.backup.store.prefix, this Etcd's own"},
		},
		"revision and time": {
			with(map[string]string{druidv1alpha1.RestoreSourceRevisionAnnotation: "42", druidv1alpha1.RestoreSourceTimeAnnotation: "2026-11-28T14:00:00Z"}),
			[]string{"metadata.annotations[restore.gardener-etcd.io/source-time]", "exclusive with restore.gardener-etcd.io/source-revision"},
		},
		"a revision that is no number": {
			with(map[string]string{druidv1alpha1.RestoreSourceRevisionAnnotation: "latest"}),
			[]string{"metadata.annotations[restore.gardener-etcd.io/source-revision]", "must be a positive revision number"},
		},
		"a time that is not RFC3339": {
			with(map[string]string{druidv1alpha1.RestoreSourceTimeAnnotation: "yesterday"}),
			[]string{"metadata.annotations[restore.gardener-etcd.io/source-time]", "must be an RFC3339 time"},
		},
		"a target without a source": {
			map[string]string{druidv1alpha1.RestoreSourceRevisionAnnotation: "42"},
			[]string{"metadata.annotations[restore.gardener-etcd.io/source-prefix]", "needs the source's prefix"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			etcd := exampleEtcd(t)
			etcd.Annotations = tc.annotations
			if etcd.Annotations == nil { // the own prefix
				etcd.Annotations = map[string]string{druidv1alpha1.RestoreSourcePrefixAnnotation: etcd.Spec.Backup.Store.Prefix}
			}
			err := env.Client.Create(ctx, etcd)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			for _, w := range tc.want {
				g.Expect(err.Error()).To(ContainSubstring(w))
			}
		})
	}

	t.Run("admitted at creation, refused when added or changed later, removable", func(t *testing.T) {
		g := NewWithT(t)
		etcd := exampleEtcd(t)
		etcd.Annotations = with(map[string]string{druidv1alpha1.RestoreSourceRevisionAnnotation: "42"})
		g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())

		etcd.Annotations[druidv1alpha1.RestoreSourceRevisionAnnotation] = "43"
		err := env.Client.Update(ctx, etcd)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		g.Expect(err.Error()).To(And(ContainSubstring("metadata.annotations[restore.gardener-etcd.io/source-revision]"),
			ContainSubstring("honoured only when the Etcd is created")))

		etcd.Annotations = nil
		g.Expect(env.Client.Update(ctx, etcd)).To(Succeed())

		etcd.Annotations = source
		err = env.Client.Update(ctx, etcd)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		g.Expect(err.Error()).To(ContainSubstring("metadata.annotations[restore.gardener-etcd.io/source-prefix]"))
	})
}
