package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// SuiteRecord is the structured form of one suite's resource files
// (resources_<provider>_<model>[_<thinking>]_<hash>.json, see FileBase), what the report reads to
// fill resources_before, resources_after and resources_peak.
type SuiteRecord struct {
	Provider      string  `json:"provider"`
	ProviderType  string  `json:"provider_type"`
	Model         string  `json:"model"`
	ThinkingLevel *string `json:"thinking_level"`
	// Before is taken when the suite's first cell starts, After when its last
	// ended; Peak is what the sampler saw in between (null until it ends).
	Before *Snapshot `json:"before"`
	After  *Snapshot `json:"after"`
	Peak   *Peak     `json:"peak"`
	// Warmup is the suite's unrecorded warm-up request (null when the
	// suite had none): how long loading the model took.
	Warmup *Warmup `json:"warmup,omitempty"`
}

// Warmup is what a suite's warm-up request measured.
type Warmup struct {
	// LoadMS is the warm-up request's duration, in ms with µs precision:
	// the suite's load time.
	LoadMS float64 `json:"load_ms"`
	// ServerLoadMS is the load time the server itself reported, if any.
	ServerLoadMS *float64 `json:"server_load_ms,omitempty"`
	// Error is why the warm-up failed ("" when it did not).
	Error string `json:"error,omitempty"`
}

// Peak is the highest load the sampler saw during a suite.
type Peak struct {
	Samples    int   `json:"samples"`
	IntervalMS int64 `json:"interval_ms"`
	// CPUPercent is the busiest interval of the whole machine; CPUPercentMean
	// the mean over the intervals.
	CPUPercent     *float64 `json:"cpu_percent"`
	CPUPercentMean *float64 `json:"cpu_percent_mean"`
	MemUsed        *uint64  `json:"mem_used_bytes"`
	// ServerRSS and ServerCPUPercent are the model server tree's peaks.
	ServerRSS        *uint64  `json:"server_rss_bytes"`
	ServerCPUPercent *float64 `json:"server_cpu_percent"`
	// OtherCPUPercentMean is the mean CPU, in percent of one core, that
	// neither bench nor the model server used: other work on the machine.
	OtherCPUPercentMean *float64 `json:"other_cpu_percent_mean"`
	// CPUPressurePercentMean is the mean share of the time during which
	// at least one runnable task waited for a CPU (the kernel's pressure
	// stall information, /proc/pressure/cpu "some"): how crowded the
	// machine was, whoever crowded it. Null on a machine without it.
	CPUPressurePercentMean *float64 `json:"cpu_pressure_percent_mean"`
	// StealPercentMean is the mean share of CPU time a hypervisor gave
	// other guests: a virtual machine's noisy neighbours.
	StealPercentMean *float64 `json:"steal_percent_mean"`
	// Unavailable maps a null field's JSON name to why it is null.
	Unavailable map[string]string `json:"unavailable,omitempty"`
}

// ReadSuite reads the structured resource file of a suite from a run
// directory (under its FileBase name, or the name runs written before it
// used). A missing file is (nil, nil): the run recorded no resources. A
// file whose content names another suite is an error rather than someone
// else's figures.
func ReadSuite(runDir, provider, model string, thinking *string) (*SuiteRecord, error) {
	path := Path(runDir, ResourceFiles(provider, model, thinking).JSON)
	data, err := ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		path = filepath.Join(runDir, legacyFileBase(provider, model, thinking)+".json")
		data, err = ReadFile(path)
	}
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENAMETOOLONG) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read resources: %w", err)
	}
	var rec SuiteRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if rec.Provider != provider || rec.Model != model || !sameLevel(rec.ThinkingLevel, thinking) {
		return nil, fmt.Errorf("%s belongs to %s/%s, not %s/%s", path, rec.Provider, rec.Model, provider, model)
	}
	return &rec, nil
}

