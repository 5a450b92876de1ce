package podwire

// WrapperPhase is what the etcd wrapper does, served as plain text on its GET /phase. The sidecar starts
// an initialization of the data directory only while the wrapper waits for one.
type WrapperPhase string

const (
	// PhaseWaitingForInitialization: etcd has not been started by this wrapper and the wrapper waits for
	// the sidecar's initialization. Only in this phase may the sidecar initialize (touch the data dir).
	PhaseWaitingForInitialization WrapperPhase = "WaitingForInitialization"
	// PhaseStartingEtcd: the initialization succeeded; the wrapper fetches the configuration and starts etcd.
	PhaseStartingEtcd WrapperPhase = "StartingEtcd"
	// PhaseRunning: etcd runs on the data directory.
	PhaseRunning WrapperPhase = "Running"
	// PhaseStopped: etcd stopped; the wrapper process is about to end.
	PhaseStopped WrapperPhase = "Stopped"
)
