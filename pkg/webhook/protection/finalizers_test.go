package protection

import (
	"testing"

	. "github.com/onsi/gomega"
)

// Druid refuses to start with no garbage collector user: every StatefulSet it recreates would stay in
// deletion, since nobody else may take the orphan finalizer off.
func TestValidateGarbageCollectorUsers(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ValidateGarbageCollectorUsers(DefaultGarbageCollectorUsers)).To(Succeed())
	g.Expect(ValidateGarbageCollectorUsers(nil)).To(MatchError(ContainSubstring("none named")))
	g.Expect(ValidateGarbageCollectorUsers([]string{"system:kube-controller-manager", " "})).To(MatchError(ContainSubstring("no user name")))
}
