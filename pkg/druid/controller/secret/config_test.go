package secret

import (
	"testing"

	. "github.com/onsi/gomega"
)

func TestConfigDefaultsAndValidation(t *testing.T) {
	g := NewWithT(t)
	cfg := Config{}
	cfg.Default()
	g.Expect(cfg.Workers).To(Equal(3))
	g.Expect(cfg.Validate()).To(Succeed())

	cfg.Workers = -2
	g.Expect(cfg.Validate()).To(MatchError(ContainSubstring("workers must be at least 1")))
}
