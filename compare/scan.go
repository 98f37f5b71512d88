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
// handed to fn in order. Batches are reused: their line bytes live in one
// slab and their values are decoded in place, so a large file costs a few
// allocations per batch, not per line.
type scanBatch[T any] struct {
	lines []int
	ends  []int // line i is slab[ends[i-1]:ends[i]]
	slab  []byte
	vals  []T
	errs  []error
	// cut is the line of the file's last line when it has no newline (a
	// run killed while writing it), else 0.
	cut  int
	done chan struct{}
}

func (b *scanBatch[T]) data(i int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.slab[start:b.ends[i]]
}

func (b *scanBatch[T]) reset() {
	b.lines, b.ends, b.slab, b.errs = b.lines[:0], b.ends[:0], b.slab[:0], b.errs[:0]
	b.cut = 0
	b.done = make(chan struct{})
}

const scanBatchBytes = 256 << 10

// lineError is a line of a run's file that compare could not use; the
// caller turns it into an InputError naming the file.
type lineError struct {
	Line int
	Err  error
}

// Error says the line and what is wrong with it.
func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap gives the line's problem.
func (e *lineError) Unwrap() error { return e.Err }

func scanReader[T any](r io.Reader, want func(line int) bool, decode func(data []byte, v *T) error, fn func(line int, v *T) error) error {
	workers := max(1, runtime.GOMAXPROCS(0))
	br := bufio.NewReaderSize(r, 1<<20)
	todo := make(chan *scanBatch[T], 2*workers)
	ordered := make(chan *scanBatch[T], 4*workers)
	// free holds the batches fn is done with; the reader takes from it
	// first, so at most len(ordered)+len(todo)+workers+2 batches exist.
	free := make(chan *scanBatch[T], 8*workers)
	stop := make(chan struct{})
	var readErr error
	go func() {
		defer close(ordered)
		defer close(todo)
		line := 0
		for eof := false; !eof; {
			var b *scanBatch[T]
			select {
			case b = <-free:
				b.reset()
			default:
				b = &scanBatch[T]{done: make(chan struct{})}
			}
			for len(b.slab) < scanBatchBytes && !eof {
				var err error
				start := len(b.slab)
				b.slab, err = readLine(br, b.slab)
				if err != nil && !errors.Is(err, io.EOF) {
					readErr = &lineError{Line: line + 1, Err: err}
					b.slab = b.slab[:start]
					eof = true
					break
				}
				eof = errors.Is(err, io.EOF)
				if len(b.slab) == start && eof {
					break
				}
				line++
				if len(bytes.TrimSpace(b.slab[start:])) == 0 || (want != nil && !want(line)) {
					b.slab = b.slab[:start]
					continue
				}
				b.lines = append(b.lines, line)
				b.ends = append(b.ends, len(b.slab))
				if eof {
					b.cut = line
				}
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
				if cap(b.vals) < len(b.lines) {
					b.vals = make([]T, len(b.lines))
				}
				b.vals = b.vals[:len(b.lines)]
				var zero T
				for i := range b.lines {
					b.vals[i] = zero
					b.errs = append(b.errs, nil)
					if err := decode(b.data(i), &b.vals[i]); err != nil {
						if b.lines[i] == b.cut {
							err = fmt.Errorf("the last line is cut short, with no newline (was the run killed while writing it?): %w", err)
						}
						b.errs[i] = &lineError{Line: b.lines[i], Err: err}
					}
				}
				close(b.done)
			}
		})
	}
	var fnErr error
	for b := range ordered {
		<-b.done
		for i := range b.lines {
			if b.errs[i] != nil {
				fnErr = b.errs[i]
				break
			}
			if fnErr = fn(b.lines[i], &b.vals[i]); fnErr != nil {
				break
			}
		}
		if fnErr != nil {
			break
		}
		select {
		case free <- b:
		default:
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

// readLine appends the next line, without its newline, to buf. At the end
// of the input it returns io.EOF (with the last line appended when it had
// no newline). A line longer than results.MaxLineBytes is an error.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	start := len(buf)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)-start+len(chunk) > results.MaxLineBytes+1 {
			return buf[:start], fmt.Errorf("line longer than %d bytes", results.MaxLineBytes)
		}
		buf = append(buf, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, io.EOF):
			return buf, io.EOF
		default:
			return buf[:start], err
		}
	}
}
