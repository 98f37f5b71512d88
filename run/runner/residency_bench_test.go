package runner

import (
	"syscall"
	"testing"
	"time"

	"bench/config"
	"bench/internal/testpeer/apartserver"
	"bench/providers"
)

// BenchmarkResidencyPoll measures one poll of a lane's residency watcher
// (GET /api/ps and its reading, as against Ollama) against a server in a
// process of its own (apartserver) answering Ollama's shape, and reports
// its CPU (bench's alone) and what that is in percent of one core at
// ResidencyInterval.
func BenchmarkResidencyPoll(b *testing.B) {
	url := apartserver.Start(b, `{"models":[{"name":"fake:latest","model":"fake:latest","size":1000000,"digest":"abc","details":{"format":"gguf"},"expires_at":"2026-01-01T00:00:00Z","size_vram":0}]}`, "application/json")
	cfg, err := config.Parse("bench.yaml", []byte("providers:\n  - type: ollama_openai\n    base_url: "+url+"/v1\n    models: [fake]\n"), providers.Kinds)
	if err != nil {
		b.Fatal(err)
	}
	prov, err := providers.New(&cfg.Providers[0])
	if err != nil {
		b.Fatal(err)
	}
	w := &residency{prov: prov.(providers.Resident), clock: realClock{}, keep: time.Minute}
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for i := 0; i < b.N; i++ {
		w.poll()
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()) + time.Duration(ru1.Stime.Nano()-ru0.Stime.Nano())
	per := float64(cpu.Microseconds()) / float64(b.N)
	if len(w.reads) == 0 {
		b.Fatal("no reading kept")
	}
	b.ReportMetric(per, "cpu-µs/poll")
	b.ReportMetric(100*per/float64(ResidencyInterval.Microseconds()), "%core@interval")
}
