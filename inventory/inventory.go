// Package inventory writes inventory.json: what can be known about the host,
// the bench build and each configured provider without running a prompt.
// Whatever cannot be found is recorded with its error, never guessed; API
// keys are reported as set or not, never their value.
package inventory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/host"
	"github.com/shirou/gopsutil/v3/mem"

	"bench/config"
)

// Timeout bounds each probe (an HTTP call or a --version run).
const Timeout = 5 * time.Second

// Inventory is inventory.json.
type Inventory struct {
	GeneratedAt time.Time  `json:"generated_at"`
	Host        Host       `json:"host"`
	Bench       Bench      `json:"bench"`
	Providers   []Provider `json:"providers"`
}

// Host describes the machine. Null fields have their reason in Unavailable.
type Host struct {
	Hostname      string            `json:"hostname"`
	OS            string            `json:"os"`
	Platform      string            `json:"platform"`
	PlatformVer   string            `json:"platform_version"`
	Kernel        string            `json:"kernel"`
	Arch          string            `json:"arch"`
	CPUModel      *string           `json:"cpu_model"`
	CoresPhysical *int              `json:"cores_physical"`
	CoresLogical  *int              `json:"cores_logical"`
	MemTotal      *uint64           `json:"mem_total_bytes"`
	Unavailable   map[string]string `json:"unavailable,omitempty"`
}

// Bench is the running binary's build.
type Bench struct {
	GoVersion string `json:"go_version"`
	// Version is the main module's version ("(devel)" for a local build).
	Version  string            `json:"version"`
	Module   string            `json:"module"`
	Settings map[string]string `json:"build_settings,omitempty"`
}

// Provider is one configured provider entry and what could be learned
// about it.
type Provider struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	BaseURL string   `json:"base_url,omitempty"`
	Models  []string `json:"models"`
	// APIKeyEnv is the variable named in the config; APIKeySet is "yes" or
	// "no" (null when the entry names no variable).
	APIKeyEnv string  `json:"api_key_env,omitempty"`
	APIKeySet *string `json:"api_key_set"`

	// Ollama: the server's version and installed models.
	ServerVersion *string       `json:"server_version,omitempty"`
	ServerModels  []OllamaModel `json:"server_models,omitempty"`
	// Claude Code CLI: the command and its --version output.
	Command    string  `json:"command,omitempty"`
	CLIVersion *string `json:"cli_version,omitempty"`

	// Errors are the probes that failed, each with its reason.
	Errors []string `json:"errors,omitempty"`
}

// OllamaModel is one entry of /api/tags.
type OllamaModel struct {
	Name              string    `json:"name"`
	Size              int64     `json:"size"`
	Digest            string    `json:"digest"`
	ModifiedAt        time.Time `json:"modified_at"`
	Family            string    `json:"family,omitempty"`
	ParameterSize     string    `json:"parameter_size,omitempty"`
	QuantizationLevel string    `json:"quantization_level,omitempty"`
}

// Write gathers the inventory and writes runDir/inventory.json.
func Write(ctx context.Context, runDir string, cfg *config.Config) error {
	inv := Gather(ctx, cfg)
	data, err := json.MarshalIndent(inv, "", "  ")
	if err != nil {
		return fmt.Errorf("encode inventory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "inventory.json"), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write inventory: %w", err)
	}
	return nil
}

// Gather probes the host, the build and every provider of cfg.
func Gather(ctx context.Context, cfg *config.Config) *Inventory {
	inv := &Inventory{GeneratedAt: time.Now().UTC(), Host: gatherHost(ctx), Bench: gatherBench(), Providers: []Provider{}}
	for _, p := range cfg.Providers {
		inv.Providers = append(inv.Providers, gatherProvider(ctx, p))
	}
	return inv
}

