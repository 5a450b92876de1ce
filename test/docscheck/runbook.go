package docscheck

import (
	"regexp"
	"strings"
)

// Runbook is what a section of docs/operations.md documents: the names that head an entry of its own.
type Runbook struct {
	entries map[string]bool
}

// codeSpan is a `...` span of Markdown.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// nameToken splits a code span into the names it holds: `Ready=False/QuorumLost` documents QuorumLost,
// `KubeEtcd<R>Down` stays whole.
var nameToken = regexp.MustCompile(`[A-Za-z0-9_<>]+`)

// ParseRunbook reads the sections of doc whose level-2 heading starts with one of sections. A name counts
// as documented when it is a whole token of a code span in
//   - the first cell of a table row that has at least two more non-empty cells (what it means and what
//     to do; the rows of a legend or an index do not count), or
//   - a heading (a runbook of its own below it).
//
// A name that is only mentioned in running text does not count: the entry must be findable by the name.
func ParseRunbook(doc string, sections ...string) Runbook {
	rb := Runbook{entries: map[string]bool{}}
	in := false
	for _, line := range strings.Split(doc, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			in = false
			for _, s := range sections {
				in = in || strings.HasPrefix(h, s)
			}
			if in {
				rb.add(h)
			}
			continue
		}
		if !in {
			continue
		}
		switch {
		case strings.HasPrefix(line, "#"):
			rb.add(line)
		case strings.HasPrefix(line, "|"):
			cells := splitRow(line)
			if len(cells) < 3 || strings.Trim(cells[0], "-: ") == "" {
				continue
			}
			filled := 0
			for _, c := range cells[1:] {
				if strings.TrimSpace(c) != "" {
					filled++
				}
			}
			if filled >= 2 {
				rb.add(cells[0])
			}
		}
	}
	return rb
}

// splitRow splits a Markdown table row into cells, keeping escaped pipes (\|) inside a cell.
func splitRow(line string) []string {
	line = strings.TrimSpace(strings.ReplaceAll(line, `\|`, "\x00"))
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	cells := strings.Split(line, "|")
	for i := range cells {
		cells[i] = strings.ReplaceAll(cells[i], "\x00", "|")
	}
	return cells
}

func (rb Runbook) add(text string) {
	for _, span := range codeSpan.FindAllStringSubmatch(text, -1) {
		for _, tok := range nameToken.FindAllString(span[1], -1) {
			rb.entries[tok] = true
		}
	}
}

// Documents tells whether name has an entry.
func (rb Runbook) Documents(name string) bool { return rb.entries[name] }
