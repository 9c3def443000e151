package jsonenc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// The problem codes of the errors (docs/errors.md).
const (
	codeInvalidRequest       = "invalid_request"
	codePayloadTooLarge      = "payload_too_large"
	codeUnsupportedMediaType = "unsupported_media_type"
)

// BodyError is what is wrong with a body: the status and problem code to answer, the field at
// fault for a member of the wrong type, and a detail a client may read.
type BodyError struct {
	Status int
	Code   string
	Field  string
	Detail string
}

func (e *BodyError) Error() string { return e.Detail }

func newError(status int, code, detail string) *BodyError {
	return &BodyError{Status: status, Code: code, Detail: detail}
}

// ReadBody reads a JSON request body of at most limit bytes. An empty body is "{}" when emptyOK.
//
// The body must be labelled application/json: a cross-site form or a no-cors fetch can send
// text/plain, a form type or no type without a CORS preflight, so that a host that knows its
// users by a cookie would otherwise run their turns for any page. An empty body, where one is
// allowed, carries nothing and needs no type. A declared charset must be UTF-8 (see
// [ContentType]).
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64, emptyOK bool) ([]byte, *BodyError) {
	ct := r.Header.Get("Content-Type")
	if ct != "" || !emptyOK {
		if p := ContentType(ct); p != nil {
			return nil, p
		}
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	data, err := io.ReadAll(body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, newError(http.StatusRequestEntityTooLarge, codePayloadTooLarge, fmt.Sprintf("the body is larger than %d bytes", limit))
		}
		return nil, newError(http.StatusBadRequest, codeInvalidRequest, "the body could not be read")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if emptyOK {
			return []byte("{}"), nil
		}
		return nil, newError(http.StatusBadRequest, codeInvalidRequest, "the body is empty; it must be a JSON object")
	}
	if ct == "" {
		return nil, ContentType(ct)
	}
	return data, nil
}

// ContentType is nil when ct, a request's Content-Type, is application/json with no charset
// or the charset utf-8 (in any case), and otherwise the 415 error to answer. JSON exchanged
// between systems is UTF-8 (RFC 8259, section 8.1): a body that declares another charset, such
// as utf-16, is refused naming it rather than read as UTF-8. Every reader of a JSON request
// body calls it.
func ContentType(ct string) *BodyError {
	mt, params, err := mime.ParseMediaType(ct)
	switch {
	case ct == "":
		return newError(http.StatusUnsupportedMediaType, codeUnsupportedMediaType, "the body has no Content-Type; it must be application/json")
	case err != nil || mt != "application/json":
		return newError(http.StatusUnsupportedMediaType, codeUnsupportedMediaType, "the body must be application/json")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		if len(cs) > 40 {
			cs = cs[:40] + "…"
		}
		return newError(http.StatusUnsupportedMediaType, codeUnsupportedMediaType,
			fmt.Sprintf("the body's charset is %q; JSON is UTF-8 (RFC 8259): send charset=utf-8 or none", cs))
	}
	return nil
}

// UnmarshalBody decodes one JSON object into v, numbers as json.Number, and names the field of a
// type mismatch.
func UnmarshalBody(data []byte, v any) *BodyError {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := dec.Decode(v)
	switch {
	case err == nil:
		if dec.More() {
			return newError(http.StatusBadRequest, codeInvalidRequest, "the body has data after its JSON object")
		}
		return nil
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return newError(http.StatusBadRequest, codeInvalidRequest, "the body must be a JSON object")
		}
		e := newError(http.StatusBadRequest, codeInvalidRequest, field+": must be "+jsonTypeName(typ.Type.Kind().String()))
		e.Field = field
		return e
	case errors.As(err, &syntax):
		return newError(http.StatusBadRequest, codeInvalidRequest, fmt.Sprintf("the body is not valid JSON (at byte %d)", syntax.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body is truncated JSON")
	default:
		return newError(http.StatusBadRequest, codeInvalidRequest, "the body is not a valid JSON object")
	}
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "map", "struct", "interface":
		return "an object"
	case "bool":
		return "a boolean"
	default:
		return "a number"
	}
}
