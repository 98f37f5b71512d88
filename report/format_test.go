package report

import "testing"

func TestFormat(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	for _, c := range []struct{ got, want string }{
		{Bytes(nil), "n/a"}, {Bytes(u(0)), "0 B"}, {Bytes(u(1023)), "1023 B"}, {Bytes(u(1536)), "1.5 KiB"},
		{Bytes(u(3 << 30)), "3.0 GiB"}, {Bytes(u(5 << 50)), "5120.0 TiB"},
		{Pct(nil), "n/a"}, {Pct(f(12.345)), "12.3%"},
		{Float(nil), "n/a"}, {Float(f(0.5)), "0.50"},
		{Int(nil), "n/a"}, {Int(i(-3)), "-3"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
