package localseed

import (
	"bytes"
	"fmt"
	"os"
)

// logTail is the end of the log at path, at most maxBytes from its last whole lines, for an error that
// must say what a process reported: the state directory with the whole log is often gone before anyone
// reads it (a test's temporary directory).
func logTail(path string, maxBytes int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	from := max(st.Size()-maxBytes, 0)
	buf := make([]byte, st.Size()-from)
	if _, err := f.ReadAt(buf, from); err != nil {
		return fmt.Sprintf("(reading %s: %v)", path, err)
	}
	if from > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	return string(buf)
}
