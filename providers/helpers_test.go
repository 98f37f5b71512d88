package providers

import (
	"testing"

	"bench/config"
)

// newKind builds a provider of the named type from its options, resolved
// as config.Load resolves them.
func newKind(t testing.TB, typ string, opts any) Provider {
	t.Helper()
	k, ok := Lookup(typ)
	if !ok {
		t.Fatalf("no kind %q", typ)
	}
	p := &config.Provider{Name: typ, Type: typ, Models: []string{"m"}, Options: opts}
	k.Resolve(p, func(key, msg string) { t.Fatalf("%s: %s: %s", typ, key, msg) })
	pv, err := k.New(p, EntrySecrets(p))
	if err != nil {
		t.Fatal(err)
	}
	return pv
}

// isPhase tells the phase events of the HTTP path (connection, request
// written, first byte, retry) from the stream's own events.
func isPhase(k EventKind) bool {
	return k == EventConnected || k == EventRequestWritten || k == EventFirstByte || k == EventRetry
}

func TestNativeRoot(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:11434/v1":  "http://localhost:11434",
		"http://localhost:11434/v1/": "http://localhost:11434",
		"http://localhost:11434":     "http://localhost:11434",
		"http://h:1/proxy/v1":        "http://h:1/proxy",
		"http://h:1/v10":             "http://h:1/v10",
	} {
		if got := nativeRoot(in); got != want {
			t.Errorf("nativeRoot(%q) = %q, want %q", in, got, want)
		}
	}
}
