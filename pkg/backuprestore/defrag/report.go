package defrag

import "sync"

// Report is what the backup leader's NOSPACE recovery tells the rest of the sidecar beyond its metrics:
// why it cannot disarm the alarm. The member lease heartbeat publishes it, so that druid can say it in the
// Etcd's status. A nil Report reports nothing.
type Report struct {
	mu        sync.Mutex
	overQuota string
}

// OverQuota is the reason the recovery cannot disarm NOSPACE (the data in use does not fit under the
// quota), or "" while it can or no recovery failed for that reason in the current term.
func (r *Report) OverQuota() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.overQuota
}

func (r *Report) setOverQuota(reason string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.overQuota = reason
}
