// Package heartbeat renews this member's lease so that druid can derive the Etcd status without talking to
// etcd: holderIdentity `<memberID hex>:<clusterID hex>:<Leader|Member>`, renewTime now, and the annotation
// `member.etcd.gardener.cloud/tls-enabled` telling whether the cluster knows this member by https peer URLs
// only (as upstream etcd-druid names them). Druid waits for that annotation before it scales a cluster
// up, so it reports the cluster's view, not the configuration's: it turns "true" only once
// the peer URL switch is committed.
//
// While the member sees no etcd leader, the lease also carries its no-leader report (NoLeaderWatch,
// podwire.AnnotationNoLeader); a member whose etcd does not run because it lost its data writes that
// report alone, without renewing, so that druid can tell a quorum lost for good from silent members.
//
// Renewal is per member and best effort: a failed renewal is logged and retried at the next beat, because
// an expiring lease is itself the signal druid acts on.
package heartbeat
