package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
)

// Bounds of the calls bench makes to a server outside any cell. None may
// hang a run: a server that accepts and never answers costs at most these.
const (
	// ProbeTimeout bounds a version or model listing call.
	ProbeTimeout = 10 * time.Second
	// WarmupTimeout bounds loading a model before its suite.
	WarmupTimeout = 5 * time.Minute
	// PullTimeout bounds pulling one model.
	PullTimeout = 2 * time.Hour
)

// The bounds in force; tests shorten them to see each one hold.
var (
	probeTimeout  = ProbeTimeout
	warmupTimeout = WarmupTimeout
	pullTimeout   = PullTimeout
)

// nativeRoot is the Ollama native API root of a base URL: the OpenAI
// compatible .../v1 suffix and trailing slashes removed.
func nativeRoot(baseURL string) string {
	r := strings.TrimRight(baseURL, "/")
	r = strings.TrimSuffix(r, "/v1")
	return strings.TrimRight(r, "/")
}

// sideCall makes a call outside any cell (listing, pulling, warming up) and
// returns the body of a 2xx answer; ctx must carry its bound.
func sideCall(ctx context.Context, method, url string, secrets Secrets, body any) (io.ReadCloser, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if len(secrets) > 0 && secrets[0] != "" {
		req.Header.Set("Authorization", "Bearer "+secrets[0])
	}
	res, err := sideClient.Do(req)
	if err != nil {
		if f := NetFailure(err, secrets); f != nil {
			return nil, fmt.Errorf("%s %s: %s", method, url, f.Message)
		}
		return nil, fmt.Errorf("%s %s: %s", method, url, secrets.Clean(err.Error(), maxMessage))
	}
	if res.StatusCode/100 != 2 {
		defer res.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		_, msg := ollamaErrorBody(raw)
		if msg == "" {
			msg = strings.TrimSpace(string(raw))
		}
		return nil, fmt.Errorf("%s %s: HTTP %d: %s", method, url, res.StatusCode, secrets.Clean(msg, maxMessage))
	}
	return res.Body, nil
}

var sideClient = httpClient()

// getJSON GETs url into v within ProbeTimeout.
func getJSON(ctx context.Context, url string, secrets Secrets, v any) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	body, err := sideCall(ctx, http.MethodGet, url, secrets, nil)
	if err == nil {
		defer body.Close()
		err = json.NewDecoder(io.LimitReader(body, 32<<20)).Decode(v)
		if err != nil {
			err = fmt.Errorf("GET %s: decode: %w", url, err)
		}
	}
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("GET %s: no complete answer within %s", url, probeTimeout)
	}
	return err
}

// listModels lists the models of the Ollama server at root (/api/tags).
func listModels(ctx context.Context, root string, secrets Secrets) ([]ServerModel, error) {
	var list api.ListResponse
	if err := getJSON(ctx, root+"/api/tags", secrets, &list); err != nil {
		return nil, err
	}
	out := make([]ServerModel, 0, len(list.Models))
	for _, m := range list.Models {
		out = append(out, ServerModel{Name: m.Name, Size: m.Size, Digest: m.Digest, ModifiedAt: m.ModifiedAt,
			Family: m.Details.Family, ParameterSize: m.Details.ParameterSize, QuantizationLevel: m.Details.QuantizationLevel})
	}
	return out, nil
}

// probeOllama fills a probe with the server's version and models. What the
// server said is scrubbed and cut like any message: a hostile server could
// echo the key as its version or a model's name.
func probeOllama(ctx context.Context, root string, secrets Secrets, pr *Probe) {
	var v struct {
		Version string `json:"version"`
	}
	if err := getJSON(ctx, root+"/api/version", secrets, &v); err != nil {
		pr.Errors = append(pr.Errors, secrets.Clean(err.Error(), maxMessage))
	} else {
		v.Version = secrets.Clean(v.Version, maxMessage)
		pr.ServerVersion = &v.Version
	}
	models, err := listModels(ctx, root, secrets)
	if err != nil {
		pr.Errors = append(pr.Errors, secrets.Clean(err.Error(), maxMessage))
		return
	}
	for i := range models {
		m := &models[i]
		for _, f := range []*string{&m.Name, &m.Digest, &m.Family, &m.ParameterSize, &m.QuantizationLevel} {
			*f = secrets.Clean(*f, maxMessage)
		}
	}
	pr.ServerModels = models
}
