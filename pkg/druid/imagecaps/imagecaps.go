// Package imagecaps decides, per container image, whether druid renders for our etcdbrctl and etcd-wrapper
// or for upstream Gardener's (gardener/etcd-backup-restore, gardener/etcd-wrapper), and names what each
// kind accepts and serves where druid's rendering depends on it. The renderers (the StatefulSet's
// containers, the compaction Job) keep one rendering path and switch single flags and probes on these
// capabilities; docs/compatibility.md, "Running the upstream images under our druid", lists them.
package imagecaps

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/gardener-etcd/gardener-etcd/pkg/imageref"
)

// Kind says whose binary an image runs.
type Kind string

const (
	// Ours is this project's etcdbrctl or etcd-wrapper.
	Ours Kind = "ours"
	// Upstream is Gardener's etcd-backup-restore (etcdbrctl) or etcd-wrapper, as upstream etcd-druid runs
	// them.
	Upstream Kind = "upstream"
)

// Mode is the operator's setting (--image-compatibility). It is a pflag.Value: Set takes the former
// spelling "deployed" as "upstream".
type Mode string

const (
	// ModeAuto decides per image reference: a repository that UpstreamRepositories matches is Upstream,
	// any other is Ours.
	ModeAuto Mode = "auto"
	// ModeOurs treats every image as ours (druid's rendering before capabilities existed).
	ModeOurs Mode = "ours"
	// ModeUpstream treats every image as an upstream one.
	ModeUpstream Mode = "upstream"

	// ModeDeployedAlias is the former spelling of ModeUpstream, still accepted wherever a mode is read
	// (flag, chart value, Config) and normalised to ModeUpstream.
	ModeDeployedAlias Mode = "deployed"
)

// Normalize returns the mode with its former spelling "deployed" replaced by ModeUpstream; any other
// value, valid or not, is returned as is (Validate refuses the invalid ones).
func (m Mode) Normalize() Mode {
	if m == ModeDeployedAlias {
		return ModeUpstream
	}
	return m
}

// String implements pflag.Value.
func (m *Mode) String() string { return string(*m) }

// Set implements pflag.Value: it stores the normalised value. An unknown value is stored too, so that
// Validate reports it together with the other settings' errors.
func (m *Mode) Set(s string) error {
	*m = Mode(strings.TrimSpace(s)).Normalize()
	return nil
}

// Type implements pflag.Value.
func (m *Mode) Type() string { return "string" }

// DefaultUpstreamRepositories matches the repositories Gardener publishes etcdbrctl and etcd-wrapper
// under (upstream etcd-druid's image vector: europe-docker.pkg.dev/gardener-project/releases/…, the
// public and snapshot paths next to it, and the former eu.gcr.io/gardener-project registry). Only the
// repository is matched, never the tag: both sides tag v0.x.
const DefaultUpstreamRepositories = `^(europe-docker\.pkg\.dev/gardener-project/(releases|public|snapshots)|eu\.gcr\.io/gardener-project)/gardener/(etcdbrctl|etcd-wrapper)$`

// Config is druid's setting of how images are told apart.
type Config struct {
	// Mode forces a kind for every image, or (auto) lets UpstreamRepositories decide per image.
	Mode Mode
	// UpstreamRepositories is a regular expression over an image's repository (the reference without tag
	// and digest); in auto mode a match makes the image Upstream. Empty: DefaultUpstreamRepositories.
	UpstreamRepositories string
}

// Default fills the unset fields and normalises the former spelling of the mode ("deployed").
func (c *Config) Default() {
	c.Mode = c.Mode.Normalize()
	if c.Mode == "" {
		c.Mode = ModeAuto
	}
	c.UpstreamRepositories = c.pattern()
}

// Validate refuses an unknown mode and a pattern that does not compile, naming both at once.
func (c Config) Validate() error {
	var errs []error
	switch c.Mode.Normalize() {
	case ModeAuto, ModeOurs, ModeUpstream, "":
	default:
		errs = append(errs, fmt.Errorf("image compatibility: mode must be one of %q, %q, %q (or its former spelling %q), got %q",
			ModeAuto, ModeOurs, ModeUpstream, ModeDeployedAlias, c.Mode))
	}
	if _, err := c.upstreamRepositories(); err != nil {
		errs = append(errs, fmt.Errorf("image compatibility: upstream repositories: %w", err))
	}
	return errors.Join(errs...)
}

func (c Config) pattern() string {
	if c.UpstreamRepositories != "" {
		return c.UpstreamRepositories
	}
	return DefaultUpstreamRepositories
}

// KindOf decides the kind of one image reference. A pattern that does not compile (Validate refuses it at
// start-up) matches nothing.
func (c Config) KindOf(image string) Kind {
	switch c.Mode.Normalize() {
	case ModeOurs:
		return Ours
	case ModeUpstream:
		return Upstream
	}
	re, err := c.upstreamRepositories()
	if err == nil && re.MatchString(repository(image)) {
		return Upstream
	}
	return Ours
}

// For returns the capabilities of the pod's two images.
func (c Config) For(backupRestoreImage, etcdWrapperImage string) Caps {
	return Caps{BackupRestore: BackupRestoreOf(c.KindOf(backupRestoreImage)), EtcdWrapper: EtcdWrapperOf(c.KindOf(etcdWrapperImage))}
}

