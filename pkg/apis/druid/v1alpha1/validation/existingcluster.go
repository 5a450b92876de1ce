package validation

import (
	"fmt"
	"regexp"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// Bounds of spec.etcd.bootstrapWithExistingCluster, upstream etcd-druid's CRD bounds: every member is an
// entry of every target member's initial-cluster, every endpoint one the sidecar dials.
const (
	MaxExistingClusterMembers         = 10
	MaxExistingClusterPeerURLs        = 5
	MaxExistingClusterClientEndpoints = 10
	maxExistingClusterURLLength       = 2048
	maxExistingMemberNameLength       = 253
)

// existingMemberNamePattern is upstream etcd-druid's pattern of a source member name.
var existingMemberNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// validateBootstrapWithExistingCluster checks spec.etcd.bootstrapWithExistingCluster, whose members druid
// appends to every member's initial-cluster and whose endpoints the sidecar dials to add the members to
// the source cluster: a URL etcd cannot parse or one that breaks the `name=url,…` list rolls every member
// into a configuration it cannot start with; a URL of the other scheme than the target's TLS dictates
// cannot reach a source that serves like the target (the target's certificates and CA are used for it);
// a source member named like a target member would be taken for it (the initial-cluster is keyed by
// member name, and the sidecar tells its own members by their `<etcd>-<ordinal>` names).
func validateBootstrapWithExistingCluster(etcd *druidv1alpha1.Etcd, fld *field.Path) field.ErrorList {
	b := etcd.Spec.Etcd.BootstrapWithExistingCluster
	if b == nil {
		return nil
	}
	var errs field.ErrorList
	membersFld := fld.Child("members")
	switch {
	case len(b.Members) == 0:
		errs = append(errs, field.Required(membersFld, "the members of the existing cluster to join"))
	case len(b.Members) > MaxExistingClusterMembers:
		errs = append(errs, field.TooMany(membersFld, len(b.Members), MaxExistingClusterMembers))
	}
	peerScheme := etcdpod.Scheme(etcd.Spec.Etcd.PeerUrlTLS != nil)
	seen := map[string]bool{}
	for i, m := range b.Members {
		entry := membersFld.Index(i)
		errs = append(errs, validateExistingMemberName(etcd, m.Name, seen, entry.Child("name"))...)
		seen[m.Name] = true
		urlsFld := entry.Child("peerUrls")
		switch {
		case len(m.PeerURLs) == 0:
			errs = append(errs, field.Required(urlsFld, "the peer URLs of the existing member"))
		case len(m.PeerURLs) > MaxExistingClusterPeerURLs:
			errs = append(errs, field.TooMany(urlsFld, len(m.PeerURLs), MaxExistingClusterPeerURLs))
		}
		errs = append(errs, validateExistingClusterURLs(m.PeerURLs, peerScheme, "peer TLS", urlsFld)...)
	}
	endpointsFld := fld.Child("clientEndpoints")
	switch {
	case len(b.ClientEndpoints) == 0:
		errs = append(errs, field.Required(endpointsFld, "client endpoints of the existing cluster, for adding the members to it"))
	case len(b.ClientEndpoints) > MaxExistingClusterClientEndpoints:
		errs = append(errs, field.TooMany(endpointsFld, len(b.ClientEndpoints), MaxExistingClusterClientEndpoints))
	}
	clientScheme := etcdpod.Scheme(etcd.Spec.Etcd.ClientUrlTLS != nil)
	errs = append(errs, validateExistingClusterURLs(b.ClientEndpoints, clientScheme, "client TLS", endpointsFld)...)
	return errs
}

// validateExistingMemberName checks one source member's name: a DNS label-like etcd member name (upstream's
// pattern), unique, and not one of the target's member or pod names (`<etcd>-…`, `<prefix>-<etcd>-…`).
func validateExistingMemberName(etcd *druidv1alpha1.Etcd, name string, seen map[string]bool, fld *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fld, "the etcd member name in the existing cluster")}
	}
	var errs field.ErrorList
	if len(name) > maxExistingMemberNameLength {
		errs = append(errs, field.TooLong(fld, name, maxExistingMemberNameLength))
	}
	if !existingMemberNamePattern.MatchString(name) {
		errs = append(errs, field.Invalid(fld, name, "must consist of lower case alphanumeric characters or '-', and start and end with an alphanumeric character"))
	}
	if seen[name] {
		errs = append(errs, field.Duplicate(fld, name))
	}
	for _, own := range targetMemberPrefixes(etcd) {
		if strings.HasPrefix(name, own) {
			errs = append(errs, field.Invalid(fld, name, fmt.Sprintf("must not start with %q: the members of this Etcd are named so", own)))
			break
		}
	}
	return errs
}

// targetMemberPrefixes are the name prefixes of the target's pods and members.
func targetMemberPrefixes(etcd *druidv1alpha1.Etcd) []string {
	prefixes := []string{etcd.Name + "-"}
	if p := etcd.Spec.MemberNamePrefix; p != nil && *p != "" {
		prefixes = append(prefixes, *p+"-"+etcd.Name+"-")
	}
	return prefixes
}

// validateExistingClusterURLs checks URLs of the source cluster: scheme://host[:port], the scheme the
// target's TLS setting (what) dictates, each once.
func validateExistingClusterURLs(urls []string, scheme, what string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, u := range urls {
		switch {
		case len(u) > maxExistingClusterURLLength:
			errs = append(errs, field.TooLong(fld.Index(i), u, maxExistingClusterURLLength))
		case seen[u]:
			errs = append(errs, field.Duplicate(fld.Index(i), u))
		default:
			if msg := urlProblem(u, scheme, what); msg != "" {
				errs = append(errs, field.Invalid(fld.Index(i), u, msg))
			}
		}
		seen[u] = true
	}
	return errs
}

// validateBootstrapWithExistingClusterUpdate makes the field creation-only, as upstream etcd-druid's CRD
// does: members join an existing cluster instead of bootstrapping one, which only a new Etcd can do; an
// Etcd that runs already has its cluster. It may be removed (after the join and the removal of the
// source members, docs/operations.md), but not changed: the members that joined were added by the old
// value, and a changed one would name a cluster they are not in.
func validateBootstrapWithExistingClusterUpdate(newEtcd, oldEtcd *druidv1alpha1.Etcd, fld *field.Path) field.ErrorList {
	newValue, oldValue := newEtcd.Spec.Etcd.BootstrapWithExistingCluster, oldEtcd.Spec.Etcd.BootstrapWithExistingCluster
	switch {
	case newValue == nil:
		return nil
	case oldValue == nil:
		return field.ErrorList{field.Forbidden(fld, "can only be set when the Etcd is created: the members of a running Etcd already have their cluster")}
	case !apiequality.Semantic.DeepEqual(newValue, oldValue):
		return field.ErrorList{field.Forbidden(fld, "cannot be changed after creation; it may only be removed")}
	}
	return nil
}
