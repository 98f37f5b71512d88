package agentsnap

import "testing"

// BenchmarkWrite is one cell's snapshot written atomically (temp, fsync,
// rename), as bench run does per finished cell.
func BenchmarkWrite(b *testing.B) {
	dir := b.TempDir()
	s := sample()
	k := KeyOf(s)
	for b.Loop() {
		if err := Write(dir, k, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadDiff is what a compare does per matched cell: read both
// snapshots and diff them.
func BenchmarkReadDiff(b *testing.B) {
	dir := b.TempDir()
	p := pairs()[len(pairs())-1]
	basePath, curPath := writePair(b, dir, p)
	for b.Loop() {
		base, err := Read(basePath)
		if err != nil {
			b.Fatal(err)
		}
		cur, err := Read(curPath)
		if err != nil {
			b.Fatal(err)
		}
		Diff(base, cur)
	}
}

func BenchmarkDiff(b *testing.B) {
	base := basePair()
	cur := edit(func(s *Snapshot) { s.Tools[1].ResultHash = ResultHash("x"); s.Output = "changed" })
	for b.Loop() {
		Diff(base, cur)
	}
}

func BenchmarkFileName(b *testing.B) {
	k := Key{Provider: "ollama_openai", ProviderType: "ollama_openai", Model: "hf.co/unsloth/Qwen3-4B-GGUF:Q4_K_M", ThinkingLevel: "high", PromptID: "P3", Repetition: 2}
	for b.Loop() {
		FileName(k)
	}
}
