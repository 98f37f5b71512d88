package main

import (
	"strings"

	"bench/agentsnap"
	"bench/config"
	"bench/internal/version"
	"bench/inventory"
	"bench/providers"
)

// newSnapshotWriter is the observer that writes runDir/snapshots/: each
// cell's agent snapshot, with the prompt as sent and the setup the
// inventory probe found (server version, model digest).
func newSnapshotWriter(runDir string, cfg *config.Config, inv *inventory.Inventory) (*agentsnap.Writer, error) {
	prompts := make(map[string]agentsnap.Prompt, len(cfg.PromptSet))
	for _, p := range cfg.PromptSet {
		prompts[p.ID] = agentsnap.Prompt{System: p.System, Text: p.Prompt}
	}
	return agentsnap.NewWriter(runDir, prompts, snapshotEnv(inv))
}

// snapshotEnv turns the inventory's probes into the fingerprints' setup.
func snapshotEnv(inv *inventory.Inventory) agentsnap.Env {
	env := agentsnap.Env{Bench: version.String(), Servers: map[string]agentsnap.Server{}}
	if inv == nil {
		return env
	}
	for _, p := range inv.Providers {
		if p.Probe == nil {
			continue
		}
		srv := agentsnap.Server{Digests: map[string]string{}}
		switch {
		case p.ServerVersion != nil:
			srv.Version = *p.ServerVersion
		case p.CLIVersion != nil:
			srv.Version = *p.CLIVersion
		}
		for _, m := range p.Models {
			srv.Digests[m] = serverDigest(p.Probe.ServerModels, m)
		}
		env.Servers[p.Name] = srv
	}
	return env
}

// serverDigest is the digest the server lists for a configured model name;
// Ollama lists "name:latest" for a model configured without a tag.
func serverDigest(models []providers.ServerModel, name string) string {
	for _, m := range models {
		if m.Name == name || (!strings.Contains(name, ":") && m.Name == name+":latest") {
			return m.Digest
		}
	}
	return ""
}
