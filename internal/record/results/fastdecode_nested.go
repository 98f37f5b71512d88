package results

import (
	"reflect"
	"strings"
)

// The fast decoder's nested values: the judge and its samples, check
// errors, the inter-token histogram, an agentic cell's turns and their
// calls. encoding/json took most of a rich line's time over them by
// reflection (issue 31). Each object says false, for encoding/json to
// decide, on a key it does not know that folds to one it knows (encoding/json
// matches keys case-insensitively) and on a key that comes twice
// (encoding/json decodes the second into what the first made, merging
// slices element by element): the writer writes neither.

// The fold sets are the structs' own JSON names, so a field added to one
// later is never read past as unknown: its key folds to a name, and the
// line goes to encoding/json until the decoder learns the field.
var (
	judgeFold       = foldOf[Judge]()
	judgeSampleFold = foldOf[JudgeSample]()
	checkErrorFold  = foldOf[CheckError]()
	itlFold         = foldOf[ITL]()
	turnFold        = foldOf[Turn]()
	turnCallFold    = foldOf[TurnCall]()
	injectionFold   = foldOf[Injection]()
)

// injection decodes a prompt-injection cell's block (few cells carry one,
// so it is allocated, not pooled).
func (d *fastDecoder) injection(dst **Injection) bool {
	if d.null() {
		*dst = nil
		return true
	}
	in := &Injection{}
	f := fields{d: d}
	ok := d.object(func(key []byte) bool {
		switch string(key) {
		case "role":
			return f.once(0) && d.str(&in.Role, noIntern)
		case "twin":
			return f.once(1) && d.str(&in.Twin, noIntern)
		case "style":
			return f.once(2) && d.str(&in.Style, noIntern)
		case "goal":
			return f.once(3) && d.str(&in.Goal, noIntern)
		case "carrier":
			return f.once(4) && d.str(&in.Carrier, noIntern)
		case "target":
			return f.once(5) && d.str(&in.Target, noIntern)
		case "text":
			return f.once(6) && d.str(&in.Text, noIntern)
		case "exposed":
			return f.once(7) && d.bool(&in.Exposed)
		}
		return d.other(key, injectionFold)
	})
	if ok {
		*dst = in
	}
	return ok
}

// foldOf is the lower-cased JSON names of T's fields (encoding/json
// matches keys case-insensitively).
func foldOf[T any]() map[string]bool {
	t := reflect.TypeFor[T]()
	m := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[strings.ToLower(name)] = true
	}
	return m
}

// fields decodes an object as object does, handing field each member's
// key after checking it is not a repeat; a key field does not take
// (false from it with handled unset) is read past unless it folds to one
// of fold's names.
type fields struct {
	d    *fastDecoder
	seen uint32
}

// once says the member numbered bit (below 32) had not been seen yet,
// and marks it.
func (f *fields) once(bit uint) bool {
	if f.seen&(1<<bit) != 0 {
		return false
	}
	f.seen |= 1 << bit
	return true
}

// other reads past a member whose key is none of the object's names.
func (d *fastDecoder) other(key []byte, fold map[string]bool) bool {
	if fold[strings.ToLower(string(key))] {
		return false
	}
	_, ok := d.skip()
	return ok
}

func pickTurns(p *pools) *pool[Turn]        { return &p.turns }
func pickChecks(p *pools) *pool[CheckError] { return &p.checks }

// judge decodes the judge object.
func (d *fastDecoder) judge(dst **Judge) bool {
	if d.null() {
		*dst = nil
		return true
	}
	j := ptr(d, func(p *pools) *pool[Judge] { return &p.judges }, Judge{})
	f := fields{d: d}
	ok := d.object(func(key []byte) bool {
		switch string(key) {
		case "verdict":
			return f.once(0) && d.str(&j.Verdict, slotVerdict)
		case "score":
			return f.once(1) && d.float64Ptr(&j.Score)
		case "reason":
			return f.once(2) && d.str(&j.Reason, noIntern)
		case "provider":
			return f.once(3) && d.str(&j.Provider, slotJudge)
		case "model":
			return f.once(4) && d.str(&j.Model, slotJudge)
		case "input_tokens":
			return f.once(5) && d.intPtr(&j.InputTokens)
		case "output_tokens":
			return f.once(6) && d.intPtr(&j.OutputTokens)
		case "started_at_ms":
			return f.once(7) && d.int64(&j.StartedAtMS)
		case "latency_ms":
			return f.once(8) && d.int64(&j.LatencyMS)
		case "cost_usd":
			return f.once(9) && d.float64Ptr(&j.CostUSD)
		case "cost_missing":
			return f.once(13) && d.str(&j.CostMissing, noIntern)
		case "tokens_missing":
			return f.once(14) && d.str(&j.TokensMissing, noIntern)
		case "answer_cut":
			return f.once(10) && d.bool(&j.AnswerCut)
		case "spec":
			return f.once(11) && d.str(&j.Spec, slotSpec)
		case "samples":
			return f.once(12) && array(d, &j.Samples, func(p *pools) *pool[JudgeSample] { return &p.samples }, d.judgeSample)
		}
		return d.other(key, judgeFold)
	})
	if ok {
		*dst = j
	}
	return ok
}

