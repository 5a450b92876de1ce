package podwire

// Flags of the surviving-data Jobs (CommandDataRevision, CommandPreserveData): druid renders them and
// etcdbrctl defines them.
const (
	// FlagDataDir is etcd's data directory, only read by the Jobs.
	FlagDataDir = "data-dir"
	// FlagScratchDir holds the copy of the data the Jobs' throwaway etcd runs on.
	FlagScratchDir = "scratch-dir"
	// FlagTerminationMessagePath is the file the Job's result is written to besides stdout.
	FlagTerminationMessagePath = "termination-message-path"
	// FlagOwner is the Etcd ("<namespace>/<name>") the data must belong to.
	FlagOwner = "owner"
	// FlagExpectRevision is the revision preserve-data must find in the data.
	FlagExpectRevision = "expect-revision"
)

// Arg is the command-line argument that sets the flag name to value: --name=value.
func Arg(name, value string) string { return "--" + name + "=" + value }
