package tools

import (
	"strings"

	"github.com/resmongw/resmongw/backend"
)

// The shape of a success reply. A tool answers only from the reply it needs: a 2xx body that
// is empty, null, HTML, an empty object, or a list where an object is needed is upstream_error,
// never an empty answer. "No routines" made from {} is exactly the lie the contract forbids:
// a harness would tell the person they have none.

// msgWriteWrongShape adds what a person must know when the reply to a change is unreadable:
// the change may have been made.
func msgWriteWrongShape(what, got string) string {
	return backend.MsgWrongShape(what, got) + " The change may have been made; check with a read tool before repeating it."
}

func wrongShape(what string, res any, write bool) *backend.ToolError {
	return shapeError(what, replyKind(res), write)
}

func shapeError(what, got string, write bool) *backend.ToolError {
	msg := backend.MsgWrongShape(what, got)
	if write {
		msg = msgWriteWrongShape(what, got)
	}
	return backend.NewError(backend.CodeUpstreamError, msg, map[string]any{"expected": what, "received": got})
}

// replyKind describes a decoded reply without repeating any of it.
func replyKind(v any) string {
	if v == backend.JSONNull {
		return "null"
	}
	switch x := v.(type) {
	case nil:
		return "an empty reply or null"
	case string:
		if looksLikeHTML(x) {
			return "a web page"
		}
		return "text"
	case map[string]any:
		if len(x) == 0 {
			return "an empty object"
		}
		return "an object without the expected fields"
	case []any:
		return "a list"
	}
	return "a " + jsonKind(v)
}

func looksLikeHTML(s string) bool {
	t := strings.ToLower(strings.TrimSpace(s))
	return strings.HasPrefix(t, "<!doctype html") || strings.HasPrefix(t, "<html")
}

// replyObject returns res as an object holding every one of keys, or the upstream_error
// naming what was expected.
func replyObject(res any, what string, keys ...string) (map[string]any, *backend.ToolError) {
	m, ok := res.(map[string]any)
	if !ok {
		return nil, wrongShape(what, res, false)
	}
	for _, k := range keys {
		if _, has := m[k]; !has {
			return nil, wrongShape(what, res, false)
		}
	}
	return m, nil
}

// writeReply is replyObject for the answer to a change.
func writeReply(res any, what string, keys ...string) (map[string]any, *backend.ToolError) {
	m, terr := replyObject(res, what, keys...)
	if terr != nil {
		return nil, wrongShape(what, res, true)
	}
	return m, nil
}

// replyRows returns v as a list of objects (an empty list is a real answer: there are none).
// whole is the reply v came from, described in the error.
func replyRows(v any, what string, whole any) ([]any, *backend.ToolError) {
	rows, ok := v.([]any)
	if !ok {
		return nil, wrongShape(what, whole, false)
	}
	for _, r := range rows {
		if _, ok := r.(map[string]any); !ok {
			return nil, shapeError(what, "a list holding "+article(jsonKind(r)), false)
		}
	}
	return rows, nil
}

// rowsHolding checks every row holds each of keys (with any value, null included): a row
// that lacks what identifies it or what the tool reports from it ([{}]) would otherwise
// become a row of nulls with facts made up for the missing fields (a routine "not active").
func rowsHolding(rows []any, what string, keys ...string) *backend.ToolError {
	for _, r := range rows {
		m, ok := r.(map[string]any)
		if !ok {
			return shapeError(what, "a list holding "+article(jsonKind(r)), false)
		}
		for _, k := range keys {
			if _, has := m[k]; !has {
				return shapeError(what, "a row without "+k, false)
			}
		}
	}
	return nil
}

// replyList is replyRows for a reply that is itself the list.
func replyList(res any, what string) ([]any, *backend.ToolError) {
	return replyRows(res, what, res)
}

// objectWithRows reads a reply object whose key holds the list of rows.
func objectWithRows(res any, what, key string, more ...string) (map[string]any, []any, *backend.ToolError) {
	m, terr := replyObject(res, what, append([]string{key}, more...)...)
	if terr != nil {
		return nil, nil, terr
	}
	rows, terr := replyRows(m[key], what, res)
	if terr != nil {
		return nil, nil, terr
	}
	return m, rows, nil
}

// integerField reads a key the reply must hold as a whole number (an execution id).
func integerField(m map[string]any, key, what string, write bool) (any, *backend.ToolError) {
	v := m[key]
	if _, ok := valInt(v); ok {
		return v, nil
	}
	return nil, shapeError(what, "an object whose "+key+" is "+article(jsonKind(v)), write)
}
