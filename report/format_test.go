package report

import (
	"testing"

	"bench/internal/format"
)

func TestFormat(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	for _, c := range []struct{ got, want string }{
		{format.Bytes(nil), "n/a"}, {format.Bytes(u(0)), "0 B"}, {format.Bytes(u(1023)), "1023 B"}, {format.Bytes(u(1536)), "1.5 KiB"},
		{format.Bytes(u(3 << 30)), "3.0 GiB"}, {format.Bytes(u(5 << 50)), "5120.0 TiB"},
		{format.Pct(nil), "n/a"}, {format.Pct(f(12.345)), "12.3%"},
		{format.Float(nil), "n/a"}, {format.Float(f(0.5)), "0.50"},
		{format.Int(nil), "n/a"}, {format.Int(i(-3)), "-3"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
