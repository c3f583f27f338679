package tools

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/resmongw/resmongw/backend"
)

// Backend call shorthands for the handlers.

func callGet(ctx context.Context, api backend.API, path string, q url.Values) (any, error) {
	return api.Call(ctx, &backend.Request{Method: http.MethodGet, Path: path, Query: q})
}

func callPost(ctx context.Context, api backend.API, path string, body any, write bool) (any, error) {
	return api.Call(ctx, &backend.Request{Method: http.MethodPost, Path: path, Body: body, Write: write})
}

// asToolError returns err's *ToolError, or nil.
func asToolError(err error) *backend.ToolError {
	var te *backend.ToolError
	if errors.As(err, &te) {
		return te
	}
	return nil
}
