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
