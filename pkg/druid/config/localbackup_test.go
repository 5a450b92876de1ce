package config

import (
	"strings"
	"testing"
)

func TestLocalBackupCheck(t *testing.T) {
	defaults := LocalBackup{}
	custom := LocalBackup{AllowedHostPaths: []string{"/srv/buckets/"}}
	refused := LocalBackup{AllowedHostPaths: []string{}}
	for _, tc := range []struct {
		config   LocalBackup
		hostPath string
		wantErr  string
	}{
		{defaults, DefaultLocalBackupHostPath, ""},
		{defaults, DefaultLocalBackupHostPath + "/sub", ""},
		{defaults, "/", "whole filesystem"},
		{defaults, "/etc/gardener/../..", "whole filesystem"},
		{defaults, "/etc", "not below a directory druid allows"},
		{defaults, DefaultLocalBackupHostPath + "/../other", "not below a directory druid allows"},
		{defaults, DefaultLocalBackupHostPath + "-evil", "not below a directory druid allows"},
		{defaults, "relative/dir", "absolute"},
		{custom, "/srv/buckets", ""},
		{custom, DefaultLocalBackupHostPath, "druid allows for the Local backup provider (/srv/buckets/"},
		{refused, DefaultLocalBackupHostPath, "not allowed by druid's configuration"},
	} {
		err := tc.config.Check(tc.hostPath)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v.Check(%q) = %v, want nil", tc.config.AllowedHostPaths, tc.hostPath, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%v.Check(%q) = %v, want an error containing %q", tc.config.AllowedHostPaths, tc.hostPath, err, tc.wantErr)
		}
	}
	if err := (LocalBackup{AllowedHostPaths: []string{"/", "rel"}}).Validate(); err == nil || !strings.Contains(err.Error(), `"/"`) || !strings.Contains(err.Error(), `"rel"`) {
		t.Errorf("Validate = %v, want both entries named", err)
	}
}

// Root is the directory pods mount for a Local store: the most specific allowed one above the host path.
func TestLocalBackupRoot(t *testing.T) {
	nested := LocalBackup{AllowedHostPaths: []string{"/srv", "/srv/buckets/"}}
	for hostPath, want := range map[string]string{
		"/srv/buckets":       "/srv/buckets",
		"/srv/buckets/a/b":   "/srv/buckets",
		"/srv/other":         "/srv",
		"/srv/buckets-other": "/srv",
	} {
		if got, err := nested.Root(hostPath); err != nil || got != want {
			t.Errorf("Root(%q) = %q, %v; want %q", hostPath, got, err, want)
		}
	}
	if got, err := nested.Root("/etc"); err == nil {
		t.Errorf("Root(/etc) = %q; want Check's error", got)
	}
}
