package compare

import (
	"os"
	"path/filepath"
	"testing"

	"bench/internal/testpeer/junitschema"
)

// validJUnit checks an XML document against the Jenkins JUnit schema
// (internal/testpeer/junitschema). Without xmllint the test is skipped, or fails
// when BENCH_REQUIRE_SERVERS=1 (CI).
func validJUnit(t *testing.T, doc []byte) error {
	t.Helper()
	if junitschema.Xmllint(t) == "" {
		t.Skip("no xmllint: run scripts/install-xmllint.sh")
	}
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := junitschema.Check(t, path); err != nil {
		return &schemaError{out: err.Error()}
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