func sameLevel(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// Snapshot is the machine at one moment. Sizes are bytes; percents are 0-100
// (a process's CPU percent is of one core, as top shows it, so it can pass 100).
type Snapshot struct {
	TakenAt time.Time `json:"taken_at"`

	CPUCount *int `json:"cpu_count"`
	// CPUPercent is the whole machine's busy share over CPUWindowMS.
	CPUPercent  *float64 `json:"cpu_percent"`
	CPUWindowMS int64    `json:"cpu_window_ms"`

	Load1  *float64 `json:"load1"`
	Load5  *float64 `json:"load5"`
	Load15 *float64 `json:"load15"`

	MemTotal     *uint64 `json:"mem_total_bytes"`
	MemUsed      *uint64 `json:"mem_used_bytes"`
	MemAvailable *uint64 `json:"mem_available_bytes"`
	SwapTotal    *uint64 `json:"swap_total_bytes"`
	SwapUsed     *uint64 `json:"swap_used_bytes"`

	// Disk is the file system holding the run directory; OutDirBytes is the
	// run directory's own size.
	DiskPath    string  `json:"disk_path"`
	DiskTotal   *uint64 `json:"disk_total_bytes"`
	DiskUsed    *uint64 `json:"disk_used_bytes"`
	DiskFree    *uint64 `json:"disk_free_bytes"`
	OutDirBytes *uint64 `json:"out_dir_bytes"`

	ProcessCount *int `json:"process_count"`

	// Server is the local model server, null when there is none to measure
	// (the reason is under Unavailable["server"]).
	Server *Server `json:"server"`

	// Unavailable maps a null field's JSON name to why it is null.
	Unavailable map[string]string `json:"unavailable,omitempty"`
}

// Server is the model server process and its descendants (Ollama runs each
// loaded model in a child runner process, which is where the weights live).
type Server struct {
	PID     int32  `json:"pid"`
	Name    string `json:"name"`
	FoundBy string `json:"found_by"`
	// Processes is how many processes the tree had (server + descendants).
	Processes int `json:"processes"`
	// RSSBytes is the resident memory of the whole tree.
	RSSBytes *uint64 `json:"rss_bytes"`
	// CPUPercent is the tree's CPU time over the measuring window, in percent
	// of one core.
	CPUPercent *float64 `json:"cpu_percent"`
}

// Sample is one reading of the sampler, one line of a samples file. A null
// figure was not measured at that moment (the suite's first reading has no
// CPU share: the span it would measure began before the suite did; nor
// has a reading taken within half an interval of the previous share).
type Sample struct {
	// TimeMS is when the reading was taken, in Unix milliseconds.
	TimeMS int64 `json:"t_ms"`
	// CPUPercent is the whole machine's busy share since the previous
	// share was measured.
	CPUPercent *float64 `json:"cpu_percent"`
	// MemUsed is the machine's used memory, in bytes.
	MemUsed *uint64 `json:"mem_used_bytes"`
	// ServerRSS is the model server tree's resident memory, in bytes.
	ServerRSS *uint64 `json:"server_rss_bytes"`
	// ServerCPUPercent is the server tree's CPU since its previous share
	// was measured, in percent of one core.
	ServerCPUPercent *float64 `json:"server_cpu_percent"`
	// OtherCPUPercent is the CPU that neither bench nor the model server
	// used over the same span, in percent of one core: the rest of the
	// machine's work, which moves latency from one run to the next
	// without the model changing (bench compare reports it).
	OtherCPUPercent *float64 `json:"other_cpu_percent"`
	// CPUPressurePercent is the share of the span during which at least
	// one runnable task waited for a CPU (/proc/pressure/cpu "some").
	CPUPressurePercent *float64 `json:"cpu_pressure_percent,omitempty"`
	// StealPercent is the share of the span's CPU time stolen by the
	// hypervisor.
	StealPercent *float64 `json:"steal_percent,omitempty"`
}
