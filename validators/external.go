package validators

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"bench/internal/record/results"
	"bench/internal/yamlerr"
)

// Bounds of the external checks' keys.
const (
	// MaxJudgeSamples bounds judge_samples: each sample is one more
	// request per judged cell.
	MaxJudgeSamples = 9
	// DefaultCommandTimeout is a command validator's time limit when its
	// spec gives none; MaxCommandTimeout the most it may give.
	DefaultCommandTimeout = 10 * time.Second
	MaxCommandTimeout     = 10 * time.Minute
)

// Duration is a time limit written as a Go duration ("10s", "2m") in a
// prompt file and in config.json.
type Duration time.Duration

// MarshalJSON writes the duration as "10s"; zero is written as null.
func (d Duration) MarshalJSON() ([]byte, error) {
	if d == 0 {
		return []byte("null"), nil
	}
	return json.Marshal(time.Duration(d).String())
}

// IsZero lets omitempty leave an unset timeout out of config.json.
func (d Duration) IsZero() bool { return d == 0 }

// envName is what an environment variable's name may be.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// decodeJudge checks an llm_judge's keys: a rubric, a judge entry's name
// and a model, all non-empty; pass_threshold a number in (0, 1];
// judge_samples an odd count up to MaxJudgeSamples, so a majority exists
// whenever every sample answers. Every key's problem is returned.
func (s *Spec) decodeJudge(n *yaml.Node, vals map[string]*yaml.Node) []error {
	var errs []error
	need := func(key, why string) string {
		vn, ok := vals[key]
		if !ok {
			errs = append(errs, yamlerr.At(n, "validator."+key, "missing (required by type llm_judge: "+why+")"))
			return ""
		}
		v, err := str(vn, "validator."+key)
		if err != nil {
			errs = append(errs, err)
			return ""
		}
		if strings.TrimSpace(v) == "" {
			errs = append(errs, yamlerr.At(vn, "validator."+key, "empty ("+why+")"))
		}
		return v
	}
	s.Rubric = need("rubric", "what the answer is graded against")
	s.Judge = need("judge", "the name of the provider entry that judges")
	s.Model = need("model", "the judge's model")
	if tn, ok := vals["pass_threshold"]; ok {
		var f float64
		if tn.Kind != yaml.ScalarNode || (tn.Tag != "!!float" && tn.Tag != "!!int") || tn.Decode(&f) != nil || !(f > 0 && f <= 1) {
			errs = append(errs, yamlerr.At(tn, "validator.pass_threshold", "want a number above 0 and at most 1 (the lowest passing score), got "+yamlerr.Describe(tn)))
		} else {
			s.PassThreshold = &f
		}
	}
	if kn, ok := vals["judge_samples"]; ok {
		k, err := posInt(kn, "validator.judge_samples")
		switch {
		case err != nil:
			errs = append(errs, err)
		case k%2 == 0 || k > MaxJudgeSamples:
			errs = append(errs, yamlerr.At(kn, "validator.judge_samples", fmt.Sprintf("want an odd number from 1 to %d (the majority of the samples decides, so it must not tie), got %d", MaxJudgeSamples, k)))
		default:
			s.JudgeSamples = k
		}
	}
	return errs
}

