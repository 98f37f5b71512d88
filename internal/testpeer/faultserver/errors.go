package faultserver

import (
	"fmt"
	"net/http"
)

// apiError is one error reply, in the words of each protocol.
type apiError struct {
	status int
	msg    string
	// oaType and oaCode are OpenAI's error.type and error.code.
	oaType, oaCode string
	// anType is Anthropic's error.type.
	anType string
}

// statusError is what a real server of each kind says for a status. The
// 404 names the model, as real servers do (bench tells a missing model
// from a wrong base URL by that).
func statusError(status int, model string) apiError {
	e := apiError{status: status, oaType: "invalid_request_error", anType: "invalid_request_error"}
	switch status {
	case http.StatusBadRequest:
		e.msg = "Invalid request: the request body could not be processed."
	case http.StatusUnauthorized:
		e.msg, e.oaCode, e.anType = "Incorrect API key provided.", "invalid_api_key", "authentication_error"
	case http.StatusForbidden:
		e.msg, e.oaCode, e.anType = fmt.Sprintf("Project does not have access to model %s.", model), "model_not_allowed", "permission_error"
	case http.StatusNotFound:
		e.msg, e.oaCode, e.anType = fmt.Sprintf("model %q not found, try pulling it first", model), "model_not_found", "not_found_error"
	case http.StatusTooManyRequests:
		e.msg, e.oaType, e.oaCode, e.anType = "Rate limit reached for requests.", "requests", "rate_limit_exceeded", "rate_limit_error"
	case http.StatusInternalServerError:
		e.msg, e.oaType, e.oaCode, e.anType = "The server had an error while processing your request.", "server_error", "server_error", "api_error"
	case http.StatusBadGateway:
		e.msg, e.oaType, e.oaCode, e.anType = "Bad gateway.", "server_error", "server_error", "api_error"
	case http.StatusServiceUnavailable, 529:
		e.msg, e.oaType, e.oaCode, e.anType = "The server is overloaded, please try again later.", "server_error", "overloaded", "overloaded_error"
	default:
		e.msg = fmt.Sprintf("injected HTTP %d", status)
		if status >= 500 {
			e.oaType, e.oaCode, e.anType = "server_error", "server_error", "api_error"
		}
	}
	return e
}

// echoError is a 401 that quotes the credential back, as OpenAI's
// "Incorrect API key provided: sk-..." and Anthropic's "invalid x-api-key"
// replies do (real servers mask most of it; this one does not).
func echoError(msg string) apiError {
	return apiError{status: http.StatusUnauthorized, msg: msg, oaType: "invalid_request_error", oaCode: "invalid_api_key", anType: "authentication_error"}
}

// openAIErrorBody is {"error":{"message","type","param","code"}}.
func openAIErrorBody(f *frames, e apiError) {
	f.str(`{"error":{"message":`)
	f.quote(e.msg)
	f.str(`,"type":`)
	f.quote(e.oaType)
	f.str(`,"param":null,"code":`)
	if e.oaCode == "" {
		f.str("null")
	} else {
		f.quote(e.oaCode)
	}
	f.str("}}")
}

// ollamaErrorBody is {"error":"..."}.
func ollamaErrorBody(f *frames, e apiError) {
	f.str(`{"error":`)
	f.quote(e.msg)
	f.str("}")
}

// anthropicErrorBody is {"type":"error","error":{"type","message"}}.
func anthropicErrorBody(f *frames, e apiError) {
	f.str(`{"type":"error","error":{"type":`)
	f.quote(e.anType)
	f.str(`,"message":`)
	f.quote(e.msg)
	f.str("}}")
}

// geminiErrorBody is Google's {"error":{"code","message","status"}}.
func geminiErrorBody(f *frames, e apiError) {
	status := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
		429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}[e.status]
	if status == "" {
		status = "UNKNOWN"
	}
	f.str(`{"error":{"code":` + itoa(e.status) + `,"message":`)
	f.quote(e.msg)
	f.str(`,"status":"` + status + `"}}`)
}