func gatherHost(ctx context.Context) Host {
	h := Host{OS: runtime.GOOS, Arch: runtime.GOARCH, Unavailable: map[string]string{}}
	if info, err := host.InfoWithContext(ctx); err != nil {
		h.Unavailable["platform"] = err.Error()
	} else {
		h.Hostname, h.Platform, h.PlatformVer, h.Kernel = info.Hostname, info.Platform, info.PlatformVersion, info.KernelVersion
		if info.KernelArch != "" {
			h.Arch = info.KernelArch
		}
	}
	if infos, err := cpu.InfoWithContext(ctx); err != nil || len(infos) == 0 || infos[0].ModelName == "" {
		h.Unavailable["cpu_model"] = reason(err, "no CPU model reported")
	} else {
		h.CPUModel = &infos[0].ModelName
	}
	for _, c := range []struct {
		logical bool
		dst     **int
		field   string
	}{{false, &h.CoresPhysical, "cores_physical"}, {true, &h.CoresLogical, "cores_logical"}} {
		if n, err := cpu.CountsWithContext(ctx, c.logical); err != nil || n <= 0 {
			h.Unavailable[c.field] = reason(err, "no count reported")
		} else {
			*c.dst = &n
		}
	}
	if v, err := mem.VirtualMemoryWithContext(ctx); err != nil {
		h.Unavailable["mem_total_bytes"] = err.Error()
	} else {
		h.MemTotal = &v.Total
	}
	if len(h.Unavailable) == 0 {
		h.Unavailable = nil
	}
	return h
}

func reason(err error, fallback string) string {
	if err != nil {
		return err.Error()
	}
	return fallback
}

func gatherBench() Bench {
	b := Bench{GoVersion: runtime.Version(), Version: "unknown"}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module, b.Version = info.Main.Path, info.Main.Version
	b.Settings = map[string]string{}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision", "vcs.time", "vcs.modified", "GOOS", "GOARCH", "-race", "CGO_ENABLED":
			b.Settings[s.Key] = s.Value
		}
	}
	return b
}

func gatherProvider(ctx context.Context, p config.Provider) Provider {
	out := Provider{Name: p.Name, Type: p.Type, BaseURL: p.BaseURL, Models: p.Models, APIKeyEnv: p.APIKeyEnv}
	if out.Models == nil {
		out.Models = []string{}
	}
	if p.APIKeyEnv != "" {
		set := "no"
		if os.Getenv(p.APIKeyEnv) != "" {
			set = "yes"
		}
		out.APIKeySet = &set
	}
	switch p.Type {
	case config.TypeOllama, config.TypeOllamaOpenAI:
		root := NativeRoot(p.BaseURL)
		var v struct {
			Version string `json:"version"`
		}
		if err := getJSON(ctx, root+"/api/version", &v); err != nil {
			out.Errors = append(out.Errors, err.Error())
		} else {
			out.ServerVersion = &v.Version
		}
		var tags struct {
			Models []struct {
				Name       string    `json:"name"`
				Size       int64     `json:"size"`
				Digest     string    `json:"digest"`
				ModifiedAt time.Time `json:"modified_at"`
				Details    struct {
					Family            string `json:"family"`
					ParameterSize     string `json:"parameter_size"`
					QuantizationLevel string `json:"quantization_level"`
				} `json:"details"`
			} `json:"models"`
		}
		if err := getJSON(ctx, root+"/api/tags", &tags); err != nil {
			out.Errors = append(out.Errors, err.Error())
		} else {
			out.ServerModels = []OllamaModel{}
			for _, m := range tags.Models {
				out.ServerModels = append(out.ServerModels, OllamaModel{m.Name, m.Size, m.Digest, m.ModifiedAt, m.Details.Family, m.Details.ParameterSize, m.Details.QuantizationLevel})
			}
		}
	case config.TypeClaudeCodeCLI:
		out.Command = p.Command
		if v, err := cliVersion(ctx, p.Command); err != nil {
			out.Errors = append(out.Errors, err.Error())
		} else {
			out.CLIVersion = &v
		}
	}
	return out
}

// NativeRoot is the Ollama native API root of a base URL: the OpenAI
// compatible .../v1 suffix and trailing slashes removed.
func NativeRoot(baseURL string) string {
	r := strings.TrimRight(baseURL, "/")
	r = strings.TrimSuffix(r, "/v1")
	return strings.TrimRight(r, "/")
}

func getJSON(ctx context.Context, url string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("GET %s: read body: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d: %s", url, resp.StatusCode, strings.TrimSpace(string(body[:min(len(body), 200)])))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: decode: %w", url, err)
	}
	return nil
}

// cliVersion runs `<command> --version` and returns its first output line.
func cliVersion(ctx context.Context, command string) (string, error) {
	if command == "" {
		return "", errors.New("no command configured")
	}
	path, err := exec.LookPath(command)
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", command, err)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", command, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if line == "" {
		return "", fmt.Errorf("%s --version: no output", command)
	}
	return line, nil
}
