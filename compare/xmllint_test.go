package compare

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// junitSchema is the Jenkins xUnit plugin's JUnit schema (MIT; see
// testdata/junit/README.md).
const junitSchema = "testdata/junit/junit-10.xsd"

// xmllint finds the schema validator: BENCH_XMLLINT_BIN, else xmllint on
// PATH (Debian's libxml2-utils). Missing, the test is skipped, or fails
// when BENCH_REQUIRE_SERVERS=1 (CI).
func xmllint(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BENCH_XMLLINT_BIN"); p != "" {
		return p
	}
	p, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("BENCH_REQUIRE_SERVERS") == "1" {
			t.Fatal("no xmllint (BENCH_REQUIRE_SERVERS=1): apt-get install libxml2-utils")
		}
		t.Skip("no xmllint: apt-get install libxml2-utils")
	}
	return p
}

// validJUnit checks an XML document against the Jenkins JUnit schema.
func validJUnit(t *testing.T, doc []byte) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(xmllint(t), "--noout", "--schema", junitSchema, path).CombinedOutput()
	if err != nil {
		return &schemaError{out: string(out)}
	}
	return nil
}

type schemaError struct{ out string }

func (e *schemaError) Error() string { return "not valid against the JUnit schema:\n" + e.out }

// The schema check can fail: a testsuites skipped count and a testsuite
// without its counts are refused.
func TestSchemaCheckCanFail(t *testing.T) {
	ok := `<testsuites name="x" tests="1" failures="1" errors="0"><testsuite name="g" tests="1" failures="1" errors="0" time="0.000" skipped="0"><testcase name="c" classname="g" time="0.000"><failure message="m" type="quality"><![CDATA[d]]></failure></testcase></testsuite></testsuites>`
	if err := validJUnit(t, []byte(ok)); err != nil {
		t.Errorf("a valid report: %v", err)
	}
	for _, bad := range []string{
		`<testsuites skipped="1"><testsuite name="g" tests="0" failures="0" errors="0"/></testsuites>`,
		`<testsuites><testsuite name="g"/></testsuites>`,
		`<testsuites><testsuite name="g" tests="1" failures="0" errors="0" time="1s"/></testsuites>`,
	} {
		if validJUnit(t, []byte(bad)) == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
