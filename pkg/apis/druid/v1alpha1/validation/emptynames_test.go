package validation_test

import (
	"testing"

	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

// An optional name written as "" means unset: Gardener's seed provider extensions write
// storageClass: "" for etcd-events (the seed's default class), and druid renders "" like nil for the
// others. Each must be admitted, or every new etcd-events would be refused.
func TestEmptyOptionalNamesMeanUnset(t *testing.T) {
	for name, mutate := range map[string]func(*druidv1alpha1.Etcd){
		"storageClass":        func(e *druidv1alpha1.Etcd) { e.Spec.StorageClass = ptr.To("") },
		"priorityClassName":   func(e *druidv1alpha1.Etcd) { e.Spec.PriorityClassName = ptr.To("") },
		"volumeClaimTemplate": func(e *druidv1alpha1.Etcd) { e.Spec.VolumeClaimTemplate = ptr.To("") },
		"memberNamePrefix":    func(e *druidv1alpha1.Etcd) { e.Spec.MemberNamePrefix = ptr.To("") },
		"images": func(e *druidv1alpha1.Etcd) {
			e.Spec.Etcd.Image, e.Spec.Backup.Image = ptr.To(""), ptr.To("")
		},
	} {
		if errs := validation.ValidateEtcd(with(validEtcd(), mutate)); len(errs) != 0 {
			t.Errorf("%s: \"\" refused: %v; want it taken as unset", name, errs)
		}
	}
}
