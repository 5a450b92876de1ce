package seedworkflow

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
	"github.com/gardener-etcd/gardener-etcd/test/support/localseedtest"
)

// TestDemo runs the whole demo on a local seed with the project's images built from this checkout: druid
// and the extension as pods, etcd-main backed up to S3 and scaled to three members with peer TLS, keys on
// every member, a final full snapshot; then the seed stops and leaves nothing behind.
func TestDemo(t *testing.T) {
	localseedtest.SkipUnlessPossible(t)
	binDir := binDirWithProjectImages(t)
	t.Setenv(localseed.BinDirEnv, binDir)

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var out bytes.Buffer
	env, timer, err := Run(ctx, Options{Timeout: 4 * time.Minute, Keys: 50, Out: &out})
	if env == nil {
		t.Fatalf("the seed did not start: %v\n%s", err, out.String())
	}
	stateDir, prefix := env.Seed.StateDir(), env.Seed.Prefix()
	PrintSummary(context.Background(), &out, env, timer.Steps)
	if err != nil {
		for _, dir := range env.Seed.LogDirs() {
			localseedtest.LogTails(t, dir, 3000)
		}
	}
	if stopErr := env.Seed.Stop(context.Background()); stopErr != nil {
		t.Errorf("stopping the seed: %v", stopErr)
	}
	t.Logf("demo output:\n%s", out.String())
	if err != nil {
		t.Fatalf("demo failed: %v", err)
	}
	for _, s := range timer.Steps {
		t.Logf("DURATION %s: %s", s.Name, s.Duration.Round(100*time.Millisecond))
	}
	for _, want := range []string{"etcd-main-2", "Full-", ".final", "export KUBECONFIG="} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary does not mention %q", want)
		}
	}
	for _, left := range localseed.Leftovers(stateDir, prefix) {
		t.Errorf("left behind: %s", left)
	}
}

// binDirWithProjectImages is BuildBinDir in a temp dir; the test skips without the tools.
func binDirWithProjectImages(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := BuildBinDir(t.Context(), dir); errors.Is(err, ErrToolsMissing) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	return dir
}
