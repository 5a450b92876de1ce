package app

import (
	"io"

	"github.com/go-logr/logr"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// logger is the log of the components: structured lines on w with -v, nothing otherwise (the commands
// print their own progress).
func (g *globalOptions) logger(w io.Writer) logr.Logger {
	if g.verbose {
		return zap.New(zap.WriteTo(w), zap.ConsoleEncoder())
	}
	return logr.Discard()
}

// setGlobalLogger hands the logger to controller-runtime's package-level log, which its client and helpers
// use when no logger comes with the context. Without it controller-runtime prints a warning with a stack
// trace to stderr the first time that log is used 30 s after start, which in a long run such as the demo
// lands in the middle of the progress output. controller-runtime keeps the first logger it is given.
func (g *globalOptions) setGlobalLogger(w io.Writer) {
	logf.SetLogger(g.logger(w))
}
