package rundir

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// TrimPartialLine cuts a results file back to its last complete line, so a
// resumed run appends whole lines after a killed one. It returns how many
// bytes were dropped; a missing file is not an error.
func TrimPartialLine(path string) (int64, error) {
	// O_NOFOLLOW: a symlink is refused, never truncated through.
	// O_NONBLOCK: a FIFO planted there does not hang the open.
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if errors.Is(err, syscall.ELOOP) {
		return 0, fmt.Errorf("open results: %s is a symbolic link; bench does not follow links in a run directory", path)
	}
	if err != nil {
		return 0, fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("open results: %s is %s, not a regular file", path, kindOf(st.Mode()))
	}
	size := st.Size()
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && n < int(end-start) {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			keep := start + int64(i) + 1
			if keep == size {
				return 0, nil
			}
			return size - keep, f.Truncate(keep)
		}
		end = start
	}
	return size, f.Truncate(0)
}
