// Package podwire is the runtime wire between druid, the backup-restore sidecar (etcdbrctl) and the etcd
// wrapper, spelled once: what one of them sends and another reads while the pod or a Job runs. It holds
// the wrapper's phases (GET /phase), the sidecar's initialization modes and statuses
// (/initialization/*), the snapshot record answered on /snapshot/full and /snapshot/delta, the results
// of the surviving-data Jobs (data-revision, preserve-data) with their encoding and parsing, and the names
// of the flags druid renders and the binaries define.
//
// Like pkg/etcdpod, which holds the pod's static shape (paths, ports, names), it sits below druid, the
// sidecar and the wrapper and imports nothing of them, so that none links another to learn a spelling and
// the wrapper and the sidecar stay independent of each other. Every value is on the wire of the upstream
// components too: a changed spelling breaks pods and Jobs rendered by the upstream druid, or
// druid's reading of an upstream sidecar's answers.
package podwire
