package vpa_test

import (
	"testing"

	"github.com/gardener-etcd/gardener-etcd/pkg/vpa"
)

func TestCRDsServeV1(t *testing.T) {
	crds, err := vpa.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, crd := range crds {
		names[crd.Name] = true
		if crd.Spec.Group != "autoscaling.k8s.io" {
			t.Errorf("%s: got group %q, want autoscaling.k8s.io", crd.Name, crd.Spec.Group)
		}
		served := false
		for _, v := range crd.Spec.Versions {
			served = served || (v.Name == "v1" && v.Served && v.Storage)
		}
		if !served {
			t.Errorf("%s: v1 is not the served storage version", crd.Name)
		}
	}
	for _, want := range []string{"verticalpodautoscalers.autoscaling.k8s.io", "verticalpodautoscalercheckpoints.autoscaling.k8s.io"} {
		if !names[want] {
			t.Errorf("got CRDs %v, want %s among them", names, want)
		}
	}
}
