package config

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestCompactionDefaultsAndValidation(t *testing.T) {
	g := NewWithT(t)
	disabled := CompactionController{}
	g.Expect(disabled.Validate()).To(Succeed(), "a disabled controller needs no image")

	cfg := CompactionController{EnableBackupCompaction: true}
	cfg.Default()
	g.Expect(cfg).To(Equal(CompactionController{EnableBackupCompaction: true, Workers: 3, EventsThreshold: 1_000_000,
		TriggerFullSnapshotThreshold: 3_000_000, ActiveDeadline: 3 * time.Hour, RetryBackoff: 5 * time.Minute, MaxRetryBackoff: 2 * time.Hour}))
	g.Expect(cfg.Validate()).To(MatchError(ContainSubstring("backupRestoreImage must be set")))

	cfg.BackupRestoreImage = "img"
	g.Expect(cfg.Validate()).To(Succeed())

	bad := cfg
	bad.Workers, bad.EventsThreshold, bad.TriggerFullSnapshotThreshold, bad.MaxRetryBackoff = -1, -5, -1, time.Minute
	err := bad.Validate()
	g.Expect(err).To(MatchError(ContainSubstring("workers")))
	g.Expect(err).To(MatchError(ContainSubstring("eventsThreshold")))
	g.Expect(err).To(MatchError(ContainSubstring("triggerFullSnapshotThreshold")))
	g.Expect(err).To(MatchError(ContainSubstring("retryBackoff")))
}

func TestCompactionBackoffDoublesUpToTheCap(t *testing.T) {
	cfg := CompactionController{RetryBackoff: time.Minute, MaxRetryBackoff: 10 * time.Minute}
	var got []time.Duration
	for failures := 1; failures <= 6; failures++ {
		got = append(got, cfg.Backoff(failures))
	}
	NewWithT(t).Expect(got).To(Equal([]time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 10 * time.Minute, 10 * time.Minute}))
}

func TestCopyBackupsTaskDefaultsAndValidation(t *testing.T) {
	g := NewWithT(t)
	cfg := CopyBackupsTaskController{}
	cfg.Default()
	g.Expect(cfg.Workers).To(Equal(3))
	g.Expect(cfg.Validate()).To(MatchError(ContainSubstring("backupRestoreImage must be set")))

	cfg.BackupRestoreImage = "img"
	g.Expect(cfg.Validate()).To(Succeed())

	cfg.Workers = -1
	g.Expect(cfg.Validate()).To(MatchError(ContainSubstring("workers must be at least 1")))
}

func TestSecretDefaultsAndValidation(t *testing.T) {
	g := NewWithT(t)
	cfg := SecretController{}
	cfg.Default()
	g.Expect(cfg.Workers).To(Equal(3))
	g.Expect(cfg.Validate()).To(Succeed())

	cfg.Workers = -2
	g.Expect(cfg.Validate()).To(MatchError(ContainSubstring("workers must be at least 1")))
}

func TestEtcdOpsTaskDefaultsAndValidation(t *testing.T) {
	g := NewWithT(t)
	g.Expect(DefaultEtcdOpsTaskController()).To(Equal(EtcdOpsTaskController{Enabled: true, Workers: 3, RetryInterval: 5 * time.Second, MinInterval: time.Minute}))

	cfg := EtcdOpsTaskController{}
	cfg.Default()
	g.Expect(cfg.Enabled).To(BeFalse(), "Default leaves Enabled as given")
	g.Expect(cfg.Validate()).To(Succeed())

	cfg.Workers, cfg.RetryInterval = -1, -time.Second
	err := cfg.Validate()
	g.Expect(err).To(MatchError(ContainSubstring("workers must be at least 1")))
	g.Expect(err).To(MatchError(ContainSubstring("retryInterval must be positive")))
}
