package snapshot

// Layout is the generation of the object-store layout a snapshot was found in.
type Layout string

const (
	// LayoutV2 is the current layout: all snapshots directly below "<prefix>/v2/". It is the only one
	// this project writes.
	LayoutV2 Layout = "v2"
	// LayoutV1 is the legacy layout "<prefix>/v1/Backup-<unix>/<name>", kept readable so that old
	// backups still restore. It is never written.
	LayoutV1 Layout = "v1"
)

// v1DirPrefix starts the name of the per-backup directory of the v1 layout.
const v1DirPrefix = "Backup-"

// FinalSuffix marks the full snapshot taken when a cluster is shut down for good (e.g. before a
// migration): nothing is written after it.
const FinalSuffix = ".final"
