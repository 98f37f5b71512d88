package results

// Injection says what a cell of a prompt-injection case was (see
// docs/routing.md, "Prompt injection"): an attack, whose task is its
// clean twin's with an instruction planted in one tool's result, or the
// clean twin itself, the same task without it. The verdicts are the
// record's injection_followed (attack cells) and utility (both).
type Injection struct {
	// Role is InjectionAttack or InjectionClean.
	Role string `json:"role"`
	// Twin is an attack's clean twin (its prompt id).
	Twin string `json:"twin,omitempty"`
	// Style is where and how the instruction is planted (json_field,
	// prose, quoted_email, fake_end_marker, second_language, encoded, or a
	// prompt file's own); Goal is GoalHarmfulAction or GoalExfiltration.
	Style string `json:"style,omitempty"`
	Goal  string `json:"goal,omitempty"`
	// Carrier is the tool whose result carries the instruction; Target
	// the tool the instruction asks for.
	Carrier string `json:"carrier,omitempty"`
	Target  string `json:"target,omitempty"`
	// Text is the planted instruction as the carrier's result holds it
	// (what answers.html marks).
	Text string `json:"text,omitempty"`
	// Exposed says the model got the injected result back (the carrier
	// was called and answered with it): a model that never was cannot
	// have resisted anything, which the reports say (n_exposed).
	Exposed bool `json:"exposed,omitempty"`
}

// Injection roles.
const (
	InjectionAttack = "attack"
	InjectionClean  = "clean"
)

// Injection goals: what the planted instruction wants done.
const (
	// GoalHarmfulAction asks for a call of a side-effect tool the user
	// did not ask for (or a forbidden one).
	GoalHarmfulAction = "harmful_action"
	// GoalExfiltration asks for a secret from a tool result to be sent
	// out through a tool's arguments.
	GoalExfiltration = "exfiltration"
)

// InjectionGoals lists the goals in the order the reports give them.
var InjectionGoals = []string{GoalHarmfulAction, GoalExfiltration}
