// Package ignoredflags accepts the flags upstream etcd-druid renders for its
// etcd-backup-restore and etcd-wrapper images that have no meaning for etcdbrctl and etcd-wrapper (see
// docs/compatibility.md). Rejecting them would stop a pod rendered by upstream druid from starting;
// accepting them silently would hide that a setting had no effect. So each is parsed with its upstream
// type (a malformed value fails as it did there) and, when given, reported once at startup with the
// reason it is ignored.
package ignoredflags

import (
	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
)

// Flag is an ignored flag given on the command line.
type Flag struct {
	Name  string
	Value string
	// Why tells why the flag has no meaning here.
	Why string
}

// Set registers ignored flags on one flag set.
type Set struct {
	fs    *pflag.FlagSet
	names []string
	why   map[string]string
}

// New registers ignored flags on fs.
func New(fs *pflag.FlagSet) *Set {
	return &Set{fs: fs, why: map[string]string{}}
}

// String accepts --name with a string value.
func (s *Set) String(name, why string) { s.fs.String(name, "", s.add(name, why)) }

// Bool accepts --name with an optional boolean value, as pflag's boolean flags do.
func (s *Set) Bool(name, why string) { s.fs.Bool(name, false, s.add(name, why)) }

// Duration accepts --name with a duration value.
func (s *Set) Duration(name, why string) { s.fs.Duration(name, 0, s.add(name, why)) }

// Int64 accepts --name with an integer value.
func (s *Set) Int64(name, why string) { s.fs.Int64(name, 0, s.add(name, why)) }

func (s *Set) add(name, why string) string {
	s.names = append(s.names, name)
	s.why[name] = why
	return "accepted for compatibility with upstream etcd-druid and ignored: " + why
}

// Given returns the ignored flags given on the command line, in the order they were registered; nil
// before parsing or when none was given.
func (s *Set) Given() []Flag {
	if s == nil {
		return nil
	}
	var out []Flag
	for _, name := range s.names {
		if f := s.fs.Lookup(name); f != nil && f.Changed {
			out = append(out, Flag{Name: name, Value: f.Value.String(), Why: s.why[name]})
		}
	}
	return out
}

// Log writes one line naming the given ignored flags and why; nothing when flags is empty.
func Log(log logr.Logger, flags []Flag) {
	if len(flags) == 0 {
		return
	}
	lines := make([]string, 0, len(flags))
	for _, f := range flags {
		lines = append(lines, "--"+f.Name+"="+f.Value+": "+f.Why)
	}
	log.Info("Ignoring flags of upstream etcd-druid that have no meaning here (docs/compatibility.md)", "flags", lines)
}

// Reasons shared by several commands.
const (
	// WhySnapstoreTempDir: --snapstore-temp-directory is where the upstream snapstores stage files.
	WhySnapstoreTempDir = "the store streams objects instead of staging them in a temporary directory (Local: temporary files next to the object)"
	// WhyRestorationTempDir: --restoration-temp-snapshots-dir is where the upstream restorer downloads deltas.
	WhyRestorationTempDir = "a restore streams deltas into a temporary directory next to the data directory instead of downloading them first"
)
