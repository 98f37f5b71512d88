package plan

import (
	"reflect"
	"testing"

	"bench/config"
	"bench/prompts"
	"bench/results"
	"bench/validators"
)

func testConfig(provs []config.Provider, nPrompts, reps int) *config.Config {
	c := &config.Config{Run: config.Run{ID: "t", Concurrency: 1, Repetitions: reps}}
	c.Providers = provs
	for i := 0; i < nPrompts; i++ {
		c.PromptSet = append(c.PromptSet, prompts.Prompt{ID: "P" + string(rune('0'+i)), Name: "p", Prompt: "say OK",
			Validator: &validators.Spec{Type: "noop"}})
	}
	return c
}

func TestPlanWithout(t *testing.T) {
	low := "low"
	cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m1", "m2"}, ThinkingLevels: []*string{nil, &low}}}, 3, 2)
	full := New(cfg)
	if len(full.Cells) != 2*2*3*2 || len(full.Suites) != 4 {
		t.Fatalf("%d cells, %d suites", len(full.Cells), len(full.Suites))
	}
	done := map[results.Key]bool{}
	for _, c := range full.Cells[:7] { // all of suite 0 (6 cells) and one of suite 1
		r := &results.Record{Provider: c.Provider.Name, ProviderType: c.Provider.Type, Model: c.Model, ThinkingLevel: c.ThinkingLevel, PromptID: c.Prompt.ID, Repetition: c.Repetition}
		done[r.Key()] = true
	}
	rest := full.Without(done)
	if len(rest.Cells) != 24-7 || rest.Suites[0].Cells != 0 || rest.Suites[1].Cells != 5 || rest.Suites[2].Cells != 6 {
		t.Errorf("%d cells left, suites %+v", len(rest.Cells), rest.Suites)
	}
	if rest.Cells[0].Key() != full.Cells[7].Key() {
		t.Errorf("order changed: first left is %+v", rest.Cells[0].Key())
	}
}

func TestEndpointKey(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"http://127.0.0.1:11434/v1", "http://localhost:11434"},
		{"http://localhost:11434", "http://localhost:11434"},
		{"http://LOCALHOST:11434/v1/", "http://localhost:11434"},
		{"http://[::1]:11434", "http://localhost:11434"},
		{"http://0.0.0.0:11434/", "http://localhost:11434"},
		{"http://127.0.0.1:11435/v1", "http://localhost:11435"},
		{"https://api.openai.com/v1", "https://api.openai.com:443"},
		{"http://gpu-box/proxy/v1", "http://gpu-box:80/proxy"},
		{"http://gpu-box/v1x", "http://gpu-box:80/v1x"},
		{"not a url", "not a url"},
	}
	for _, c := range cases {
		if got := EndpointKey(c.in); got != c.want {
			t.Errorf("EndpointKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Lanes put the suites of one server together, whatever provider entry
// reaches it, grouped by model so the server loads each model once; other
// servers and CLI providers are lanes of their own.
func TestLanes(t *testing.T) {
	high := "high"
	provs := []config.Provider{
		{Name: "native", Type: "ollama", Models: []string{"m1", "m2"}, ThinkingLevels: []*string{nil},
			Server: config.Server{Endpoint: "http://127.0.0.1:11434"}},
		{Name: "v1", Type: "ollama_openai", Models: []string{"m2:latest", "m1", "m3"}, ThinkingLevels: []*string{nil, &high},
			Server: config.Server{Endpoint: "http://localhost:11434/v1"}},
		{Name: "other", Type: "ollama", Models: []string{"m1"}, ThinkingLevels: []*string{nil},
			Server: config.Server{Endpoint: "http://127.0.0.1:9999"}},
		{Name: "cli", Type: "claude_code_cli", Models: []string{"sonnet", "opus"}, ThinkingLevels: []*string{nil}},
	}
	pl := New(testConfig(provs, 1, 1))
	name := func(i int) string {
		s := pl.Suites[i]
		n := s.Provider + "/" + s.Model
		if s.ThinkingLevel != nil {
			n += "/" + *s.ThinkingLevel
		}
		return n
	}
	var got [][]string
	var keys []string
	for _, l := range pl.Lanes() {
		keys = append(keys, l.Key)
		var names []string
		for _, si := range l.Suites {
			names = append(names, name(si))
		}
		got = append(got, names)
	}
	want := [][]string{
		{"native/m1", "v1/m1", "v1/m1/high", "native/m2", "v1/m2:latest", "v1/m2:latest/high", "v1/m3", "v1/m3/high"},
		{"other/m1"},
		{"cli/sonnet", "cli/opus"},
	}
	wantKeys := []string{"http://localhost:11434", "http://localhost:9999", "provider:cli"}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("lanes %v %v\nwant %v %v", keys, got, wantKeys, want)
	}
	// A suite with nothing left to run (resumed) is in no lane.
	done := map[results.Key]bool{}
	for _, c := range pl.Cells {
		if c.Provider.Name == "other" {
			done[c.Key()] = true
		}
	}
	if lanes := pl.Without(done).Lanes(); len(lanes) != 2 {
		t.Errorf("lanes after resume: %+v", lanes)
	}
}
