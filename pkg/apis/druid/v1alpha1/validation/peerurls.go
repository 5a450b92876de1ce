package validation

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// validateAdditionalPeerURLs checks spec.etcd.additionalAdvertisePeerUrls, which druid writes verbatim into
// every member's initial-cluster and initial-advertise-peer-urls: a URL etcd cannot parse, one that breaks
// the `name=url,…` list (a comma or an equals sign), or one of the other scheme than peer TLS dictates would
// roll every member into a configuration it cannot start with. An entry is named after a pod of the Etcd
// (`<etcd>-<ordinal>`), once.
func validateAdditionalPeerURLs(etcdName string, c *druidv1alpha1.EtcdConfig, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	scheme := "http"
	if c.PeerUrlTLS != nil {
		scheme = "https"
	}
	seen := map[string]bool{}
	for i, m := range c.AdditionalAdvertisePeerURLs {
		entry := fld.Index(i)
		if !isPodName(etcdName, m.MemberName) {
			errs = append(errs, field.Invalid(entry.Child("memberName"), m.MemberName, fmt.Sprintf("must name a pod of the Etcd, %s-<ordinal>", etcdName)))
		} else if seen[m.MemberName] {
			errs = append(errs, field.Duplicate(entry.Child("memberName"), m.MemberName))
		}
		seen[m.MemberName] = true
		for j, u := range m.URLs {
			if msg := peerURLProblem(u, scheme); msg != "" {
				errs = append(errs, field.Invalid(entry.Child("urls").Index(j), u, msg))
			}
		}
	}
	return errs
}

// isPodName tells whether name is `<etcd>-<ordinal>`.
func isPodName(etcdName, name string) bool {
	ordinal, ok := strings.CutPrefix(name, etcdName+"-")
	if !ok {
		return false
	}
	n, err := strconv.Atoi(ordinal)
	return err == nil && n >= 0 && strconv.Itoa(n) == ordinal
}

// peerURLProblem says what makes u unusable as a peer URL of scheme, or "".
func peerURLProblem(u, scheme string) string {
	if strings.ContainsAny(u, ",= ") {
		return "must not contain a comma, an equals sign or a space (it is written into etcd's initial-cluster list)"
	}
	parsed, err := url.Parse(u)
	switch {
	case err != nil:
		return err.Error()
	case parsed.Scheme != scheme:
		return fmt.Sprintf("must use scheme %s, as the members' peer URLs do (peer TLS %s)", scheme, map[bool]string{true: "on", false: "off"}[scheme == "https"])
	case parsed.Hostname() == "":
		return "must name a host"
	case parsed.Path != "" && parsed.Path != "/", parsed.RawQuery != "", parsed.User != nil:
		return "must be scheme://host[:port] only"
	}
	return ""
}
