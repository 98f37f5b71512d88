package results

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// fastDecoder decodes the results.jsonl lines results.Writer writes about
// five times faster than encoding/json, which scans every line twice (once
// to validate, once to decode) and goes through reflection for every field.
// It is a fast path, not a second JSON parser to trust: it says false for
// anything it is not sure encoding/json would decode the same way (an
// escape in a key, keys out of the writer's order or repeated, a value of
// another type or a number the field cannot hold, bad JSON), and the caller
// then decodes the line with encoding/json, which gives the record or the
// error the report prints. FuzzFastDecode holds the two to the same result.
//
// No library fits: faster JSON libraries (go-json, sonic, jsoniter, json/v2)
// each differ from encoding/json in some corner (case-insensitive keys,
// duplicate keys, invalid UTF-8, null into a value), and the report must
// stay byte-identical whichever decoder read a line.
type fastDecoder struct {
	b []byte
	i int
	// intern holds the strings most lines repeat (provider, model, prompt
	// id, status...), so a million lines do not allocate a million copies;
	// last is each field's last one, which the next line mostly repeats.
	intern map[string]string
	last   [nSlots]string
	// rep says the line's repetition was there and not null; schema is
	// its schema_version's JSON text, nil when it had none: what a strict
	// read checks (see ScanOptions.Strict), which Record cannot say.
	rep    bool
	schema []byte
	// borrow says the bulky texts (slot bulky, and call arguments) are
	// not copied: a plain one is the line's own bytes, an escaped one is
	// unquoted into arena (see ScanOptions.Borrow).
	borrow bool
	arena  []byte
	// text is where a string that is not plain is unquoted before it is
	// copied.
	text []byte
	// own's scratch is where arrays are built (then allocated once at
	// their length, or copied into lent); lent, when the decoder borrows,
	// is the batch's pools, which hold what the records point to.
	own  pools
	lent *pools
}

// Interning slots: the fields whose values repeat from line to line. noIntern
// copies the string; bulky (the answer, the reasoning, a turn's texts, a
// call's result) copies it too unless the decoder borrows.
const (
	noIntern = iota
	bulky
	slotRecordType
	slotRunID
	slotProvider
	slotProviderType
	slotModel
	slotThinking
	slotPromptID
	slotPromptName
	slotStatus
	slotFailure
	slotFinish
	slotToolName
	slotSource
	slotEvent
	slotDetail
	slotCategory
	slotCost
	slotStage
	slotVerdict
	slotJudge
	slotSpec
	slotCheck
	nSlots
)

const (
	// maxInterned bounds a decoder's interned strings.
	maxInterned = 4096
	// maxSkipDepth bounds nesting in skipped values; deeper ones go to
	// encoding/json (which allows 10,000).
	maxSkipDepth = 256
)

func newFastDecoder() *fastDecoder { return &fastDecoder{intern: map[string]string{}} }

// fieldDec decodes the value at d into its field of r.
type fieldDec func(d *fastDecoder, r *Record) bool

type fieldSpec struct {
	name string
	// quoted is the key as the writer writes it, "name", for matching the
	// expected key without scanning it.
	quoted []byte
	dec    fieldDec
	// skip says which Details read the field past.
	skip [nDetails]bool
}

var (
	// recordFields are Record's JSON fields in the order the writer writes
	// them (the struct's order).
	recordFields []fieldSpec
	// recordFold and timelineFold are the JSON names lower-cased:
	// encoding/json matches keys case-insensitively, so a key that folds to
	// a name is left to it.
	recordFold   map[string]bool
	timelineFold = foldOf[TimelineEvent]()
	toolCallFold = foldOf[ToolCall]()
)

