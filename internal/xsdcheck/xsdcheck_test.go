package xsdcheck

import (
	"strings"
	"testing"
)

const schema = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:element name="a">
    <xs:complexType>
      <xs:sequence><xs:element name="b" type="xs:int" maxOccurs="unbounded"/></xs:sequence>
      <xs:attribute name="name" type="xs:string" use="required"/>
    </xs:complexType>
  </xs:element>
</xs:schema>`

func TestValidate(t *testing.T) {
	if err := Validate([]byte(schema), []byte(`<a name="x"><b>1</b><b>2</b></a>`)); err != nil {
		t.Errorf("valid document: %v", err)
	}
	for _, c := range []struct{ doc, want string }{
		{`<a><b>1</b></a>`, "'name' is required"},
		{"<a name=\"x\">\n<b>one</b></a>", "line 2"},
		{`<a name="x"><c/></a>`, "This element is not expected"},
		{`<a name="x"><b>1</b>`, "not well-formed"},
	} {
		err := Validate([]byte(schema), []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.doc, err, c.want)
		}
	}
	if err := Validate([]byte("<xs:schema"), []byte("<a/>")); err == nil || !strings.Contains(err.Error(), "schema does not parse") {
		t.Errorf("bad schema: %v", err)
	}
}

func TestJUnitSchema(t *testing.T) {
	ok := `<?xml version="1.0"?><testsuites name="x" tests="1" failures="1" errors="0"><testsuite name="g" tests="1" failures="1" errors="0" time="0.000" skipped="0"><testcase name="c" classname="g" time="0.000"><failure message="m" type="quality"><![CDATA[d]]></failure></testcase></testsuite></testsuites>`
	if err := JUnit([]byte(ok)); err != nil {
		t.Errorf("valid report: %v", err)
	}
	// The Jenkins schema has no skipped attribute on testsuites, and a
	// testsuite needs its counts.
	for _, bad := range []string{
		`<testsuites skipped="1"><testsuite name="g" tests="0" failures="0" errors="0"/></testsuites>`,
		`<testsuites><testsuite name="g"/></testsuites>`,
		`<testsuites><testsuite name="g" tests="1" failures="0" errors="0" time="1s"/></testsuites>`,
	} {
		if err := JUnit([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
