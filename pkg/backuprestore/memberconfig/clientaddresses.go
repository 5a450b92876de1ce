package memberconfig

import (
	"net/url"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// MembersByClientAddress maps the address ("host:port") of every pod's advertised client URLs to the pod's
// member name, which is also the name of its member lease. Empty when the template names one member's URLs
// only (no pods to tell apart); pods whose member does not resolve are left out.
func MembersByClientAddress(t Template) map[string]string {
	pods, ok := t[etcdpod.KeyAdvertiseClientURLs].(map[string]any)
	if !ok {
		return nil
	}
	out := map[string]string{}
	for pod := range pods {
		cfg, err := Resolve(t, pod, nil)
		if err != nil {
			continue
		}
		for _, raw := range cfg.Member.ClientURLs {
			if u, err := url.Parse(raw); err == nil {
				out[u.Host] = cfg.Member.Name
			}
		}
	}
	return out
}
