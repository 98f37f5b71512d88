package results

// Reached says whether a cell got an answer started by a model: not when
// the provider was unavailable, refused the key or rate-limited the call,
// nor when it failed before any answer (cancelled by bench, a wrong
// base_url, a connection reset before the first output). Exit code 4
// (bench run, per shard, and bench merge over the whole run) is decided
// by it.
func Reached(r *Record) bool {
	switch r.AvailabilityStatus {
	case StatusSkippedUnavailable, StatusAuthError, StatusRateLimited:
		return false
	}
	if r.AvailabilityStatus != StatusError || r.FailureType == nil {
		return true
	}
	switch *r.FailureType {
	case FailCancelled, FailEndpointNotFound:
		return false
	case FailConnectionReset:
		return r.TTFOMS != nil
	}
	return true
}