func (d *fastDecoder) judgeSample(s *JudgeSample) bool {
	f := fields{d: d}
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "verdict":
			return f.once(0) && d.str(&s.Verdict, slotVerdict)
		case "score":
			return f.once(1) && d.float64Ptr(&s.Score)
		case "reason":
			return f.once(2) && d.str(&s.Reason, noIntern)
		case "error":
			return f.once(3) && d.str(&s.Error, noIntern)
		case "reply":
			return f.once(4) && d.str(&s.Reply, noIntern)
		case "input_tokens":
			return f.once(5) && d.intPtr(&s.InputTokens)
		case "output_tokens":
			return f.once(6) && d.intPtr(&s.OutputTokens)
		case "latency_ms":
			return f.once(7) && d.int64(&s.LatencyMS)
		}
		return d.other(key, judgeSampleFold)
	})
}

func (d *fastDecoder) checkError(c *CheckError) bool {
	f := fields{d: d}
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return f.once(0) && d.str(&c.Type, slotCheck)
		case "check":
			return f.once(1) && d.str(&c.Check, slotCheck)
		case "index":
			return f.once(2) && d.int(&c.Index)
		case "message":
			return f.once(3) && d.str(&c.Message, noIntern)
		}
		return d.other(key, checkErrorFold)
	})
}

// itl decodes itl_ms.
func (d *fastDecoder) itl(dst **ITL) bool {
	if d.null() {
		*dst = nil
		return true
	}
	it := ptr(d, func(p *pools) *pool[ITL] { return &p.itls }, ITL{})
	f := fields{d: d}
	ok := d.object(func(key []byte) bool {
		switch string(key) {
		case "n":
			return f.once(0) && d.int(&it.N)
		case "p50":
			return f.once(1) && d.float64(&it.P50)
		case "p95":
			return f.once(2) && d.float64(&it.P95)
		case "p99":
			return f.once(3) && d.float64(&it.P99)
		case "max":
			return f.once(4) && d.float64(&it.Max)
		case "hist":
			return f.once(5) && array(d, &it.Hist, func(p *pools) *pool[int64] { return &p.int64s }, func(v *int64) bool {
				n, ok := d.parseInt()
				*v = n
				return ok
			})
		}
		return d.other(key, itlFold)
	})
	if ok {
		*dst = it
	}
	return ok
}

func (d *fastDecoder) turn(t *Turn) bool {
	f := fields{d: d}
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "start_ms":
			return f.once(0) && d.float64(&t.StartMS)
		case "end_ms":
			return f.once(1) && d.float64(&t.EndMS)
		case "ttft_ms":
			return f.once(2) && d.float64Ptr(&t.TTFTMS)
		case "text":
			return f.once(3) && d.str(&t.Text, bulky)
		case "reasoning":
			return f.once(4) && d.str(&t.Reasoning, bulky)
		case "calls":
			return f.once(5) && array(d, &t.Calls, func(p *pools) *pool[TurnCall] { return &p.turnCalls }, d.turnCall)
		case "error":
			return f.once(6) && d.str(&t.Error, noIntern)
		}
		return d.other(key, turnFold)
	})
}

func (d *fastDecoder) turnCall(c *TurnCall) bool {
	f := fields{d: d}
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return f.once(0) && d.str(&c.ID, noIntern)
		case "name":
			return f.once(1) && d.str(&c.Name, slotToolName)
		case "arguments":
			return f.once(2) && d.bulkyMessage(&c.Arguments)
		case "result":
			return f.once(3) && d.str(&c.Result, bulky)
		case "result_hash":
			return f.once(4) && d.str(&c.ResultHash, noIntern)
		case "is_error":
			return f.once(5) && d.bool(&c.IsError)
		case "unknown":
			return f.once(6) && d.bool(&c.Unknown)
		case "rule":
			return f.once(7) && d.int(&c.Rule)
		case "fail_first":
			return f.once(8) && d.bool(&c.FailFirst)
		case "wrong_args":
			return f.once(9) && d.bool(&c.WrongArgs)
		case "unanswered":
			return f.once(10) && d.bool(&c.Unanswered)
		case "schema_valid":
			return f.once(11) && d.boolPtr(&c.SchemaValid)
		case "schema_error":
			return f.once(12) && d.str(&c.SchemaError, noIntern)
		case "unsafe":
			return f.once(13) && d.bool(&c.Unsafe)
		case "start_ms":
			return f.once(14) && d.float64(&c.StartMS)
		case "end_ms":
			return f.once(15) && d.float64(&c.EndMS)
		case "injected":
			return f.once(16) && d.bool(&c.Injected)
		case "obeys_injection":
			return f.once(17) && d.bool(&c.ObeysInjection)
		}
		return d.other(key, turnCallFold)
	})
}
