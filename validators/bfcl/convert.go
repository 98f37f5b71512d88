package bfcl

import (
	"encoding/json"

	"bench/validators/scripted"
)

// gorillaToOpenAPI is BFCL's GORILLA_TO_OPENAPI (constants/type_mappings.py),
// the mapping every FC handler of BFCL passes to convert_to_tool.
var gorillaToOpenAPI = map[string]string{
	"integer": "integer", "number": "number", "float": "number", "string": "string",
	"boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
	"dict": "object", "object": "object", "tuple": "array", "any": "string",
	"byte": "integer", "short": "integer", "long": "integer", "double": "number",
	"char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object",
	"Hashtable": "object", "Queue": "array", "Stack": "array", "Any": "string",
	"String": "string", "Bigint": "integer",
}

// pythonHint is what load_dataset_entry appends to a Python case's function
// descriptions (_get_language_specific_hint).
const pythonHint = " Note that the provided function is in Python 3 syntax."

// Tool is a function offered as BFCL's FC handlers offer it: the name with
// "." made "_", the description with the Python hint, and the parameters
// converted by convert_to_tool with GORILLA_TO_OPENAPI: type "object",
// each property's BFCL type mapped to JSON Schema (float → number with
// format float and " This is a float type value." in its description,
// tuple → array, dict → object, any and unknown types → string), into
// nested properties and items as far as _cast_to_openai_type goes.
func (f *Function) Tool() scripted.Tool {
	params := clone(f.raw["parameters"]).(map[string]any)
	params["type"] = "object"
	if props, ok := params["properties"].(map[string]any); ok {
		params["properties"] = castToOpenAI(props)
	}
	return scripted.Tool{Name: ToolName(f.Name), Description: f.Description + pythonHint, Parameters: params}
}

// castToOpenAI is _cast_to_openai_type with GORILLA_TO_OPENAPI.
func castToOpenAI(props map[string]any) map[string]any {
	for _, key := range sortedKeys(props) {
		p, ok := props[key].(map[string]any)
		if !ok {
			continue
		}
		typ, has := p["type"].(string)
		switch {
		case !has:
			p["type"] = "string"
		default:
			if typ == "float" {
				p["format"] = "float"
				desc, _ := p["description"].(string)
				p["description"] = desc + " This is a float type value."
			}
			if m, ok := gorillaToOpenAPI[typ]; ok {
				p["type"] = m
			} else {
				p["type"] = "string"
			}
		}
		if t := p["type"]; t == "array" || t == "object" {
			if inner, ok := p["properties"].(map[string]any); ok {
				p["properties"] = castToOpenAI(inner)
			} else if items, ok := p["items"].(map[string]any); ok {
				it, _ := items["type"].(string)
				items["type"] = mapType(it)
				if items["type"] == "array" {
					if ii, ok := items["items"].(map[string]any); ok {
						iit, _ := ii["type"].(string)
						ii["type"] = mapType(iit)
					}
				} else if items["type"] == "object" {
					if inner, ok := items["properties"].(map[string]any); ok {
						items["properties"] = castToOpenAI(inner)
					}
				}
			}
		}
	}
	return props
}

// mapType maps an item type; BFCL indexes the mapping there (a KeyError for
// an unknown type, which Load refuses before), so an unknown one stays.
func mapType(t string) string {
	if m, ok := gorillaToOpenAPI[t]; ok {
		return m
	}
	return t
}

// clone deep-copies a decoded JSON value.
func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = clone(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = clone(e)
		}
		return l
	}
	return v
}

// MarshalJSON writes a big int as its digits.
func (p pyInt) MarshalJSON() ([]byte, error) { return []byte(p.String()), nil }

var _ json.Marshaler = pyInt{}

// Tools are the case's functions as offered.
func (c *Case) Tools() []scripted.Tool {
	out := make([]scripted.Tool, len(c.Functions))
	for i := range c.Functions {
		out[i] = c.Functions[i].Tool()
	}
	return out
}
