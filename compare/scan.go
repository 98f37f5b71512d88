package compare

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"bench/results"
)

// scanLines calls fn, in file order, with the value decode made of every
// non-blank line of path that want accepts (want nil: every line). Lines
// are read on one goroutine and decoded on the others: JSON decoding is
// most of the cost of reading a large results file.
//
// This is not results.ReadFile because compare needs what that reader
// does not give: a decode of its own (only the fields a comparison uses,
// plus extras the Record may not have yet, such as cold_start), a second
// pass that decodes only chosen lines, and every bad line as an error
// rather than a warning, since a regression gate must not judge a run it
// could not fully read.
func scanLines[T any](path string, want func(line int) bool, decode func(data []byte, v *T) error, fn func(line int, v *T) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return scanReader(f, want, decode, fn)
}

// scanBatch is a run of consecutive lines, decoded by one worker and
// handed to fn in order.
type scanBatch[T any] struct {
	lines []int
	data  [][]byte
	vals  []T
	errs  []error
	// cut is the line of the file's last line when it has no newline (a
	// run killed while writing it), else 0.
	cut  int
	done chan struct{}
}

const scanBatchBytes = 256 << 10

// LineError is a line of a run's file that compare could not use.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

func scanReader[T any](r io.Reader, want func(line int) bool, decode func(data []byte, v *T) error, fn func(line int, v *T) error) error {
	workers := max(1, runtime.GOMAXPROCS(0))
	br := bufio.NewReaderSize(r, 1<<20)
	todo := make(chan *scanBatch[T], 2*workers)
	ordered := make(chan *scanBatch[T], 4*workers)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(ordered)
		defer close(todo)
		line := 0
		for eof := false; !eof; {
			b := &scanBatch[T]{done: make(chan struct{})}
			for size := 0; size < scanBatchBytes && !eof; {
				data, err := readLine(br)
				if err != nil && !errors.Is(err, io.EOF) {
					readErr = &LineError{Line: line + 1, Err: err}
					eof = true
					break
				}
				eof = errors.Is(err, io.EOF)
				if data == nil && eof {
					break
				}
				line++
				if len(bytes.TrimSpace(data)) == 0 || (want != nil && !want(line)) {
					continue
				}
				b.lines = append(b.lines, line)
				b.data = append(b.data, data)
				if eof {
					b.cut = line
				}
				size += len(data) + 64
			}
			if len(b.lines) == 0 {
				continue
			}
			select {
			case ordered <- b:
			case <-stop:
				return
			}
			todo <- b
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range todo {
				b.vals = make([]T, len(b.lines))
				b.errs = make([]error, len(b.lines))
				for i, d := range b.data {
					if err := decode(d, &b.vals[i]); err != nil {
						if b.lines[i] == b.cut {
							err = fmt.Errorf("the last line is cut short, with no newline (was the run killed while writing it?): %w", err)
						}
						b.errs[i] = &LineError{Line: b.lines[i], Err: err}
					}
				}
				b.data = nil
				close(b.done)
			}
		})
	}
	var fnErr error
	for b := range ordered {
		<-b.done
		for i := range b.lines {
			if fnErr != nil {
				break
			}
			if b.errs[i] != nil {
				fnErr = b.errs[i]
				break
			}
			fnErr = fn(b.lines[i], &b.vals[i])
		}
		if fnErr != nil {
			break
		}
	}
	if fnErr != nil {
		close(stop)
		for b := range ordered { // let the reader and the workers end
			<-b.done
		}
	}
	wg.Wait()
	if fnErr != nil {
		return fnErr
	}
	return readErr
}

// readLine returns the next line without its newline (a copy: batches
// outlive the reader's buffer), nil and io.EOF at the end. A line longer
// than results.MaxLineBytes is an error.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > results.MaxLineBytes+1 {
			return nil, fmt.Errorf("line longer than %d bytes", results.MaxLineBytes)
		}
		buf = append(buf, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, io.EOF):
			if len(buf) == 0 {
				return nil, io.EOF
			}
			return buf, io.EOF
		default:
			return nil, err
		}
	}
}
