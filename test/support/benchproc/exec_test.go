package benchproc

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// The peak RSS of a binary is its own, however much this process had touched before starting it: the
// kernel's ru_maxrss of the child would report this process's peak (exec records the high-water mark of
// the memory the child shared with its parent until then).
func TestProcPeakRSSIsTheBinarysOwn(t *testing.T) {
	const parentMiB = 128
	ballast := make([]byte, parentMiB<<20)
	for i := range ballast {
		ballast[i] = byte(i)
	}
	parent, err := PeakRSSMiB()
	if err != nil {
		t.Fatal(err)
	}
	if parent < parentMiB {
		t.Fatalf("this process's peak RSS is %.0f MiB after touching %d MiB", parent, parentMiB)
	}
	p, err := Start(Command{Binary: "/bin/sh", Args: []string{"-c", "sleep 0.2"}})
	if err != nil {
		t.Fatal(err)
	}
	u, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if u.PeakRSSMiB <= 0 || u.PeakRSSMiB > parentMiB/4 {
		t.Fatalf("sh's peak RSS %.1f MiB, want its own few MiB (this process's peak: %.0f MiB)", u.PeakRSSMiB, parent)
	}
	if u.Seconds < 0.2 {
		t.Fatalf("wall time %.3fs, shorter than the child's sleep", u.Seconds)
	}
	_ = ballast[len(ballast)-1]
}

func TestProcWaitForLine(t *testing.T) {
	p, err := Start(Command{Binary: "/bin/sh", Args: []string{"-c", `echo "starting"; echo "saved at: x/y" >&2; exec sleep 60`}})
	if err != nil {
		t.Fatal(err)
	}
	line, _, err := p.WaitForLine(regexp.MustCompile(`saved at: (\S+)`), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if line != "saved at: x/y" {
		t.Fatalf("line %q", line)
	}
	if _, err := p.Stop(); err != nil { // SIGTERM ends the sleep
		t.Fatal(err)
	}

	p, err = Start(Command{Binary: "/bin/sh", Args: []string{"-c", "echo fatal; exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = p.WaitForLine(regexp.MustCompile(`never`), time.Minute)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "fatal") {
		t.Fatalf("want an error naming the exit and the output, got %v", err)
	}
	if _, err := p.Wait(); err == nil {
		t.Fatal("Wait accepted exit status 3")
	}
}

func TestProcDropsEnvironmentPrefixes(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "/from/the/developer")
	p, err := Start(Command{Binary: "/bin/sh", Args: []string{"-c", `echo "bundle=[$AWS_CA_BUNDLE] creds=[$AWS_APPLICATION_CREDENTIALS]"`},
		DropEnvPrefixes: []string{"AWS_"}, Env: []string{"AWS_APPLICATION_CREDENTIALS=/secret"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(p.Output()); got != "bundle=[] creds=[/secret]" {
		t.Fatalf("the child saw %q", got)
	}
}