// hotFields decode the fields without reflection. A field not here (one
// added later, provider_metrics) is decoded by encoding/json from its
// value alone, which gives the same result, only slower.
var hotFields = map[string]fieldDec{
	"record_type":          func(d *fastDecoder, r *Record) bool { return d.str(&r.RecordType, slotRecordType) },
	"run_id":               func(d *fastDecoder, r *Record) bool { return d.str(&r.RunID, slotRunID) },
	"provider":             func(d *fastDecoder, r *Record) bool { return d.str(&r.Provider, slotProvider) },
	"provider_type":        func(d *fastDecoder, r *Record) bool { return d.str(&r.ProviderType, slotProviderType) },
	"model":                func(d *fastDecoder, r *Record) bool { return d.str(&r.Model, slotModel) },
	"thinking_level":       func(d *fastDecoder, r *Record) bool { return d.strPtr(&r.ThinkingLevel, slotThinking) },
	"prompt_id":            func(d *fastDecoder, r *Record) bool { return d.str(&r.PromptID, slotPromptID) },
	"prompt_name":          func(d *fastDecoder, r *Record) bool { return d.str(&r.PromptName, slotPromptName) },
	"repetition":           (*fastDecoder).repetition,
	"availability_status":  func(d *fastDecoder, r *Record) bool { return d.str(&r.AvailabilityStatus, slotStatus) },
	"started_at_ms":        func(d *fastDecoder, r *Record) bool { return d.int64(&r.StartedAtMS) },
	"ended_at_ms":          func(d *fastDecoder, r *Record) bool { return d.int64(&r.EndedAtMS) },
	"e2e_ms":               func(d *fastDecoder, r *Record) bool { return d.int64(&r.E2EMS) },
	"ttft_ms":              func(d *fastDecoder, r *Record) bool { return d.int64Ptr(&r.TTFTMS) },
	"success":              func(d *fastDecoder, r *Record) bool { return d.bool(&r.Success) },
	"failure_type":         func(d *fastDecoder, r *Record) bool { return d.strPtr(&r.FailureType, slotFailure) },
	"objective_pass":       func(d *fastDecoder, r *Record) bool { return d.boolPtr(&r.ObjectivePass) },
	"violation":            func(d *fastDecoder, r *Record) bool { return d.strPtr(&r.Violation, noIntern) },
	"input_tokens":         func(d *fastDecoder, r *Record) bool { return d.intPtr(&r.InputTokens) },
	"output_tokens":        func(d *fastDecoder, r *Record) bool { return d.intPtr(&r.OutputTokens) },
	"raw_output":           func(d *fastDecoder, r *Record) bool { return d.str(&r.RawOutput, bulky) },
	"parsed_output":        func(d *fastDecoder, r *Record) bool { return d.rawMessage(&r.ParsedOutput) },
	"tool_calls":           func(d *fastDecoder, r *Record) bool { return d.strs(&r.ToolCalls) },
	"tool_call_count":      func(d *fastDecoder, r *Record) bool { return d.int(&r.ToolCallCount) },
	"tool_use_success":     func(d *fastDecoder, r *Record) bool { return d.boolPtr(&r.ToolUseSuccess) },
	"error_message":        func(d *fastDecoder, r *Record) bool { return d.strPtr(&r.ErrorMessage, noIntern) },
	"http_status":          func(d *fastDecoder, r *Record) bool { return d.intPtr(&r.HTTPStatus) },
	"ttfo_ms":              func(d *fastDecoder, r *Record) bool { return d.int64Ptr(&r.TTFOMS) },
	"ttfr_ms":              func(d *fastDecoder, r *Record) bool { return d.int64Ptr(&r.TTFRMS) },
	"tokens_per_s":         func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.TokensPerS) },
	"reasoning_tokens":     func(d *fastDecoder, r *Record) bool { return d.intPtr(&r.ReasoningTokens) },
	"raw_output_bytes":     func(d *fastDecoder, r *Record) bool { return d.int(&r.RawOutputBytes) },
	"raw_output_truncated": func(d *fastDecoder, r *Record) bool { return d.bool(&r.RawOutputTruncated) },
	"raw_output_redacted":  func(d *fastDecoder, r *Record) bool { return d.bool(&r.RawOutputRedacted) },
	"reasoning":            func(d *fastDecoder, r *Record) bool { return d.str(&r.Reasoning, bulky) },
	"finish_reason":        func(d *fastDecoder, r *Record) bool { return d.str(&r.FinishReason, slotFinish) },
	"chunks":               func(d *fastDecoder, r *Record) bool { return d.int(&r.Chunks) },
	"retries":              func(d *fastDecoder, r *Record) bool { return d.int(&r.Retries) },
	"retry_wait_ms":        func(d *fastDecoder, r *Record) bool { return d.int64(&r.RetryWaitMS) },
	"expected_tools":       func(d *fastDecoder, r *Record) bool { return d.strs(&r.ExpectedTools) },
	"timeline":             func(d *fastDecoder, r *Record) bool { return d.timeline(&r.Timeline) },
	"tool_call_details":    func(d *fastDecoder, r *Record) bool { return d.toolCalls(&r.ToolCallDetails) },
	"turns":                func(d *fastDecoder, r *Record) bool { return d.int(&r.Turns) },
	"category":             func(d *fastDecoder, r *Record) bool { return d.str(&r.Category, slotCategory) },
	"unsafe_actions":       func(d *fastDecoder, r *Record) bool { return d.strs(&r.UnsafeActions) },
	"schema_checked_calls": func(d *fastDecoder, r *Record) bool { return d.int(&r.SchemaCheckedCalls) },
	"schema_invalid_calls": func(d *fastDecoder, r *Record) bool { return d.int(&r.SchemaInvalidCalls) },

	"reasoning_tokens_per_s": func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.ReasoningTokensPerS) },
	"cached_input_tokens":    func(d *fastDecoder, r *Record) bool { return d.intPtr(&r.CachedInputTokens) },
	"cost_usd":               func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.CostUSD) },
	"cost_source":            func(d *fastDecoder, r *Record) bool { return d.str(&r.CostSource, slotCost) },
	"cost_missing":           func(d *fastDecoder, r *Record) bool { return d.str(&r.CostMissing, slotCost) },
	"queue_ms":               func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.QueueMS) },
	"limit_wait_ms":          func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.LimitWaitMS) },
	"concurrency_limit":      func(d *fastDecoder, r *Record) bool { return d.intPtr(&r.ConcurrencyLimit) },
	"rate_limit_refusals":    func(d *fastDecoder, r *Record) bool { return d.int(&r.RateLimitRefusals) },
	"cold_start":             func(d *fastDecoder, r *Record) bool { return d.bool(&r.ColdStart) },
	"load_ms":                func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.LoadMS) },
	"started_at_us":          func(d *fastDecoder, r *Record) bool { return d.int64(&r.StartedAtUS) },
	"turn_details":           func(d *fastDecoder, r *Record) bool { return array(d, &r.TurnDetails, pickTurns, d.turn) },
	"judge":                  func(d *fastDecoder, r *Record) bool { return d.judge(&r.Judge) },
	"check_errors":           func(d *fastDecoder, r *Record) bool { return array(d, &r.CheckErrors, pickChecks, d.checkError) },
	"external_checks":        func(d *fastDecoder, r *Record) bool { return d.int(&r.ExternalChecks) },
	"injection":              func(d *fastDecoder, r *Record) bool { return d.injection(&r.Injection) },
	"injection_followed":     func(d *fastDecoder, r *Record) bool { return d.boolPtr(&r.InjectionFollowed) },
	"utility":                func(d *fastDecoder, r *Record) bool { return d.boolPtr(&r.Utility) },
	"itl_ms":                 func(d *fastDecoder, r *Record) bool { return d.itl(&r.ITLMS) },
	"tpot_ms":                func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.TPOTMS) },
	"prefill_tokens_per_s":   func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.PrefillTokensPerS) },
	"stage":                  func(d *fastDecoder, r *Record) bool { return d.str(&r.Stage, slotStage) },
	"stage_mode":             func(d *fastDecoder, r *Record) bool { return d.str(&r.StageMode, slotStage) },
	"stage_level":            func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.StageLevel) },
	"stage_start_us":         func(d *fastDecoder, r *Record) bool { return d.int64(&r.StageStartUS) },
	"ended_at_us":            func(d *fastDecoder, r *Record) bool { return d.int64(&r.EndedAtUS) },
	"scheduled_at_ms":        func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.ScheduledAtMS) },
	"sent_at_ms":             func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.SentAtMS) },
	"schedule_slip_ms":       func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.ScheduleSlipMS) },
	"slot_wait_ms":           func(d *fastDecoder, r *Record) bool { return d.float64Ptr(&r.SlotWaitMS) },
}

