package minioserver

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// roleDefinedTimeout bounds the wait for MinIO to know the OpenID role.
const roleDefinedTimeout = time.Minute

// waitForRole waits until MinIO's STS knows the OpenID configuration's role: MinIO answers its readiness
// endpoint before its identity subsystem is loaded, and until then refuses AssumeRoleWithWebIdentity with
// "RoleARN … is not defined" (seen on a loaded machine) or "IAM sub-system is being initialized" (the role
// is checked first). Asked with a token that is no JWT, a MinIO that knows the role and has its IAM
// loaded answers about the token instead.
func (s *Server) waitForRole() error {
	form := url.Values{"Action": {"AssumeRoleWithWebIdentity"}, "Version": {"2011-06-15"},
		"RoleArn": {s.RoleARN}, "WebIdentityToken": {"not-a-token"}, "DurationSeconds": {"900"}}
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(roleDefinedTimeout)
	var last string
	for time.Now().Before(deadline) {
		resp, err := client.PostForm(s.Endpoint, form)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
			last = strings.TrimSpace(string(body))
			if !strings.Contains(last, "is not defined") && !strings.Contains(last, "being initialized") {
				return nil
			}
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("MinIO did not define role %s within %s: %s", s.RoleARN, roleDefinedTimeout, last)
}
