package seednet

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Leftovers lists the namespaces and links whose names start with prefix: what a crashed instance
// left behind, and what a clean teardown must leave none of.
func Leftovers(prefix string) (netns, links []string) {
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix+"-") {
			netns = append(netns, e.Name())
		}
	}
	ifaces, _ := net.Interfaces()
	for _, iface := range ifaces {
		if strings.HasPrefix(iface.Name, prefix) {
			links = append(links, iface.Name)
		}
	}
	return netns, links
}

// Cleanup kills every process still inside a namespace of prefix and deletes those namespaces and
// links, for `down` after a crash. It is idempotent.
func Cleanup(ctx context.Context, prefix string) error {
	if prefix == "" {
		return errors.New("refusing to clean up an empty prefix")
	}
	var errs []error
	netns, links := Leftovers(prefix)
	for _, ns := range netns {
		if out, err := ip(ctx, "netns", "pids", ns); err == nil {
			for _, field := range strings.Fields(out) {
				if pid, err := strconv.Atoi(field); err == nil && pid > 1 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if _, err := ip(ctx, "netns", "del", ns); err != nil {
			errs = append(errs, err)
		}
	}
	for _, link := range links {
		if _, err := ip(ctx, "link", "del", link); err != nil && linkExists(link) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