func init() {
	t := reflect.TypeFor[Record]()
	recordFold = map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		dec := hotFields[name]
		if dec == nil {
			dec = reflected(i)
		}
		spec := fieldSpec{name: name, quoted: []byte(`"` + name + `"`), dec: dec}
		for d := range nDetails {
			spec.skip[d] = skipped[d][name]
		}
		recordFields = append(recordFields, spec)
		recordFold[strings.ToLower(name)] = true
	}
}

// reflected decodes field i with encoding/json from the value's bytes.
func reflected(i int) fieldDec {
	return func(d *fastDecoder, r *Record) bool {
		v, ok := d.skip()
		return ok && json.Unmarshal(v, reflect.ValueOf(r).Elem().Field(i).Addr().Interface()) == nil
	}
}

// decode fills rec, which the caller has zeroed, from the JSON object data
// as json.Unmarshal would into detail's target (see target), and says so;
// false means "ask encoding/json", with rec in any state.
func (d *fastDecoder) decode(data []byte, rec *Record, detail Detail) bool {
	d.b, d.i = data, 0
	d.rep, d.schema = false, nil
	d.ws()
	if !d.eat('{') {
		return false
	}
	d.ws()
	if d.eat('}') {
		return d.end()
	}
	next := 0
	for {
		// The writer's keys come in field order, some left out: look for
		// the next ones first, as they are written.
		k, rest := next, d.b[d.i:]
		for k < len(recordFields) && !bytes.HasPrefix(rest, recordFields[k].quoted) {
			k++
		}
		var key []byte
		if k < len(recordFields) {
			d.i += len(recordFields[k].quoted)
		} else {
			var ok bool
			if key, ok = d.key(); !ok {
				return false
			}
		}
		d.ws()
		if !d.eat(':') {
			return false
		}
		d.ws()
		switch {
		case k < len(recordFields):
			next = k + 1
			if f := &recordFields[k]; f.skip[detail] {
				if _, ok := d.skip(); !ok {
					return false
				}
			} else if !f.dec(d, rec) {
				return false
			}
		case recordFold[strings.ToLower(string(key))]:
			return false // repeated, out of order, or in other case
		default:
			v, ok := d.skip()
			if !ok {
				return false
			}
			if strings.EqualFold(string(key), schemaVersionKey) {
				if string(key) != schemaVersionKey {
					return false // encoding/json would match it: let it
				}
				d.schema = v
			}
		}
		d.ws()
		if d.eat(',') {
			d.ws()
			continue
		}
		return d.eat('}') && d.end()
	}
}

