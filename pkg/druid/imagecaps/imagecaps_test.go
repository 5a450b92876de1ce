package imagecaps

import (
	"context"
	"testing"
)

// Auto mode decides by repository alone: Gardener's repositories are upstream whatever their tag, and
// our images (also tagged v0.x, from any registry) stay ours.
func TestKindOfAutoByRepository(t *testing.T) {
	c := Config{}
	c.Default()
	for image, want := range map[string]Kind{
		"europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl:v0.35.1":        Upstream,
		"europe-docker.pkg.dev/gardener-project/releases/gardener/etcd-wrapper:v0.6.2":      Upstream,
		"europe-docker.pkg.dev/gardener-project/public/gardener/etcdbrctl@sha256:0123":      Upstream,
		"europe-docker.pkg.dev/gardener-project/snapshots/gardener/etcd-wrapper:v0.7.0":     Upstream,
		"eu.gcr.io/gardener-project/gardener/etcdbrctl:v0.24.7":                             Upstream,
		"ghcr.io/gardener-etcd/etcdbrctl:v0.1.0":                                            Ours,
		"ghcr.io/gardener-etcd/etcd-wrapper:v0.1.0":                                         Ours,
		"registry.local:5000/gardener-etcd/etcdbrctl@sha256:0123":                           Ours,
		"europe-docker.pkg.dev/gardener-project/releases/gardener/etcd-druid:v0.30.0":       Ours, // not an image druid renders flags for
		"mirror.example/europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl": Ours, // anchored: a mirror needs its own pattern
	} {
		if got := c.KindOf(image); got != want {
			t.Errorf("auto: KindOf(%q) = %q, want %q", image, got, want)
		}
	}
}

func TestKindOfForcedAndCustomPattern(t *testing.T) {
	upstream := "europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl:v0.35.1"
	ours := "ghcr.io/gardener-etcd/etcdbrctl:v0.1.0"
	for _, tc := range []struct {
		name   string
		config Config
		image  string
		want   Kind
	}{
		{"forced ours keeps a Gardener image ours", Config{Mode: ModeOurs}, upstream, Ours},
		{"forced upstream makes our image upstream", Config{Mode: ModeUpstream}, ours, Upstream},
		{"the former spelling deployed forces upstream too", Config{Mode: ModeDeployedAlias}, ours, Upstream},
		{"a mirror named by the operator's pattern", Config{Mode: ModeAuto, UpstreamRepositories: `^mirror\.example/gardener/`}, "mirror.example/gardener/etcdbrctl:v0.35.1", Upstream},
		{"the operator's pattern replaces the default", Config{Mode: ModeAuto, UpstreamRepositories: `^mirror\.example/gardener/`}, upstream, Ours},
		{"unset mode is auto", Config{}, upstream, Upstream},
	} {
		if got := tc.config.KindOf(tc.image); got != tc.want {
			t.Errorf("%s: KindOf(%q) = %q, want %q", tc.name, tc.image, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		config Config
		ok     bool
	}{
		{Config{Mode: ModeAuto}, true},
		{Config{Mode: ModeUpstream, UpstreamRepositories: "^x$"}, true},
		{Config{Mode: ModeDeployedAlias, UpstreamRepositories: "^x$"}, true},
		{Config{Mode: "sometimes"}, false},
		{Config{Mode: ModeAuto, UpstreamRepositories: "(unclosed"}, false},
	} {
		if err := tc.config.Validate(); (err == nil) != tc.ok {
			t.Errorf("Validate(%+v) = %v, want ok=%v", tc.config, err, tc.ok)
		}
	}
}

// The capabilities of each kind, field by field: a renderer switches on these, so a flipped field changes
// what a pod gets.
func TestCapabilitiesPerKind(t *testing.T) {
	if got, want := BackupRestoreOf(Ours), (BackupRestore{Kind: Ours, ServerCACert: true, WrapperPortFlag: true, Livez: true}); got != want {
		t.Errorf("ours etcdbrctl: got %+v, want %+v", got, want)
	}
	if got, want := BackupRestoreOf(Upstream), (BackupRestore{Kind: Upstream, UpstreamDefaults: true, WritesHome: true, NewestRestorableEtcd: "3.5"}); got != want {
		t.Errorf("upstream etcdbrctl: got %+v, want %+v", got, want)
	}
	if got, want := EtcdWrapperOf(Ours), (EtcdWrapper{Kind: Ours, Phase: true, StepBinaries: true, Hold: true}); got != want {
		t.Errorf("ours etcd-wrapper: got %+v, want %+v", got, want)
	}
	if got, want := EtcdWrapperOf(Upstream), (EtcdWrapper{Kind: Upstream, ReadyzHTTPSWithClientTLS: true, ClientPortFlag: true}); got != want {
		t.Errorf("upstream etcd-wrapper: got %+v, want %+v", got, want)
	}
	c := Config{}
	caps := c.For("europe-docker.pkg.dev/gardener-project/releases/gardener/etcdbrctl:v0.35.1", "ghcr.io/gardener-etcd/etcd-wrapper:v0.1.0")
	if caps.BackupRestore.Kind != Upstream || caps.EtcdWrapper.Kind != Ours {
		t.Errorf("For decides each image on its own: got %s sidecar, %s wrapper, want upstream, ours", caps.BackupRestore.Kind, caps.EtcdWrapper.Kind)
	}
}

// The former spelling stays accepted: the mode "deployed" (flag, chart value) is normalised to "upstream"
// when parsed and by Default.
func TestFormerSpellings(t *testing.T) {
	//nolint:gocritic // " deployed ": Set trims the value, the whitespace is what is tested
	for in, want := range map[string]Mode{"deployed": ModeUpstream, "upstream": ModeUpstream, " deployed ": ModeUpstream,
		"ours": ModeOurs, "auto": ModeAuto, "sometimes": "sometimes"} {
		var m Mode
		if err := m.Set(in); err != nil || m != want {
			t.Errorf("Set(%q) = %q, %v; want %q", in, m, err, want)
		}
	}
	c := Config{Mode: ModeDeployedAlias, UpstreamRepositories: `^mirror\.example/`}
	c.Default()
	if want := (Config{Mode: ModeUpstream, UpstreamRepositories: `^mirror\.example/`}); c != want {
		t.Errorf("Default of the former spellings: got %+v, want %+v", c, want)
	}
	c = Config{}
	c.Default()
	if want := (Config{Mode: ModeAuto, UpstreamRepositories: DefaultUpstreamRepositories}); c != want {
		t.Errorf("Default of an empty Config: got %+v, want %+v", c, want)
	}
}

func TestNoticeOnce(t *testing.T) {
	ctx := context.Background()
	if !NoticeOnce(ctx, t.Name()+"/a", "first") {
		t.Fatalf("the first notice of a key was not logged")
	}
	if NoticeOnce(ctx, t.Name()+"/a", "again") {
		t.Errorf("a key was logged twice")
	}
	if !NoticeOnce(ctx, t.Name()+"/b", "other") {
		t.Errorf("another key was not logged")
	}
}
