package podwire

import "fmt"

// InitMode is how thoroughly the sidecar's initializer checks the data directory: the `mode` query value
// of the sidecar's GET /initialization/start, which the wrapper chooses.
type InitMode string

const (
	// InitFull validates everything; the wrapper asks for it after a crash or on first start.
	InitFull InitMode = "full"
	// InitSanity is enough after a graceful exit of etcd, when the data on disk was written completely.
	InitSanity InitMode = "sanity"
)

// ParseInitMode accepts the query values of GET /initialization/start; empty means full.
func ParseInitMode(s string) (InitMode, error) {
	switch InitMode(s) {
	case "", InitFull:
		return InitFull, nil
	case InitSanity:
		return InitSanity, nil
	}
	return "", fmt.Errorf("unknown initialization mode %q, want %q or %q", s, InitFull, InitSanity)
}

// InitStatus is the initialization state the wrapper polls on the sidecar's GET /initialization/status
// (the plain-text body).
type InitStatus string

const (
	InitNew        InitStatus = "New"
	InitProgress   InitStatus = "Progress"
	InitSuccessful InitStatus = "Successful"
	InitFailed     InitStatus = "Failed"
)

// HeaderInitializationError carries the reason of a Failed initialization next to the plain-text status,
// which must stay exactly "Failed" for wrappers that compare the body.
const HeaderInitializationError = "X-Initialization-Error"
