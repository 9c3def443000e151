package jsonenc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
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
// allowed, carries nothing and needs no type.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64, emptyOK bool) ([]byte, *BodyError) {
	ct := r.Header.Get("Content-Type")
	if ct != "" || !emptyOK {
		if p := jsonContentType(ct); p != nil {
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
		return nil, jsonContentType(ct)
	}
	return data, nil
}

// jsonContentType is nil when ct, a Content-Type, is application/json, with any parameters.
func jsonContentType(ct string) *BodyError {
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case ct == "":
		return newError(http.StatusUnsupportedMediaType, codeUnsupportedMediaType, "the body has no Content-Type; it must be application/json")
	case err != nil || mt != "application/json":
		return newError(http.StatusUnsupportedMediaType, codeUnsupportedMediaType, "the body must be application/json")
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
