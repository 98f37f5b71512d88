// Package junitschema checks JUnit XML against the Jenkins xUnit plugin's
// JUnit schema (junit-10.xsd, MIT; see README.md) with xmllint, for the
// tests of every package that writes junit.xml.
//
// Layer: test peers (tests only; production code never imports it).
package junitschema

import (
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

//go:embed junit-10.xsd
var xsd []byte

// Xmllint is the validator: BENCH_XMLLINT_BIN, else xmllint on PATH. When
// there is none it fails the test under BENCH_REQUIRE_SERVERS=1 (CI) and
// returns "" otherwise.
func Xmllint(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("BENCH_XMLLINT_BIN"); p != "" {
		return p
	}
	p, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("BENCH_REQUIRE_SERVERS") == "1" {
			tb.Fatal("no xmllint (BENCH_REQUIRE_SERVERS=1): run scripts/install-xmllint.sh")
		}
		return ""
	}
	return p
}

// Check validates the file at path against the schema. Without xmllint
// (and outside CI) it logs that the check was skipped and returns nil.
func Check(tb testing.TB, path string) error {
	tb.Helper()
	bin := Xmllint(tb)
	if bin == "" {
		tb.Logf("no xmllint: %s not checked against the JUnit schema", path)
		return nil
	}
	schema := filepath.Join(tb.TempDir(), "junit-10.xsd")
	if err := os.WriteFile(schema, xsd, 0o644); err != nil {
		tb.Fatal(err)
	}
	if out, err := exec.Command(bin, "--noout", "--schema", schema, path).CombinedOutput(); err != nil {
		return fmt.Errorf("%s is not valid against the JUnit schema: %v\n%s", path, err, out)
	}
	return nil
}