// decodeCommand checks a command validator's keys: argv a non-empty list
// of strings (argv[0] not empty; the prompt loader finds the program),
// timeout a duration up to MaxCommandTimeout, env a list of variable
// names, expected any value. Every key's problem is returned.
func (s *Spec) decodeCommand(vals map[string]*yaml.Node) []error {
	var errs []error
	if argv, err := strList(vals["argv"], "validator.argv"); err != nil {
		errs = append(errs, err)
	} else {
		s.Argv = argv
	}
	if tn, ok := vals["timeout"]; ok {
		v, err := str(tn, "validator.timeout")
		if err != nil {
			errs = append(errs, err)
		} else if d, err := time.ParseDuration(v); err != nil || d <= 0 || d > MaxCommandTimeout {
			errs = append(errs, yamlerr.At(tn, "validator.timeout", fmt.Sprintf("want a duration above 0 and at most %s, like 10s, got %q", MaxCommandTimeout, v)))
		} else {
			s.Timeout = Duration(d)
		}
	}
	if en, ok := vals["env"]; ok {
		names, err := strList(en, "validator.env")
		if err != nil {
			errs = append(errs, err)
		}
		for i, name := range names {
			if !envName.MatchString(name) {
				errs = append(errs, yamlerr.At(en.Content[i], fmt.Sprintf("validator.env[%d]", i), fmt.Sprintf("%q is not an environment variable's name (the command gets the variables named here, from bench's environment)", name)))
			}
		}
		if err == nil {
			s.Env = names
		}
	}
	if xn, ok := vals["expected"]; ok {
		var v any
		if err := xn.Decode(&v); err != nil {
			errs = append(errs, yamlerr.At(xn, "validator.expected", err.Error()))
		} else if b, err := json.Marshal(jsonable(v)); err != nil {
			errs = append(errs, yamlerr.At(xn, "validator.expected", "cannot be written as JSON: "+err.Error()))
		} else {
			s.Expected = json.RawMessage(b)
		}
	}
	return errs
}

// jsonable turns what YAML decoded (maps with any keys) into what JSON
// encodes.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	}
	return v
}

// CommandTimeout is the command validator's time limit.
func (s *Spec) CommandTimeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultCommandTimeout
	}
	return time.Duration(s.Timeout)
}

// Samples is how many times an llm_judge asks its judge.
func (s *Spec) Samples() int { return max(s.JudgeSamples, 1) }

// External is what one external check concluded: a verdict, or none and
// why (Err).
type External struct {
	// Index is the check's place in the prompt's Checks.
	Index int
	// Type is the check's type (llm_judge, command).
	Type string
	// Pass is the verdict; nil when the check gave none (Err says why).
	Pass      *bool
	Violation string
	Err       string
	// Parsed is what the check returned, for parsed_output (a command's
	// verdict object).
	Parsed any
}

// Combine folds the external checks' outcomes into the other checks'
// outcome o (CheckAll's). Every check must pass: a failed one fails the
// cell (its violation appended); a check that gave no verdict makes the
// cell not judged (Pass nil) unless another check failed it, and is
// listed as a CheckError, never a pass. A command's object joins
// parsed_output under "command".
func Combine(o Outcome, ext []External) (Outcome, []results.CheckError) {
	var errs []results.CheckError
	unjudged := false
	var reasons []string
	if o.Pass != nil && !*o.Pass {
		reasons = append(reasons, o.Violation)
	}
	for _, e := range ext {
		switch {
		case e.Pass == nil:
			unjudged = true
			typ := results.ValidatorError
			if e.Type == TypeLLMJudge {
				typ = results.JudgeError
			}
			errs = append(errs, results.CheckError{Type: typ, Check: e.Type, Index: e.Index, Message: e.Err})
		case !*e.Pass:
			reasons = append(reasons, e.Violation)
			o.Pass = ptr(false)
		case o.Pass == nil:
			o.Pass = ptr(true)
		}
		if e.Parsed != nil {
			o.Parsed = mergeParsed(o.Parsed, e.Type, e.Parsed)
		}
	}
	switch {
	case o.Pass != nil && !*o.Pass:
		o.Violation = strings.Join(reasons, "; ")
	case unjudged:
		o.Pass, o.Violation = nil, ""
	}
	return o, errs
}

// mergeParsed adds an external check's object to parsed_output under its
// type's name (the first of a kind wins, as CheckAll merges).
func mergeParsed(into any, typ string, p any) any {
	m, ok := into.(map[string]any)
	switch {
	case into == nil:
		m = map[string]any{}
	case !ok:
		m = map[string]any{"checks": into}
	default:
		c := make(map[string]any, len(m)+1)
		for k, v := range m {
			c[k] = v
		}
		m = c
	}
	if _, clash := m[typ]; !clash {
		m[typ] = p
	}
	return m
}

// checkFinite says a JSON number is usable as a score.
func checkFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
