package resources

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// pressurePath is the kernel's CPU pressure stall information (PSI, Linux
// 4.20 and later, when built with CONFIG_PSI and not booted psi=0).
const pressurePath = "/proc/pressure/cpu"

// errNoPressure says the machine has no CPU pressure file: the figure is
// then unavailable, with this reason, and bench compare judges the machine
// on other work and steal alone.
var errNoPressure = errors.New("no " + pressurePath + " on this machine (a kernel without pressure stall information)")

// readPressure reads the "some" line's total: the microseconds during
// which at least one runnable task waited for a CPU, since boot. Its
// growth over a span, as a share of the span, is the CPU pressure. Parsed
// here: it is one line of one file (gopsutil does not read it), e.g.
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=12345678
func readPressure() (uint64, error) {
	b, err := os.ReadFile(pressurePath)
	if errors.Is(err, os.ErrNotExist) {
		return 0, errNoPressure
	}
	if err != nil {
		return 0, err
	}
	return parsePressure(b)
}

// parsePressure finds the "some" line's total= field.
func parsePressure(b []byte) (uint64, error) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) == 0 || string(f[0]) != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := bytes.CutPrefix(kv, []byte("total=")); ok {
				n, err := strconv.ParseUint(string(v), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("%s: total %q: %w", pressurePath, v, err)
				}
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: no \"some ... total=\" line", pressurePath)
}
