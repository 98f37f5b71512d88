// Package xsdcheck validates an XML document against an XML Schema with
// libxml2, the validator behind xmllint, so tests can check that what
// bench writes is what CI systems' schemas accept. It needs libxml2's
// headers (Debian: libxml2-dev) and cgo.
package xsdcheck

/*
#cgo pkg-config: libxml-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlschemas.h>

typedef struct {
	char msg[8192];
	size_t n;
	int count;
} errbuf;

static void collect(void *ctx, xmlErrorPtr err) {
	errbuf *b = (errbuf *)ctx;
	b->count++;
	if (err == NULL || err->message == NULL || b->n + 512 > sizeof(b->msg)) {
		return;
	}
	int w = snprintf(b->msg + b->n, sizeof(b->msg) - b->n, "line %d: %s", err->line, err->message);
	if (w > 0) {
		b->n += (size_t)w;
		if (b->n >= sizeof(b->msg)) {
			b->n = sizeof(b->msg) - 1;
		}
	}
}

// validate returns 0 when doc is valid, >0 for a document the schema
// rejects, -1 for a schema that does not parse, -2 for a document that is
// not well-formed XML.
static int validate(const char *xsd, int xsdLen, const char *doc, int docLen, errbuf *b) {
	xmlSetStructuredErrorFunc(b, (xmlStructuredErrorFunc)collect);
	xmlSchemaParserCtxtPtr pctx = xmlSchemaNewMemParserCtxt(xsd, xsdLen);
	if (pctx == NULL) {
		return -1;
	}
	xmlSchemaSetParserStructuredErrors(pctx, (xmlStructuredErrorFunc)collect, b);
	xmlSchemaPtr schema = xmlSchemaParse(pctx);
	xmlSchemaFreeParserCtxt(pctx);
	if (schema == NULL) {
		return -1;
	}
	xmlDocPtr d = xmlReadMemory(doc, docLen, "document.xml", NULL, XML_PARSE_NONET);
	if (d == NULL) {
		xmlSchemaFree(schema);
		return -2;
	}
	xmlSchemaValidCtxtPtr vctx = xmlSchemaNewValidCtxt(schema);
	xmlSchemaSetValidStructuredErrors(vctx, (xmlStructuredErrorFunc)collect, b);
	int rc = xmlSchemaValidateDoc(vctx, d);
	xmlSchemaFreeValidCtxt(vctx);
	xmlFreeDoc(d);
	xmlSchemaFree(schema);
	xmlSetStructuredErrorFunc(NULL, NULL);
	return rc;
}
*/
import "C"

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// junitSchema is the Jenkins xUnit plugin's JUnit schema (MIT; see
// README.md beside it).
//
//go:embed junit-10.xsd
var junitSchema []byte

// JUnit validates a JUnit XML report against the Jenkins xUnit plugin's
// schema, the strictest of the readers CI systems use.
func JUnit(doc []byte) error { return Validate(junitSchema, doc) }

// libxml2's error handler is process-wide: one validation at a time.
var mu sync.Mutex

// Validate reports nil when doc is valid against the schema xsd, else an
// error with libxml2's messages (each with its line).
func Validate(xsd, doc []byte) error {
	if len(xsd) == 0 || len(doc) == 0 {
		return fmt.Errorf("xsdcheck: empty schema or document")
	}
	mu.Lock()
	defer mu.Unlock()
	cx := C.CBytes(xsd)
	defer C.free(cx)
	cd := C.CBytes(doc)
	defer C.free(cd)
	b := (*C.errbuf)(C.calloc(1, C.sizeof_errbuf))
	defer C.free(unsafe.Pointer(b))
	rc := C.validate((*C.char)(cx), C.int(len(xsd)), (*C.char)(cd), C.int(len(doc)), b)
	msg := strings.TrimSpace(C.GoStringN(&b.msg[0], C.int(b.n)))
	switch {
	case rc == 0:
		return nil
	case rc == -1:
		return fmt.Errorf("xsdcheck: the schema does not parse: %s", msg)
	case rc == -2:
		return fmt.Errorf("xsdcheck: the document is not well-formed XML: %s", msg)
	}
	return fmt.Errorf("xsdcheck: %d schema violations: %s", int(b.count), msg)
}
