package providers

import (
	"bench/internal/record/secrets"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fillStrings sets every string reachable from v (by reflection, so a
// field added later is filled too) to text holding key.
func fillStrings(t *testing.T, v reflect.Value, key string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("got " + key + " back")
	case reflect.Pointer:
		if v.Type().Elem().Kind() == reflect.String || v.Type().Elem().Kind() == reflect.Struct {
			v.Set(reflect.New(v.Type().Elem()))
			fillStrings(t, v.Elem(), key)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillStrings(t, v.Field(i), key)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillStrings(t, v.Index(0), key)
	case reflect.Bool, reflect.Int, reflect.Int64:
	default:
		t.Fatalf("a field of kind %s: teach fillStrings and Probe.Clean about it", v.Kind())
	}
}

// TestProbeCleanCoversProbe: every string of inventory.json's probe is
// scrubbed, and base_url is shown without its userinfo.
func TestProbeCleanCoversProbe(t *testing.T) {
	key := "sk-test-" + "Pr0beK3yAbCdEfGh"
	var p Probe
	fillStrings(t, reflect.ValueOf(&p).Elem(), key)
	p.BaseURL = "http://bob:" + key + "@127.0.0.1:11434"
	p.Clean(secrets.New(key))
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+8 <= len(key); i++ {
		if strings.Contains(string(b), key[i:i+8]) {
			t.Fatalf("probe keeps %q: %s", key[i:i+8], b)
		}
	}
	if p.BaseURL != "http://127.0.0.1:11434" {
		t.Errorf("base_url = %q", p.BaseURL)
	}
	if strings.Count(string(b), Redacted) < 10 {
		t.Errorf("too few fields were filled: %s", b)
	}
}
