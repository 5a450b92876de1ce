// Command pause is the sandbox ("pause") image of the local seed's nodes: the process that holds a pod's
// namespaces while its containers come and go. It waits for SIGTERM or SIGINT and, as PID 1 of a pod that
// shares its process namespace, reaps the orphans that are re-parented to it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			return
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
