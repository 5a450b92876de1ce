package validation

import (
	"net"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// validateExternallyManagedMemberAddresses checks spec.externallyManagedMemberAddresses as upstream
// etcd-druid's API documents it: IPv4/IPv6 addresses or host names, no scheme or port, no address twice
// (the CRD lists them as a set), and, when set, exactly one per member (spec.replicas; upstream's CRD rule).
func validateExternallyManagedMemberAddresses(spec *druidv1alpha1.EtcdSpec, fld *field.Path) field.ErrorList {
	addresses := spec.ExternallyManagedMemberAddresses
	if addresses == nil {
		return nil
	}
	var errs field.ErrorList
	if int32(len(addresses)) != spec.Replicas {
		errs = append(errs, field.Invalid(fld, len(addresses), "must hold exactly one address per member (spec.replicas)"))
	}
	seen := map[string]bool{}
	for i, a := range addresses {
		if seen[a] {
			errs = append(errs, field.Duplicate(fld.Index(i), a))
		}
		seen[a] = true
		if net.ParseIP(a) != nil {
			continue
		}
		if msgs := utilvalidation.IsDNS1123Subdomain(a); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Index(i), a, "must be an IPv4 or IPv6 address or a host name, without scheme or port"))
		}
	}
	return errs
}
