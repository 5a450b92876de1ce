package defrag

// Defaults of the thresholds (see Thresholds).
const (
	DefaultFragmentationThreshold = 0.5
	DefaultQuotaThreshold         = 0.8
	// DefaultMinReclaimable keeps the thresholds from defragmenting (and taking a full snapshot after) for
	// free pages that cost little: small databases, or data in use just under the quota threshold.
	DefaultMinReclaimable = 32 << 20
)

// Trigger is why a defragmentation ran; it labels etcdbr_defragmentation_runs_total.
type Trigger string

// The triggers.
const (
	TriggerSchedule      Trigger = "schedule"
	TriggerFragmentation Trigger = "fragmentation"
	TriggerQuota         Trigger = "quota"
	TriggerNoSpace       Trigger = "nospace"
)

// Thresholds start a defragmentation besides the schedule, when a check finds one member's database
// over either of them. A zero threshold is off.
type Thresholds struct {
	// Fragmentation: the share of a member's database file that is free pages, (DBSize -
	// DBSizeInUse) / DBSize, above which the member is defragmented, provided that at least
	// MinReclaimable bytes come back.
	Fragmentation float64
	// MinReclaimable is the least either threshold's defragmentation must give back. For the quota
	// threshold it is the margin: with the data in use just under the threshold a few free pages would
	// cross it at every check, defragmenting (and moving leadership) again and again for nothing.
	MinReclaimable int64
	// Quota: the share of a member's quota above which its database file is defragmented before etcd
	// refuses writes, provided that the data in use fits below it (otherwise defragmentation cannot
	// help, and repeating it would only stall the member) and MinReclaimable comes back.
	Quota float64
}

// crossed is the threshold s is over, "" if none; the quota threshold first, as the more urgent one.
func (t Thresholds) crossed(s Space) Trigger {
	if t.Quota > 0 && s.Quota > 0 && float64(s.DBSize) > t.Quota*float64(s.Quota) && float64(s.DBSizeInUse) < t.Quota*float64(s.Quota) &&
		s.Reclaimable() >= t.MinReclaimable {
		return TriggerQuota
	}
	if t.Fragmentation > 0 && s.Fragmentation() > t.Fragmentation && s.Reclaimable() >= t.MinReclaimable {
		return TriggerFragmentation
	}
	return ""
}

// trigger is the threshold a member crosses (the quota threshold if any member crosses it), "" if none.
func (t Thresholds) trigger(spaces []Space) Trigger {
	var out Trigger
	for _, s := range spaces {
		switch t.crossed(s) {
		case TriggerQuota:
			return TriggerQuota
		case TriggerFragmentation:
			out = TriggerFragmentation
		}
	}
	return out
}

// needs picks the members over a threshold: a run a threshold started defragments only those, so that it
// stalls no other member, moves leadership only for the leader, and a new backup leader repeating it
// finds nothing left to do.
func (t Thresholds) needs(s Space) bool { return t.crossed(s) != "" }
