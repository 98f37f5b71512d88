package faultserver

// The frames are what real client libraries expect: go-openai (chat
// completions and Responses) and Ollama's own api package read the ok
// answers as they would a real server's, and fail on the faults the way
// they fail in the field.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"
	openai "github.com/sashabaranov/go-openai"
)

func openaiClient(s *Server, key string) *openai.Client {
	cc := openai.DefaultConfig(key)
	cc.BaseURL = s.URL() + "/v1"
	cc.HTTPClient = client
	return openai.NewClientWithConfig(cc)
}

// chatStream runs one go-openai chat stream and returns the text, the
// finish reason, the completion tokens and the error that ended it.
func chatStream(t *testing.T, c *openai.Client, model string) (string, string, int, error) {
	t.Helper()
	st, err := c.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model: model, Stream: true, StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}},
	})
	if err != nil {
		return "", "", 0, err
	}
	defer st.Close()
	var text strings.Builder
	var finish string
	var tokens int
	for {
		ch, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return text.String(), finish, tokens, nil
		}
		if err != nil {
			return text.String(), finish, tokens, err
		}
		for _, c := range ch.Choices {
			text.WriteString(c.Delta.Content)
			if c.FinishReason != "" {
				finish = string(c.FinishReason)
			}
		}
		if ch.Usage != nil {
			tokens = ch.Usage.CompletionTokens
		}
	}
}

func TestGoOpenAIChat(t *testing.T) {
	s := Start(t)
	key := newKey()
	c := openaiClient(s, key)
	text, finish, tokens, err := chatStream(t, c, "ok")
	if err != nil || text != answerText || finish != "stop" || tokens != 4 {
		t.Errorf("ok: %q %q %d %v", text, finish, tokens, err)
	}
	// go-openai gives up after 300 non-data lines in a row (issue 15, 6).
	if text, _, _, err := chatStream(t, c, "comment_flood:300"); err != nil || text != answerText {
		t.Errorf("comment_flood:300: %q %v", text, err)
	}
	if _, _, _, err := chatStream(t, c, "comment_flood:301"); !errors.Is(err, openai.ErrTooManyEmptyStreamMessages) {
		t.Errorf("comment_flood:301: %v, want go-openai's too many empty messages", err)
	}
	var apiErr *openai.APIError
	if _, _, _, err := chatStream(t, c, "http429"); !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || apiErr.Code != "rate_limit_exceeded" {
		t.Errorf("http429: %v", err)
	}
	if _, _, _, err := chatStream(t, c, "echo_key"); !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 || !strings.Contains(apiErr.Message, key) {
		t.Errorf("echo_key: %v", err)
	}
	if text, _, _, err := chatStream(t, c, "echo_key_event"); !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, key) || text != answer[0] {
		t.Errorf("echo_key_event: %q %v", text, err)
	}
	if text, finish, _, err := chatStream(t, c, "cut"); err != nil || finish != "" || text != answer[0]+answer[1] {
		t.Errorf("cut: go-openai should see a clean end without a finish: %q %q %v", text, finish, err)
	}
	if _, _, _, err := chatStream(t, c, "malformed"); err == nil {
		t.Error("malformed: no error")
	}
	if _, _, _, err := chatStream(t, c, "die"); err == nil {
		t.Error("die: no error")
	}
}

func TestGoOpenAIResponses(t *testing.T) {
	s := Start(t)
	c := openaiClient(s, newKey())
	st, err := c.CreateResponseStream(context.Background(), openai.CreateResponseRequest{Model: "ok", Input: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text strings.Builder
	var completed *openai.CreateResponseResponse
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed":
			completed = ev.Response
		}
	}
	if text.String() != answerText || completed == nil || completed.Usage == nil || completed.Usage.OutputTokens != 4 {
		t.Errorf("text %q, completed %+v", text.String(), completed)
	}
}

func ollamaClient(s *Server) *api.Client {
	u, _ := url.Parse(s.URL())
	return api.NewClient(u, client)
}

func TestOllamaAPIClient(t *testing.T) {
	s := Start(t)
	c := ollamaClient(s)
	ctx := context.Background()
	var text strings.Builder
	var last api.ChatResponse
	err := c.Chat(ctx, &api.ChatRequest{Model: "ok", Messages: []api.Message{{Role: "user", Content: "hi"}}}, func(r api.ChatResponse) error {
		text.WriteString(r.Message.Content)
		last = r
		return nil
	})
	if err != nil || text.String() != answerText || !last.Done || last.EvalCount != 4 || last.PromptEvalCount != inputTokens {
		t.Errorf("chat: %q %+v %v", text.String(), last.Metrics, err)
	}
	err = c.Chat(ctx, &api.ChatRequest{Model: "stream_error"}, func(api.ChatResponse) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "server had an error") {
		t.Errorf("stream_error: %v", err)
	}
	// api.Client turns an error body into a plain error, status lost (why
	// bench's ollama provider reads the stream itself).
	if err := c.Chat(ctx, &api.ChatRequest{Model: "nope"}, func(api.ChatResponse) error { return nil }); err == nil || err.Error() != `model "nope" not found, try pulling it first` {
		t.Errorf("unknown model: %v", err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list.Models) < 20 {
		t.Errorf("list: %v", err)
	}
	if v, err := c.Version(ctx); err != nil || v != "0.9.6" {
		t.Errorf("version %q %v", v, err)
	}
	if ps, err := c.ListRunning(ctx); err != nil || len(ps.Models) != 1 {
		t.Errorf("ps: %v", err)
	}
	if show, err := c.Show(ctx, &api.ShowRequest{Model: "ok"}); err != nil || show.Details.Format != "gguf" {
		t.Errorf("show: %v", err)
	}
	var statuses []string
	if err := c.Pull(ctx, &api.PullRequest{Model: "ok"}, func(p api.ProgressResponse) error {
		statuses = append(statuses, p.Status)
		return nil
	}); err != nil || statuses[len(statuses)-1] != "success" {
		t.Errorf("pull: %q %v", statuses, err)
	}
	if err := c.Pull(ctx, &api.PullRequest{Model: "http500"}, func(api.ProgressResponse) error { return nil }); err == nil || !strings.Contains(err.Error(), "server had an error") {
		t.Errorf("pull http500: %v", err)
	}
	// The non-streaming calls keep the status.
	var statusErr api.StatusError
	if _, err := c.Show(ctx, &api.ShowRequest{Model: "http404"}); !errors.As(err, &statusErr) || statusErr.StatusCode != http.StatusNotFound {
		t.Errorf("show http404: %v", err)
	}
}
