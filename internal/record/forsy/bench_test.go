package forsy

import "testing"

// Benchmarks for the per-cell cost the runner pays: Build, Validate and
// Marshal of a typical trace (the fail_then_retry cell).
func BenchmarkBuild(b *testing.B) {
	c := buildCases()[2].cell
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	tr, err := Build(buildCases()[2].cell)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := Validate(tr); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	tr, err := Build(buildCases()[2].cell)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(tr); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpstreamSchema(b *testing.B) {
	tr, err := Build(buildCases()[2].cell)
	if err != nil {
		b.Fatal(err)
	}
	data, _ := Marshal(tr)
	upstreamSchema(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := schemaCheck(b, data); err != nil {
			b.Fatal(err)
		}
	}
}
