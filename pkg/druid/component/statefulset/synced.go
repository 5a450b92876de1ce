package statefulset

import (
	appsv1 "k8s.io/api/apps/v1"
)

// Synced is the StatefulSet as SyncPlanned left it: the apiserver's answer to its create or patch, or
// the object read when nothing had to change. The status flow that follows a spec flow in the same
// reconcile reads the StatefulSet from druid's cache, which has often not seen a create made a
// millisecond earlier; without the handover the status first reports no StatefulSet and the watch event of
// the create costs a second status write.
type Synced struct {
	StatefulSet *appsv1.StatefulSet
	// Notices name the immutable fields of an adopted StatefulSet that Sync keeps although druid would
	// set them otherwise; the spec flow records them as Warning events.
	Notices []string
	// Events are what the sync did, or could not do, to the members' volumes (volumeexpansion.go); the
	// spec flow records them on the Etcd.
	Events []Event
}

// Event is an event for the spec flow to record on the Etcd.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// Newer returns whichever of cached (from druid's cache) and synced (see Synced) is the later state: synced
// when the cache does not have the StatefulSet yet, has another one (deleted since) or has it at an older
// generation (it has not seen the write); cached otherwise, as it may carry a newer status. Either may be
// nil.
func Newer(cached, synced *appsv1.StatefulSet) *appsv1.StatefulSet {
	if synced == nil || (cached != nil && cached.UID == synced.UID && cached.Generation >= synced.Generation) {
		return cached
	}
	return synced
}
