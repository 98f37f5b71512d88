package agentsnap

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

var safeName = regexp.MustCompile(`^[a-z0-9_][a-z0-9._-]*\.json$`)

// checkSafe asserts what FileName promises about one name.
func checkSafe(t *testing.T, k Key, name string) {
	t.Helper()
	if !safeName.MatchString(name) {
		t.Errorf("FileName(%s) = %q: not only [a-z0-9._-] or starts with . or -", k, name)
	}
	if len(name) > 206 {
		t.Errorf("FileName(%s) is %d bytes, want <= 206", k, len(name))
	}
	if strings.Contains(name, "/") || strings.Contains(name, `\`) || name == "." || name == ".." {
		t.Errorf("FileName(%s) = %q is a path, not a name", k, name)
	}
	// No Windows device name before the first dot.
	stem := strings.ToLower(strings.SplitN(name, ".", 2)[0])
	switch stem {
	case "con", "prn", "aux", "nul", "com1", "lpt1":
		t.Errorf("FileName(%s) = %q starts with a Windows device name", k, name)
	}
}

func TestFileName(t *testing.T) {
	k := Key{Provider: "ollama_openai", ProviderType: "ollama_openai", Model: "qwen3:4b", PromptID: "P3", Repetition: 0}
	for _, tc := range []struct {
		key  Key
		want string // the name without its hash and extension
	}{
		{k, "ollama_openai__qwen3-4b__none__p3__r0__"},
		{Key{Provider: "lmstudio", Model: "org/model", ThinkingLevel: "high", PromptID: "P10", Repetition: 12}, "lmstudio__org-model__high__p10__r12__"},
		{Key{Provider: "hf", Model: "hf.co/unsloth/Qwen3-4B-GGUF:Q4_K_M", PromptID: "p0"}, "hf__hf.co-unsloth-qwen3-4b-gguf-q4_k_m__none__p0__r0__"},
		{Key{Provider: "p", Model: "模型:7b", PromptID: "P0"}, "p__7b__none__p0__r0__"},
		{Key{Provider: "p", Model: "日本語", PromptID: "P0"}, "p__x__none__p0__r0__"},
		{Key{Provider: "con.x", Model: "..", PromptID: "../../etc/passwd"}, "con-x__x__none__etc-passwd__r0__"},
		{Key{Provider: "", Model: "", PromptID: "", Repetition: -1}, "x__x__none__x__r-1__"},
		{Key{Provider: "p", Model: strings.Repeat("very-long-model-name/", 40), PromptID: "P0"}, "p__very-long-model-name-very-long-model-name-very-long-model-name-v__none__p0__r0__"},
		{Key{Provider: "p", Model: "m", PromptID: "P0", Stage: "c=4"}, "p__m__none__p0__r0__c-4__"},
		{Key{Provider: strings.Repeat("p", 99), Model: strings.Repeat("m", 99), ThinkingLevel: strings.Repeat("t", 99), PromptID: strings.Repeat("x", 99), Repetition: -1 << 62, Stage: "rate=" + strings.Repeat("9", 99)},
			strings.Repeat("p", 24) + "__" + strings.Repeat("m", 64) + "__" + strings.Repeat("t", 16) + "__" + strings.Repeat("x", 32) + "__r-4611686018427387904__rate-99999999999__"},
	} {
		name := FileName(tc.key)
		checkSafe(t, tc.key, name)
		hashed := regexp.MustCompile(`^(.*__)[0-9a-f]{16}\.json$`).FindStringSubmatch(name)
		if hashed == nil || hashed[1] != tc.want {
			t.Errorf("FileName(%s) = %q, want %q + 16 hex digits + .json", tc.key, name, tc.want)
		}
		if FileName(tc.key) != name {
			t.Errorf("FileName(%s) is not deterministic", tc.key)
		}
	}
}

// A sweep sends the same prompts and repetitions once per stage: each
// stage's cell has its own file, and a cell without a stage keeps the name
// (and hash) it had before stages were part of the key.
func TestFileNameStages(t *testing.T) {
	k := Key{Provider: "p", ProviderType: "ollama_openai", Model: "m", PromptID: "P0"}
	seen := map[string]bool{FileName(k): true}
	for _, st := range []string{"c=1", "c=2", "rate=2.5", "rate=25", "warmup"} {
		k.Stage = st
		name := FileName(k)
		if seen[name] {
			t.Errorf("stage %q shares the name %s", st, name)
		}
		seen[name] = true
	}
	if got := FileName(Key{Provider: "ollama_openai", ProviderType: "ollama_openai", Model: "qwen3:4b", PromptID: "P3"}); got != "ollama_openai__qwen3-4b__none__p3__r0__bfff479dccb12c8f.json" {
		t.Errorf("an unstaged cell's name changed: %s", got)
	}
}

// TestFileNameNoCollisions: keys that slug to the same readable name (case,
// a replaced character, a cut tail, a field boundary) still get distinct
// names, also on a case-insensitive filesystem.
func TestFileNameNoCollisions(t *testing.T) {
	base := Key{Provider: "ollama", ProviderType: "ollama", Model: "qwen3:4b", PromptID: "P0"}
	variants := []Key{base}
	add := func(edit func(k *Key)) {
		k := base
		edit(&k)
		variants = append(variants, k)
	}
	add(func(k *Key) { k.Model = "Qwen3:4b" })
	add(func(k *Key) { k.Model = "QWEN3:4B" })
	add(func(k *Key) { k.Model = "qwen3/4b" })
	add(func(k *Key) { k.Model = "qwen3-4b" })
	add(func(k *Key) { k.Model = "qwen3 4b" })
	add(func(k *Key) { k.Model = "qwen3::4b" })
	add(func(k *Key) { k.Model = "qwen3:4b:" })
	add(func(k *Key) { k.Model = "qwen3\u00e9:4b" })
	add(func(k *Key) { k.Model = "qwen3:4b\x00" })
	add(func(k *Key) { k.Model = strings.Repeat("m", 64) + "a" })
	add(func(k *Key) { k.Model = strings.Repeat("m", 64) + "b" })
	add(func(k *Key) { k.PromptID = "p0" })
	add(func(k *Key) { k.ProviderType = "ollama_openai" })
	add(func(k *Key) { k.ThinkingLevel = "none" })
	add(func(k *Key) { k.ThinkingLevel = "low" })
	add(func(k *Key) { k.Repetition = 1 })
	add(func(k *Key) { k.Provider, k.Model = "ollama_", "_qwen3:4b" })
	add(func(k *Key) { k.Provider, k.ProviderType = "ollamao", "llama" })
	add(func(k *Key) { k.Provider, k.ProviderType = "", "ollamaollama" })

	dir := t.TempDir()
	seen := map[string]Key{}
	for _, k := range variants {
		name := FileName(k)
		checkSafe(t, k, name)
		folded := strings.ToLower(name)
		if prev, dup := seen[folded]; dup {
			t.Errorf("%s and %s share the file name %s", prev, k, name)
		}
		seen[folded] = k
		// And the filesystem takes it.
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Errorf("create %s: %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(variants) {
		t.Errorf("%d files for %d keys", len(entries), len(variants))
	}
}

// FuzzFileName: any two different keys give safe, different names.
func FuzzFileName(f *testing.F) {
	f.Add("qwen3:4b", "Qwen3:4b", "ollama", "P0", "", 0)
	f.Add("org/model", "org_model", "openai", "P1", "high", 3)
	f.Add("模型", "模形", "p", "../x", "low", -1)
	f.Add(strings.Repeat("a", 300), strings.Repeat("a", 299)+"b", "p", "P", "", 1<<40)
	f.Add("con", "CON", "con", "nul", "aux", 0)
	f.Add("a\x00b", "a\xffb", ".", "..", ".", 0)
	f.Fuzz(func(t *testing.T, model1, model2, provider, prompt, thinking string, rep int) {
		k1 := Key{Provider: provider, ProviderType: provider, Model: model1, ThinkingLevel: thinking, PromptID: prompt, Repetition: rep}
		k2 := k1
		k2.Model = model2
		n1, n2 := FileName(k1), FileName(k2)
		checkSafe(t, k1, n1)
		checkSafe(t, k2, n2)
		if !utf8.ValidString(n1) {
			t.Errorf("name %q is not UTF-8", n1)
		}
		if (k1 == k2) != (strings.EqualFold(n1, n2)) {
			t.Errorf("keys equal=%v but names %q and %q equal=%v", k1 == k2, n1, n2, strings.EqualFold(n1, n2))
		}
	})
}
