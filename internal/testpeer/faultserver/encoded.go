package faultserver

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
)

// EncodedForms name the encodings echo_key_encoded:N writes the key in,
// by N. The base64 ones encode a blob the key sits in at byte offset 0,
// 1 or 2 of a 3-byte group (each alignment gives other characters), as a
// credential file or a Basic header encoded whole would hold it. They
// are written here independently of bench's own list (package secrets),
// so the matrix does not test the scrub with its own assumptions.
var EncodedForms = []string{
	"base64-std-offset0", "base64-std-offset1", "base64-std-offset2",
	"base64-url-offset0", "base64-url-offset1", "base64-url-offset2",
	"base64-rawstd-offset0", "base64-rawstd-offset1", "base64-rawstd-offset2",
	"base64-rawurl-offset0", "base64-rawurl-offset1", "base64-rawurl-offset2",
	"base64-alone", "hex", "HEX", "query-escape", "path-escape", "percent-every-byte", "PERCENT-EVERY-BYTE",
}

// Encode writes key in EncodedForms[n].
func Encode(n int, key string) string {
	form := EncodedForms[n]
	if rest, ok := strings.CutPrefix(form, "base64-"); ok && rest != "alone" {
		alpha, off, _ := strings.Cut(rest, "-offset")
		enc := map[string]*base64.Encoding{"std": base64.StdEncoding, "url": base64.URLEncoding,
			"rawstd": base64.RawStdEncoding, "rawurl": base64.RawURLEncoding}[alpha]
		// The key starts at byte 19 + pad of the blob: at alignment off.
		pad := (int(off[0]-'0') + 2) % 3
		blob := `{"type":"k` + strings.Repeat("x", pad) + `","key":"` + key + `","more":"after it"}`
		return enc.EncodeToString([]byte(blob))
	}
	switch form {
	case "base64-alone":
		return base64.StdEncoding.EncodeToString([]byte(key))
	case "hex":
		return hex.EncodeToString([]byte(key))
	case "HEX":
		return strings.ToUpper(hex.EncodeToString([]byte(key)))
	case "query-escape":
		return url.QueryEscape(key)
	case "path-escape":
		return url.PathEscape(key)
	}
	var b strings.Builder
	for _, c := range []byte(key) {
		e := hex.EncodeToString([]byte{c})
		if form == "PERCENT-EVERY-BYTE" {
			e = strings.ToUpper(e)
		}
		b.WriteString("%" + e)
	}
	return b.String()
}