// Caps are the capabilities of an etcd pod's two images.
type Caps struct {
	BackupRestore BackupRestore
	EtcdWrapper   EtcdWrapper
}

// BackupRestore is what an etcdbrctl image accepts and serves, where druid's rendering depends on it.
type BackupRestore struct {
	Kind Kind
	// ServerCACert: `server` takes --server-cacert (ours: the CA whose clients its HTTPS API serves
	// /snapshot/latest and /debug/pprof/ and triggers snapshots without a rate limit, and verifies the
	// backup leader with when forwarding). The upstream
	// sidecar has no such flag and no equivalent: it verifies no client.
	ServerCACert bool
	// WrapperPortFlag: `server` takes --etcd-wrapper-port, where it asks the etcd wrapper for its phase and
	// stops etcd. The upstream sidecar dials port 9095 fixed.
	WrapperPortFlag bool
	// Livez: the HTTP API answers GET /livez whenever it serves (the liveness probe). The upstream sidecar
	// serves no /livez, and its /healthz fails during a restore, so it gets no liveness probe.
	Livez bool
	// UpstreamDefaults: defaults that do not fit our pod and that upstream
	// etcd-druid therefore always overrides: --insecure-skip-tls-verify defaults to true (no verification of etcd's certificate),
	// --use-etcd-wrapper to false, the restoration and snapstore temporary directories to a relative path
	// and /tmp, the restorer's embedded etcd quota to 8Gi and its auto-compaction to periodic 30m.
	UpstreamDefaults bool
	// WritesHome: GET /config writes the configuration it serves to $HOME/etcd.conf.yaml first (the upstream
	// sidecar, gardener/etcd-backup-restore pkg/server/httpAPI.go), so under a read-only root file system the
	// container needs a writable home, or it answers 500 and etcd never starts. Ours serves it from memory.
	WritesHome bool
	// NewestRestorableEtcd is the newest etcd minor version whose data the restorer opens, "" for any the
	// pod's etcd writes. The upstream sidecar restores (and compacts) through etcd 3.4's storage package,
	// which refuses storage version 3.6 and newer: our wrapper is then held at etcd 3.5 (EtcdWrapper.Hold).
	NewestRestorableEtcd string
}

// EtcdWrapper is what an etcd-wrapper image accepts and serves, where druid's rendering depends on it.
type EtcdWrapper struct {
	Kind Kind
	// Phase: the wrapper port answers GET /phase from the start (the liveness probe). The upstream wrapper
	// serves only /readyz and /stop, and only once etcd's initialization is done.
	Phase bool
	// ReadyzHTTPSWithClientTLS: the wrapper port serves only HTTPS (etcd's client server certificate) when
	// etcd's client TLS is configured, so the readiness probe must use HTTPS. Ours serves both.
	ReadyzHTTPSWithClientTLS bool
	// ClientPortFlag: the readiness check dials --etcd-client-port (default 2379) rather than the client
	// URL of etcd's configuration, so druid passes spec.etcd.clientPort.
	ClientPortFlag bool
	// StepBinaries: the image carries etcd 3.5 and 3.6 (etcdpod.StepEtcd35BinaryPath, StepEtcd36BinaryPath)
	// and start-etcd takes --step-etcd-3.5-binary and --step-etcd-3.6-binary, to step data etcd 3.4 or 3.5
	// wrote before its etcd 3.7 opens it. The upstream wrapper runs its own etcd and refuses unknown flags.
	StepBinaries bool
	// Hold: start-etcd takes --hold-etcd-version and runs the image's etcd 3.5 for good instead of its own,
	// for a sidecar whose restorer opens nothing newer (BackupRestore.NewestRestorableEtcd).
	Hold bool
}

// BackupRestoreOf returns the capabilities of an etcdbrctl image of kind k.
func BackupRestoreOf(k Kind) BackupRestore {
	if k == Upstream {
		return BackupRestore{Kind: Upstream, UpstreamDefaults: true, WritesHome: true, NewestRestorableEtcd: "3.5"}
	}
	return BackupRestore{Kind: Ours, ServerCACert: true, WrapperPortFlag: true, Livez: true}
}

// EtcdWrapperOf returns the capabilities of an etcd-wrapper image of kind k.
func EtcdWrapperOf(k Kind) EtcdWrapper {
	if k == Upstream {
		return EtcdWrapper{Kind: Upstream, ReadyzHTTPSWithClientTLS: true, ClientPortFlag: true}
	}
	return EtcdWrapper{Kind: Ours, Phase: true, StepBinaries: true, Hold: true}
}

// AllOurs are the capabilities of a pod of our two images.
var AllOurs = Caps{BackupRestore: BackupRestoreOf(Ours), EtcdWrapper: EtcdWrapperOf(Ours)}

// repository is the image reference without tag and digest.
func repository(image string) string {
	repo, _, _ := imageref.Split(image)
	return repo
}

// compiledPatterns caches the compiled upstream-repository patterns: KindOf runs for every image of every
// StatefulSet druid renders, and the pattern is druid's one setting.
var compiledPatterns sync.Map // pattern → *regexp.Regexp

// upstreamRepositories is the compiled pattern of the upstream images' repositories.
func (c Config) upstreamRepositories() (*regexp.Regexp, error) {
	pattern := c.pattern()
	if re, ok := compiledPatterns.Load(pattern); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	compiledPatterns.Store(pattern, re)
	return re, nil
}
