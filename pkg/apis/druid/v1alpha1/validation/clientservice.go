package validation

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// trafficDistributions are the values of a Service's spec.trafficDistribution that Kubernetes knows;
// Gardener writes PreferClose when topology-aware routing is on.
var trafficDistributions = []string{"PreferClose", "PreferSameZone", "PreferSameNode"}

// validateMetadataDruidCopies checks the annotations and labels druid copies onto the pods
// (spec.annotations) and onto the client Service (spec.etcd.clientService): keys and sizes as the
// apiserver checks them, which it would do only when druid writes the object, failing every reconcile.
// The pods' labels (spec.labels) are checked with the pod label rules.
func validateMetadataDruidCopies(spec *druidv1alpha1.EtcdSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateAnnotations(spec.Annotations, fld.Child("annotations"))...)
	if s := spec.Etcd.ClientService; s != nil {
		at := fld.Child("etcd", "clientService")
		errs = append(errs, apivalidation.ValidateAnnotations(s.Annotations, at.Child("annotations"))...)
		errs = append(errs, metav1validation.ValidateLabels(s.Labels, at.Child("labels"))...)
		if s.TrafficDistribution != nil {
			errs = append(errs, validateEnum(*s.TrafficDistribution, at.Child("trafficDistribution"), trafficDistributions...)...)
		}
	}
	return errs
}