func (d *fastDecoder) ws() {
	if d.i < len(d.b) && d.b[d.i] > ' ' {
		return // the writer writes no whitespace
	}
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDecoder) eat(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// end says whether only whitespace is left.
func (d *fastDecoder) end() bool {
	d.ws()
	return d.i == len(d.b)
}

// key reads an object key made of plain ASCII (no escapes).
func (d *fastDecoder) key() ([]byte, bool) {
	if !d.eat('"') {
		return nil, false
	}
	start := d.i
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			return d.b[start : d.i-1], true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// lit reads the literal s (true, false, null).
func (d *fastDecoder) lit(s string) bool {
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

func (d *fastDecoder) null() bool {
	return d.i < len(d.b) && d.b[d.i] == 'n' && d.lit("null")
}

// str decodes a string; null leaves dst as it is (as encoding/json does).
func (d *fastDecoder) str(dst *string, slot int) bool {
	if d.null() {
		return true
	}
	s, ok := d.string(slot)
	if ok {
		*dst = s
	}
	return ok
}

func (d *fastDecoder) strPtr(dst **string, slot int) bool {
	if d.null() {
		*dst = nil
		return true
	}
	s, ok := d.string(slot)
	if ok {
		*dst = ptr(d, func(p *pools) *pool[string] { return &p.strings }, s)
	}
	return ok
}

// string reads a JSON string. Plain ones (no escapes, valid UTF-8) are
// copied, or interned in slot; any other is unquoted as encoding/json
// would. A bulky one the decoder borrows is not copied: its own bytes
// when plain, else unquoted into the arena.
func (d *fastDecoder) string(slot int) (string, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	k := plainEnd(d.b, start)
	if k < len(d.b) && d.b[k] == '"' {
		raw := d.b[start:k]
		d.i = k + 1
		switch {
		case slot == bulky && d.borrow:
			return unsafe.String(unsafe.SliceData(raw), len(raw)), true
		case slot == noIntern || slot == bulky:
			return string(raw), true
		case d.last[slot] == string(raw):
			return d.last[slot], true
		}
		s, ok := d.intern[string(raw)]
		if !ok {
			s = string(raw)
			if len(d.intern) < maxInterned {
				d.intern[s] = s
			}
		}
		d.last[slot] = s
		return s, true
	}
	if slot == bulky && d.borrow {
		at := len(d.arena)
		arena, end, ok := appendUnquoted(append(d.arena, d.b[start:k]...), d.b, k)
		d.arena, d.i = arena, end
		return unsafe.String(unsafe.SliceData(arena[at:]), len(arena)-at), ok
	}
	text, end, ok := appendUnquoted(append(d.text[:0], d.b[start:k]...), d.b, k)
	d.text, d.i = text, end
	return string(text), ok
}

// number reads a JSON number and says whether it is written as an integer.
func (d *fastDecoder) number() (tok []byte, integer, ok bool) {
	b, i := d.b, d.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return nil, false, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return nil, false, false
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		integer = false
		if i++; i >= len(b) || b[i] < '0' || b[i] > '9' {
			return nil, false, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return nil, false, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	tok, d.i = b[d.i:i], i
	return tok, integer, true
}

// parseInt reads a number written as an integer that fits an int64.
func (d *fastDecoder) parseInt() (int64, bool) {
	// The common number in one pass: under 18 digits, no leading zero,
	// neither a fraction nor an exponent after them.
	b, i := d.b, d.i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	start := i
	var u uint64
	for i < len(b) && i-start < 18 {
		c := b[i] - '0'
		if c > 9 {
			break
		}
		u = u*10 + uint64(c)
		i++
	}
	if n := i - start; n > 0 && n < 18 && (b[start] != '0' || n == 1) && (i == len(b) || (b[i] != '.' && b[i] != 'e' && b[i] != 'E')) {
		d.i = i
		if neg {
			return -int64(u), true
		}
		return int64(u), true
	}
	return d.parseIntToken()
}

// parseIntToken is parseInt from the number's token, for any number.
func (d *fastDecoder) parseIntToken() (int64, bool) {
	tok, integer, ok := d.number()
	if !ok || !integer {
		return 0, false
	}
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	if len(tok) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range tok {
		u = u*10 + uint64(c-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return -int64(u), true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}

func (d *fastDecoder) int64(dst *int64) bool {
	if d.null() {
		return true
	}
	v, ok := d.parseInt()
	if ok {
		*dst = v
	}
	return ok
}

func (d *fastDecoder) int(dst *int) bool {
	if d.null() {
		return true
	}
	v, ok := d.parseInt()
	if !ok || int64(int(v)) != v {
		return false
	}
	*dst = int(v)
	return true
}

// repetition decodes the cell's repetition and notes that the line had one.
func (d *fastDecoder) repetition(r *Record) bool {
	if d.null() {
		return true
	}
	d.rep = true
	return d.int(&r.Repetition)
}

func (d *fastDecoder) int64Ptr(dst **int64) bool {
	if d.null() {
		*dst = nil
		return true
	}
	v, ok := d.parseInt()
	if ok {
		*dst = ptr(d, func(p *pools) *pool[int64] { return &p.int64s }, v)
	}
	return ok
}

func (d *fastDecoder) intPtr(dst **int) bool {
	if d.null() {
		*dst = nil
		return true
	}
	v, ok := d.parseInt()
	if !ok || int64(int(v)) != v {
		return false
	}
	*dst = ptr(d, func(p *pools) *pool[int] { return &p.ints }, int(v))
	return true
}

func (d *fastDecoder) parseFloat() (float64, bool) {
	tok, _, ok := d.number()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(tok), 64)
	return v, err == nil
}

func (d *fastDecoder) float64(dst *float64) bool {
	if d.null() {
		return true
	}
	v, ok := d.parseFloat()
	if ok {
		*dst = v
	}
	return ok
}

func (d *fastDecoder) float64Ptr(dst **float64) bool {
	if d.null() {
		*dst = nil
		return true
	}
	v, ok := d.parseFloat()
	if ok {
		*dst = ptr(d, func(p *pools) *pool[float64] { return &p.floats }, v)
	}
	return ok
}

func (d *fastDecoder) parseBool() (v, ok bool) {
	switch {
	case d.lit("true"):
		return true, true
	case d.lit("false"):
		return false, true
	}
	return false, false
}

func (d *fastDecoder) bool(dst *bool) bool {
	if d.null() {
		return true
	}
	v, ok := d.parseBool()
	if ok {
		*dst = v
	}
	return ok
}

func (d *fastDecoder) boolPtr(dst **bool) bool {
	if d.null() {
		*dst = nil
		return true
	}
	v, ok := d.parseBool()
	if ok {
		*dst = ptr(d, func(p *pools) *pool[bool] { return &p.bools }, v)
	}
	return ok
}

// rawMessage keeps the value's bytes as they are, as json.RawMessage does
// (null included).
func (d *fastDecoder) rawMessage(dst *json.RawMessage) bool {
	v, ok := d.skip()
	if ok {
		*dst = append(json.RawMessage(nil), v...)
	}
	return ok
}

// bulkyMessage is rawMessage for a call's arguments: the line's own bytes
// when the decoder borrows.
func (d *fastDecoder) bulkyMessage(dst *json.RawMessage) bool {
	if !d.borrow {
		return d.rawMessage(dst)
	}
	v, ok := d.skip()
	if ok {
		*dst = v[:len(v):len(v)]
	}
	return ok
}

// array decodes a JSON array into *dst as encoding/json does: null is nil,
// [] is empty but not nil, a null element is T's zero value; elem decodes
// one element that is not null. The elements are built in the pool pick
// gives of the decoder's own, then allocated at their number (one
// allocation, not one per doubling), or copied into the lent pool.
func array[T any](d *fastDecoder, dst *[]T, pick func(*pools) *pool[T], elem func(*T) bool) bool {
	if d.null() {
		*dst = nil
		return true
	}
	if !d.eat('[') {
		return false
	}
	scratch := &pick(&d.own).scratch
	out := (*scratch)[:0]
	d.ws()
	if !d.eat(']') {
		for {
			var v T
			if !d.null() && !elem(&v) {
				return false
			}
			out = append(out, v)
			d.ws()
			if d.eat(',') {
				d.ws()
				continue
			}
			if !d.eat(']') {
				return false
			}
			break
		}
	}
	*scratch = out
	if d.lent != nil {
		*dst = pick(d.lent).copyOf(out)
	} else {
		*dst = append(make([]T, 0, len(out)), out...)
	}
	return true
}

// strs decodes an array of strings.
func (d *fastDecoder) strs(dst *[]string) bool {
	return array(d, dst, func(p *pools) *pool[string] { return &p.strings }, func(s *string) bool {
		var ok bool
		*s, ok = d.string(slotToolName)
		return ok
	})
}

// timeline decodes the cell's timeline events.
func (d *fastDecoder) timeline(dst *[]TimelineEvent) bool {
	return array(d, dst, func(p *pools) *pool[TimelineEvent] { return &p.events }, d.event)
}

// toolCalls decodes tool_call_details as timeline does the timeline: most
// lines of a tool prompt have one, and encoding/json took longer over it
// than the fast decoder over all the rest of the line.
func (d *fastDecoder) toolCalls(dst *[]ToolCall) bool {
	return array(d, dst, func(p *pools) *pool[ToolCall] { return &p.calls }, d.toolCall)
}

// toolCall decodes one call; a repeated key wins, as with encoding/json.
func (d *fastDecoder) toolCall(c *ToolCall) bool {
	return d.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "name":
			ok = d.str(&c.Name, slotToolName)
		case "arguments":
			ok = d.bulkyMessage(&c.Arguments)
		case "source":
			ok = d.str(&c.Source, slotSource)
		case "match":
			ok = d.str(&c.Match, noIntern)
		case "id":
			ok = d.str(&c.ID, noIntern)
		case "schema_valid":
			ok = d.boolPtr(&c.SchemaValid)
		case "schema_error":
			ok = d.str(&c.SchemaError, noIntern)
		case "unsafe":
			ok = d.bool(&c.Unsafe)
		default:
			if toolCallFold[strings.ToLower(string(key))] {
				return false
			}
			_, ok = d.skip()
		}
		return ok
	})
}

// event decodes one timeline event; its fields are plain values, so a
// repeated key simply wins, as with encoding/json.
func (d *fastDecoder) event(ev *TimelineEvent) bool {
	return d.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "event":
			ok = d.str(&ev.Event, slotEvent)
		case "at_ms":
			ok = d.float64(&ev.AtMS)
		case "attempt":
			ok = d.int(&ev.Attempt)
		case "call":
			ok = d.int(&ev.Call)
		case "wait_ms":
			ok = d.float64(&ev.WaitMS)
		case "detail":
			ok = d.str(&ev.Detail, slotDetail)
		default:
			if timelineFold[strings.ToLower(string(key))] {
				return false
			}
			_, ok = d.skip()
		}
		return ok
	})
}

