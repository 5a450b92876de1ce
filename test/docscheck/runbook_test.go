package docscheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const repo = "../.."

// The sections of docs/operations.md that are the runbook.
var (
	reasonSections = []string{"Conditions", "Runbook"}
	alertSections  = []string{"Alerts"}
)

// TestEveryReasonAndAlertHasARunbookEntry fails for each condition reason, event reason or alert that
// docs/operations.md does not give an entry (a table row of its own or a heading) in its runbook sections.
func TestEveryReasonAndAlertHasARunbookEntry(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repo, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	reasons, err := CollectReasons(filepath.Join(repo, "pkg"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := RuleFiles(repo)
	if err != nil {
		t.Fatal(err)
	}
	alerts, err := CollectAlerts(files...)
	if err != nil {
		t.Fatal(err)
	}
	// The collectors must see what they are meant to see, or an empty list would pass: a reason constant of
	// the API, one of a controller, a literal Eventf reason, a chart alert and a templated Gardener alert.
	mustFind(t, "reasons", reasons, "QuorumLost", "LeaseRenewalSuspected", "BackupsNotDeleted", "ProcessFailure")
	mustFind(t, "alerts", alerts, "EtcdQuorumLost", "KubeEtcd<R>Down")

	check(t, "reason", ParseRunbook(string(doc), reasonSections...), reasons)
	check(t, "alert", ParseRunbook(string(doc), alertSections...), alerts)
}

func check(t *testing.T, kind string, rb Runbook, names []Name) {
	t.Helper()
	for _, n := range names {
		if !rb.Documents(n.Name) {
			t.Errorf("%s %s (%s) has no runbook entry in docs/operations.md: add a table row whose first cell is `%s` (what it means, what automation did, what to do)", kind, n.Name, n.Where, n.Name)
		}
	}
}

func mustFind(t *testing.T, kind string, names []Name, want ...string) {
	t.Helper()
	for _, w := range want {
		found := false
		for _, n := range names {
			found = found || n.Name == w
		}
		if !found {
			t.Errorf("collected %s lack %s: the collector is broken", kind, w)
		}
	}
}

// TestRunbookCountsOnlyEntries: a name in running text, in a row without its explanation, or outside the
// runbook sections is not an entry.
func TestRunbookCountsOnlyEntries(t *testing.T) {
	doc := strings.Join([]string{
		"## Conditions: what to do",
		"| reason | meaning | what to do |",
		"|---|---|---|",
		"| `Ready=False/QuorumLost` | no majority | watch the recovery |",
		"| `Bare` | | |",
		"| `OnlyMeaning` | something | |",
		"Running text mentions `Mentioned`.",
		"### Runbook: `Headed`",
		"## Elsewhere",
		"| `Outside` | meaning | what to do |",
		"## Runbook: `Escaped\\|Pipe`",
		"| `A` / `B` | x \\| y | z |",
	}, "\n")
	rb := ParseRunbook(doc, "Conditions", "Runbook")
	for name, want := range map[string]bool{
		"QuorumLost": true, "Ready": true, "Headed": true, "A": true, "B": true, "Escaped": true,
		"Bare": false, "OnlyMeaning": false, "Mentioned": false, "Outside": false, "Quorum": false,
	} {
		if got := rb.Documents(name); got != want {
			t.Errorf("Documents(%q) = %v, want %v", name, got, want)
		}
	}
}
