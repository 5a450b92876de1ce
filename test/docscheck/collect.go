package docscheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// reasonConstName matches the constants that name a reason the project sets on a condition, a member
// status or an event: Reason*, EventReason*, MemberReason* and the unexported conditionReason*.
var reasonConstName = regexp.MustCompile(`^(Event|Member|condition)?Reason[A-Z]`)

// eventfReasonArg is the position of the reason among Eventf's arguments (regarding, related, type, reason,
// action, note, ...), as k8s.io/client-go/tools/events' EventRecorder takes them.
const eventfReasonArg = 3

// Name is a reason or alert with where it was found, for the failure message.
type Name struct {
	Name  string
	Where string
}

// CollectReasons parses the non-test Go files under root and returns the string values of reason
// constants and the literal reasons passed to Eventf, one entry per distinct value.
func CollectReasons(root string) ([]Name, error) {
	found := map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if reasonConstName.MatchString(id.Name) && i < len(n.Values) {
						addLiteral(found, n.Values[i], fmt.Sprintf("%s (%s)", fset.Position(id.Pos()), id.Name))
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Eventf" && len(n.Args) > eventfReasonArg {
					addLiteral(found, n.Args[eventfReasonArg], fset.Position(n.Pos()).String())
				}
			}
			return true
		})
		return nil
	})
	return sorted(found), err
}

// addLiteral records e when it is a string literal; a reason built from another constant is found at
// that constant.
func addLiteral(found map[string]string, e ast.Expr, where string) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return
	}
	v, err := strconv.Unquote(lit.Value)
	if err != nil || v == "" {
		return
	}
	if _, seen := found[v]; !seen {
		found[v] = where
	}
}

// templatePlaceholder is a Go template action in an alert name (the role in Gardener's per-shoot
// rules): the documentation spells it <R>.
var templatePlaceholder = regexp.MustCompile(`\{\{[^}]*\}\}`)

// CollectAlerts returns the alert names of the rule files (YAML, or Go templates of YAML whose alert names
// carry template actions, written <R>).
func CollectAlerts(files ...string) ([]Name, error) {
	found := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for i, line := range strings.Split(string(data), "\n") {
			key, value, ok := strings.Cut(strings.TrimLeft(strings.TrimSpace(line), "- "), ":")
			if !ok || key != "alert" {
				continue
			}
			var name string
			if err := yaml.Unmarshal([]byte(templatePlaceholder.ReplaceAllString(value, "<R>")), &name); err != nil || name == "" {
				return nil, fmt.Errorf("%s:%d: alert name %q: %v", f, i+1, value, err)
			}
			if _, seen := found[name]; !seen {
				found[name] = fmt.Sprintf("%s:%d", f, i+1)
			}
		}
	}
	return sorted(found), nil
}

// RuleFiles are the chart's rule files (charts/**/*.yaml) plus Gardener's per-shoot rules template.
func RuleFiles(repo string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(filepath.Join(repo, "charts"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return err
	})
	return append(files, filepath.Join(repo, "pkg", "botanist", "etcd", "assets", "prometheusrule.yaml.tmpl")), err
}

func sorted(found map[string]string) []Name {
	out := make([]Name, 0, len(found))
	for n, w := range found {
		out = append(out, Name{Name: n, Where: w})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
