package podwire

import (
	"encoding/json"
	"fmt"
)

// Subcommands of etcdbrctl that druid's quorum-loss recovery runs as Jobs on the surviving member volumes.
// Each reports its result as one JSON line on stdout and as the pod's termination message (see
// FlagTerminationMessagePath), where druid reads it from the Job's pod status.
const (
	CommandDataRevision = "data-revision"
	CommandPreserveData = "preserve-data"
)

// DataRevision is the result of data-revision. Empty (no member directory: never initialized, or
// wiped) tells druid the volume holds nothing to lose; valid:false without it is data that is there but
// cannot be served (corrupt, incomplete), which druid does not delete on its own.
type DataRevision struct {
	Revision int64  `json:"revision"`
	Valid    bool   `json:"valid"`
	Empty    bool   `json:"empty,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// MovedAside are the data directories the initializer moved aside and kept on the volume: data that
	// is not served but may hold writes found nowhere else, which deleting the volume would lose.
	MovedAside []string `json:"movedAside,omitempty"`
}

// Encode is the result's message: one line of JSON, without the line break.
func (r DataRevision) Encode() ([]byte, error) { return json.Marshal(r) }

// ParseDataRevision reads the message of data-revision. A message without a revision, or valid data
// without a positive one, is an error.
func ParseDataRevision(message string) (DataRevision, error) {
	var out struct {
		DataRevision
		Revision *int64 `json:"revision"`
	}
	if err := json.Unmarshal([]byte(message), &out); err != nil || out.Revision == nil || (out.Valid && *out.Revision <= 0) {
		return DataRevision{}, fmt.Errorf("unexpected result %q", message)
	}
	r := out.DataRevision
	r.Revision = *out.Revision
	return r, nil
}

// PreservedData is the result of preserve-data: the full snapshot in the store at Revision, uploaded by
// this run or found there.
type PreservedData struct {
	Revision int64  `json:"revision"`
	Snapshot string `json:"snapshot"`
	Uploaded bool   `json:"uploaded"`
}

// Encode is the result's message: one line of JSON, without the line break.
func (r PreservedData) Encode() ([]byte, error) { return json.Marshal(r) }

// ParsePreservedData reads the message of preserve-data; one that names no snapshot is an error.
func ParsePreservedData(message string) (PreservedData, error) {
	var out PreservedData
	if err := json.Unmarshal([]byte(message), &out); err != nil || out.Snapshot == "" {
		return out, fmt.Errorf("unexpected result %q", message)
	}
	return out, nil
}
