// Package snapshot is the model of the backups the sidecar writes to and reads from an object store:
// full and incremental (delta) snapshots, the object names that carry their revisions, the
// compression of their contents, and the "snap stream" a restore replays.
//
// The names are a wire contract with the upstream sidecar: a backup written by either side must be
// listed, ordered and restored by the other. Therefore the layout is fixed:
//
//	<prefix>/v2/Full-00000000-<lastRev %08d>-<unix>[.gz|.Z|.zlib][.final]
//	<prefix>/v2/Incr-<startRev %08d>-<lastRev %08d>-<unix>[.gz|.Z|.zlib]
//	<prefix>/v1/Backup-<unix>/Full-…|Incr-…   (legacy, read-only)
package snapshot
