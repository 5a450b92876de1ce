package validation

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// validateAdditionalPeerURLs checks spec.etcd.additionalAdvertisePeerURLs, which druid writes verbatim into
// every member's initial-cluster and initial-advertise-peer-urls: a URL etcd cannot parse, one that breaks
// the `name=url,…` list (a comma or an equals sign), or one of the other scheme than peer TLS dictates would
// roll every member into a configuration it cannot start with. An entry is named after a pod of the Etcd
// (`<etcd>-<ordinal>`), once.
func validateAdditionalPeerURLs(etcd *druidv1alpha1.Etcd, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	scheme := etcdpod.Scheme(etcd.Spec.Etcd.PeerUrlTLS != nil)
	seen := map[string]bool{}
	for i, m := range etcd.Spec.Etcd.AdditionalAdvertisePeerURLs {
		entry := fld.Index(i)
		if _, ok := druidv1alpha1.PodOrdinalOf(etcd, m.MemberName); !ok {
			errs = append(errs, field.Invalid(entry.Child("memberName"), m.MemberName, fmt.Sprintf("must name a pod of the Etcd, %s-<ordinal>", etcd.Name)))
		} else if seen[m.MemberName] {
			errs = append(errs, field.Duplicate(entry.Child("memberName"), m.MemberName))
		}
		seen[m.MemberName] = true
		for j, u := range m.URLs {
			if msg := urlProblem(u, scheme, "peer TLS"); msg != "" {
				errs = append(errs, field.Invalid(entry.Child("urls").Index(j), u, msg))
			}
		}
	}
	return errs
}

// urlProblem says what makes u unusable as a URL of scheme, which the TLS setting tls dictates, or "".
func urlProblem(u, scheme, tls string) string {
	if strings.ContainsAny(u, ",= ") {
		return "must not contain a comma, an equals sign or a space (it is written into etcd's initial-cluster list)"
	}
	parsed, err := url.Parse(u)
	switch {
	case err != nil:
		return err.Error()
	case parsed.Scheme != scheme:
		return fmt.Sprintf("must use scheme %s, as the members' URLs do (%s %s)", scheme, tls, map[bool]string{true: "on", false: "off"}[scheme == "https"])
	case parsed.Hostname() == "":
		return "must name a host"
	case parsed.Path != "" && parsed.Path != "/", parsed.RawQuery != "", parsed.User != nil:
		return "must be scheme://host[:port] only"
	}
	return ""
}
