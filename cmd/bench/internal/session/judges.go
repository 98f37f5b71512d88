package session

import (
	"fmt"
	"slices"
	"strings"

	"bench/config"
	"bench/internal/suggest"
	"bench/internal/yamlerr"
	"bench/providers"
	"bench/run/inventory"
	"bench/validators"
)

// checkJudges looks, before the sweep, at what the inventory's probes
// learned of the judges the prompts name: a judge model its server does
// not list (and the entry does not pull) is a config error at the check's
// line, so it is found once, before a cell is sent, not as a
// model_not_found on every judged cell. A judge whose server did not
// answer its probe is a warning: it may come back before the first cell
// ends (if it does not, its cells are judge errors, and the run exits 5).
func checkJudges(cfg *config.Config, inv *inventory.Inventory, provs map[string]providers.Provider) (errs []error, warnings []string) {
	if inv == nil {
		return nil, nil
	}
	probes := map[string]*providers.Probe{}
	for _, p := range inv.Providers {
		probes[p.Name] = p.Probe
	}
	type judge struct{ entry, model string }
	seen := map[judge]bool{}
	warned := map[string]bool{}
	for i := range cfg.PromptSet {
		p := &cfg.PromptSet[i]
		for _, s := range p.Checks() {
			j := judge{s.Judge, s.Model}
			if s.Type != validators.TypeLLMJudge || seen[j] {
				continue
			}
			seen[j] = true
			pr := probes[s.Judge]
			if pl, ok := provs[s.Judge].(providers.Puller); ok && pl.Pulls() {
				continue // pulled before the sweep, or its cells say why not
			}
			switch {
			case pr.Lacks(s.Model):
				var have []string
				for _, m := range pr.ServerModels {
					have = append(have, m.Name)
				}
				where := pr.BaseURL
				if where == "" {
					where = "its server"
				}
				errs = append(errs, &yamlerr.Error{File: p.Source, Line: s.Line, Field: "validator.model",
					Msg: fmt.Sprintf("%s is not on judge entry %s's server at %s (it has %s)%s; pull it, or name one it has: nothing was sent",
						yamlerr.Quoted(s.Model), s.Judge, where, orNone(have), suggest.Hint(s.Model, have))})
			case pr != nil && pr.ServerModels == nil && len(pr.Errors) > 0 && !warned[s.Judge]:
				warned[s.Judge] = true
				warnings = append(warnings, fmt.Sprintf("judge entry %s did not answer its probe (%s): its checks are judge errors unless it comes back", s.Judge, pr.Errors[0]))
			}
		}
	}
	slices.SortStableFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs, warnings
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "no model"
	}
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}
