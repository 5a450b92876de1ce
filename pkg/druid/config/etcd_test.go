package config

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestDefaultKeepsSetValues(t *testing.T) {
	g := NewWithT(t)
	c := EtcdController{Workers: 7, StatusSyncPeriod: time.Second}
	c.Default()
	g.Expect(c.Workers).To(Equal(7))
	g.Expect(c.StatusSyncPeriod).To(Equal(time.Second))
	g.Expect(c.EtcdMemberUnknownThreshold).To(Equal(time.Minute))
	g.Expect(c.EtcdMemberNotReadyThreshold).To(Equal(5 * time.Minute))
	g.Expect(c.EnableEtcdSpecAutoReconcile).To(BeFalse())
}

func TestDefaults(t *testing.T) {
	g := NewWithT(t)
	c := EtcdController{}
	c.Default()
	g.Expect(c.Workers).To(Equal(3))
	g.Expect(c.StatusSyncPeriod).To(Equal(15 * time.Second))
}

func TestValidate(t *testing.T) {
	valid := func() EtcdController {
		c := EtcdController{Images: Images{EtcdWrapper: "w", BackupRestore: "b"}}
		c.Default()
		return c
	}
	for name, tc := range map[string]struct {
		mutate  func(*EtcdController)
		wantErr string
	}{
		"defaulted with images": {mutate: func(*EtcdController) {}},
		"no workers":            {mutate: func(c *EtcdController) { c.Workers = 0 }, wantErr: "workers"},
		"negative period":       {mutate: func(c *EtcdController) { c.StatusSyncPeriod = -time.Second }, wantErr: "statusSyncPeriod"},
		"zero unknown":          {mutate: func(c *EtcdController) { c.EtcdMemberUnknownThreshold = 0 }, wantErr: "etcdMemberUnknownThreshold"},
		"no wrapper image":      {mutate: func(c *EtcdController) { c.Images.EtcdWrapper = "" }, wantErr: "etcdWrapper"},
		"no backup image":       {mutate: func(c *EtcdController) { c.Images.BackupRestore = "" }, wantErr: "backupRestore"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := valid()
			tc.mutate(&c)
			err := c.Validate()
			if tc.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
}