// object decodes a JSON object, field decoding each member's value after
// its key (and the colon) is read.
func (d *fastDecoder) object(field func(key []byte) bool) bool {
	if !d.eat('{') {
		return false
	}
	d.ws()
	if d.eat('}') {
		return true
	}
	for {
		key, ok := d.key()
		if !ok {
			return false
		}
		d.ws()
		if !d.eat(':') {
			return false
		}
		d.ws()
		if !field(key) {
			return false
		}
		d.ws()
		if d.eat(',') {
			d.ws()
			continue
		}
		return d.eat('}')
	}
}

// skip reads past one JSON value, checking it, and returns its bytes.
func (d *fastDecoder) skip() ([]byte, bool) {
	start := d.i
	if !d.skipValue(0) {
		return nil, false
	}
	return d.b[start:d.i], true
}

func (d *fastDecoder) skipValue(depth int) bool {
	if d.i >= len(d.b) {
		return false
	}
	switch d.b[d.i] {
	case '"':
		end, ok := skipString(d.b, d.i)
		d.i = end
		return ok
	case '{':
		if depth >= maxSkipDepth {
			return false
		}
		d.i++
		d.ws()
		if d.eat('}') {
			return true
		}
		for {
			if d.i >= len(d.b) || d.b[d.i] != '"' {
				return false
			}
			end, ok := skipString(d.b, d.i)
			if !ok {
				return false
			}
			d.i = end
			d.ws()
			if !d.eat(':') {
				return false
			}
			d.ws()
			if !d.skipValue(depth + 1) {
				return false
			}
			d.ws()
			if d.eat(',') {
				d.ws()
				continue
			}
			return d.eat('}')
		}
	case '[':
		if depth >= maxSkipDepth {
			return false
		}
		d.i++
		d.ws()
		if d.eat(']') {
			return true
		}
		for {
			if !d.skipValue(depth + 1) {
				return false
			}
			d.ws()
			if d.eat(',') {
				d.ws()
				continue
			}
			return d.eat(']')
		}
	case 't':
		return d.lit("true")
	case 'f':
		return d.lit("false")
	case 'n':
		return d.lit("null")
	}
	_, _, ok := d.number()
	return ok
}
