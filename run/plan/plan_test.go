package plan

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"bench/config"
	"bench/internal/record/results"
	"bench/prompts"
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

// suiteModels lists a plan's suites by model, with their cell counts.
func suiteModels(p *Plan) []string {
	var out []string
	for _, s := range p.Suites {
		out = append(out, s.Model+":"+strconv.Itoa(s.Cells))
	}
	return out
}

func TestShard(t *testing.T) {
	models := func(n int) []string {
		var ms []string
		for i := range n {
			ms = append(ms, "m"+strconv.Itoa(i))
		}
		return ms
	}
	tests := []struct {
		name    string
		suites  int
		i, n    int
		want    []string // suites of shard i, as model:cells
		wantErr bool
	}{
		{"one shard is the plan", 3, 1, 1, []string{"m0:2", "m1:2", "m2:2"}, false},
		{"even first", 4, 1, 2, []string{"m0:2", "m2:2"}, false},
		{"even second", 4, 2, 2, []string{"m1:2", "m3:2"}, false},
		{"uneven first gets the extra", 5, 1, 2, []string{"m0:2", "m2:2", "m4:2"}, false},
		{"uneven last", 5, 2, 2, []string{"m1:2", "m3:2"}, false},
		{"uneven middle of three", 7, 2, 3, []string{"m1:2", "m4:2"}, false},
		{"more shards than suites: dealt one each", 2, 2, 4, []string{"m1:2"}, false},
		{"more shards than suites: the rest empty", 2, 3, 4, nil, false},
		{"i above n", 3, 3, 2, nil, true},
		{"zero-based i", 3, 0, 2, nil, true},
		{"no shards", 3, 1, 0, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 1, Models: models(tt.suites), ThinkingLevels: []*string{nil}}}, 2, 1)
			got, err := New(cfg).Shard(tt.i, tt.n)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Shard(%d, %d): no error", tt.i, tt.n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(suiteModels(got), tt.want) {
				t.Errorf("suites %v, want %v", suiteModels(got), tt.want)
			}
			if len(got.Cells) != 2*len(tt.want) {
				t.Errorf("%d cells, want %d", len(got.Cells), 2*len(tt.want))
			}
			for _, c := range got.Cells {
				if got.Suites[c.Suite].Model != c.Model {
					t.Errorf("cell of %s points at suite %d (%s)", c.Model, c.Suite, got.Suites[c.Suite].Model)
				}
			}
		})
	}
}

// Every cell of the plan is in exactly one shard, suites stay whole, the
// shards' sizes differ by at most one suite, and dealing again gives the
// same split.
func TestShardsPartitionThePlan(t *testing.T) {
	low := "low"
	cfg := testConfig([]config.Provider{
		{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m1", "m2", "m3"}, ThinkingLevels: []*string{nil, &low}},
		{Name: "b", Type: "ollama_openai", Concurrency: 1, Models: []string{"m1"}, ThinkingLevels: []*string{nil}},
	}, 3, 2)
	full := New(cfg)
	for n := 1; n <= len(full.Suites)+2; n++ {
		seen := map[results.Key]int{}
		suiteShard := map[string]int{}
		minS, maxS := len(full.Suites), 0
		for i := 1; i <= n; i++ {
			sh, err := full.Shard(i, n)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := full.Shard(i, n)
			if !slices.Equal(suiteModels(sh), suiteModels(again)) {
				t.Errorf("n=%d: shard %d dealt differently twice", n, i)
			}
			minS, maxS = min(minS, len(sh.Suites)), max(maxS, len(sh.Suites))
			for _, c := range sh.Cells {
				seen[c.Key()]++
				s := sh.Suites[c.Suite]
				id := s.Provider + "/" + s.Model + "/" + fmt.Sprint(s.ThinkingLevel != nil)
				if prev, ok := suiteShard[id]; ok && prev != i {
					t.Errorf("n=%d: suite %s split over shards %d and %d", n, id, prev, i)
				}
				suiteShard[id] = i
			}
		}
		if len(seen) != len(full.Cells) {
			t.Errorf("n=%d: shards hold %d distinct cells of %d", n, len(seen), len(full.Cells))
		}
		for k, v := range seen {
			if v != 1 {
				t.Errorf("n=%d: %+v in %d shards", n, k, v)
			}
		}
		if maxS-minS > 1 {
			t.Errorf("n=%d: shard sizes from %d to %d suites", n, minS, maxS)
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, s := range []string{"1/1", "2/4", " 3 / 3 "} {
		if _, _, err := ParseShard(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if i, n, _ := ParseShard("2/4"); i != 2 || n != 4 {
		t.Errorf("2/4 read as %d/%d", i, n)
	}
	for _, s := range []string{"", "2", "0/4", "5/4", "1/0", "a/b", "1/2/3", "-1/2"} {
		if _, _, err := ParseShard(s); err == nil || !strings.Contains(err.Error(), "i/n") {
			t.Errorf("%q: err %v", s, err)
		}
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
