package htmlreport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"

	"bench/internal/record/rundir"
)

// MaxTimelinePoints bounds the points of the resource timeline: a long run
// sampled every 500 ms is cut into this many time buckets, each keeping the
// highest reading of each series, so the plot stays light and no peak is
// lost.
const MaxTimelinePoints = 1500

// maxSampleLine bounds one samples line; a sample is a few numbers.
const maxSampleLine = 64 << 10

// Timeline is one suite's resource samples, in time order.
type Timeline struct {
	Provider      string
	Model         string
	ThinkingLevel *string
	Samples       []rundir.Sample
}

// Label names the suite as report.Group.Label does.
func (t *Timeline) Label() string {
	s := t.Provider + "/" + t.Model
	if t.ThinkingLevel != nil {
		s += " (" + *t.ThinkingLevel + ")"
	}
	return s
}

// ReadTimelines reads the sample series of every suite of runDir that has
// one. The suites are found from their resources_*.json files (plain JSON:
// provider, model, thinking_level), and each series from the samples file
// beside it. A run without series gives none and no error; bad lines are
// skipped and named in the warnings (file and line); a suite file that
// cannot be read is a warning too. Only a failure to list runDir is an
// error.
func ReadTimelines(runDir string) ([]*Timeline, []string, error) {
	paths, err := rundir.ResourceRecords(runDir)
	if err != nil {
		return nil, nil, fmt.Errorf("resource timelines: %w", err)
	}
	if _, err := os.Stat(runDir); err != nil {
		return nil, nil, fmt.Errorf("resource timelines: %w", err)
	}
	sort.Strings(paths)
	var out []*Timeline
	var warnings []string
	for _, p := range paths {
		samplesPath := rundir.SamplesOf(p)
		f, err := rundir.Open(samplesPath, rundir.MaxFileBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("resource timeline: %v", err))
			continue
		}
		samples, warn, err := ReadSamples(f, samplesPath)
		f.Close()
		warnings = append(warnings, warn...)
		if err != nil {
			warnings = append(warnings, err.Error())
			continue
		}
		var id struct {
			Provider      string  `json:"provider"`
			Model         string  `json:"model"`
			ThinkingLevel *string `json:"thinking_level"`
		}
		data, err := rundir.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(data, &id)
		}
		if err == nil && (id.Provider == "" || id.Model == "") {
			err = errors.New("provider or model is empty")
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("resource timeline: %s: %v", p, err))
			continue
		}
		if len(samples) == 0 {
			continue
		}
		out = append(out, &Timeline{Provider: id.Provider, Model: id.Model, ThinkingLevel: id.ThinkingLevel, Samples: samples})
	}
	return out, warnings, nil
}

// ReadSamples parses a samples file (name is for messages). A line that is
// not a sample (bad JSON, no t_ms, a negative figure) is skipped with a
// warning naming name and the line; samples come back sorted by time. Only
// a read error is an error.
func ReadSamples(r io.Reader, name string) ([]rundir.Sample, []string, error) {
	out, warnings, err := rundir.ReadLines(r, name, "sample", maxSampleLine, checkSample)
	sort.SliceStable(out, func(i, j int) bool { return out[i].TimeMS < out[j].TimeMS })
	return out, warnings, err
}

// checkSample says why a decoded sample cannot be plotted, or "".
func checkSample(s *rundir.Sample) string {
	switch {
	case s.TimeMS <= 0:
		return "t_ms missing or not positive"
	case s.CPUPercent != nil && (*s.CPUPercent < 0 || *s.CPUPercent > 100):
		return fmt.Sprintf("cpu_percent %v outside 0-100", *s.CPUPercent)
	case s.ServerCPUPercent != nil && (*s.ServerCPUPercent < 0):
		return fmt.Sprintf("server_cpu_percent %v is negative", *s.ServerCPUPercent)
	}
	return ""
}
