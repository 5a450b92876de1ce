// Package wrapper is the etcd container of an etcd pod (`etcd-wrapper start-etcd`): it lets the
// backup-restore sidecar prepare the data directory, takes etcd's configuration from the sidecar and runs
// etcd embedded in its own process, so that the container's lifetime is etcd's lifetime.
//
// Sequence: poll the sidecar's GET /initialization/status, request GET /initialization/start with mode
// `sanity` when the previous etcd stopped gracefully (a marker file in the data volume says so) and `full`
// otherwise, wait for Successful (Failed ends the wrapper with the sidecar's reason), fetch GET /config and
// start etcd with it (a member that joins a running cluster with empty data once a member of that cluster
// answers, join.go). Meanwhile the wrapper serves GET /readyz (the pod's readiness), GET /phase (whether it
// waits for an initialization, starts or runs etcd: the sidecar initializes only while it waits) and POST
// /stop (loopback callers only: the sidecar of the pod) on its own port, in plain HTTP and, for the
// upstream etcd-druid's HTTPS readiness probe, in HTTPS with a self-signed certificate (tlsport.go). /stop and SIGTERM stop etcd gracefully, leave the marker and end the process with exit code 0:
// the kubelet restarts the container, which starts over with a sanity check. Any other end of etcd is an
// error, leaves no marker, and the next start asks for a full check.
package wrapper
