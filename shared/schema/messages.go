package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/toolshed/toolshed/shared/toolerr"
)

var (
	quoted  = regexp.MustCompile(`'([^']*)'`)
	lengths = regexp.MustCompile(`(\d+), but got (\d+)`)
)

// invalidInput turns a schema validation error into INVALID_INPUT. The
// message names the first field at fault; details list every leaf problem.
// schema is the raw schema validated against: a pattern's failure is told
// by the "x-error" of the schema object holding it, never by the regular
// expression.
func invalidInput(err error, schema json.RawMessage) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return toolerr.New(toolerr.InvalidInput, "invalid arguments: %v", err)
	}
	var problems []toolerr.FieldError
	collect(ve, schema, &problems)
	if len(problems) == 0 {
		problems = []toolerr.FieldError{{Field: "arguments", Message: ve.Message}}
	}
	slices.SortStableFunc(problems, func(a, b toolerr.FieldError) int { return strings.Compare(a.Field, b.Field) })
	problems = slices.Compact(problems)
	return toolerr.Fields(problems)
}

// collect walks the error tree down to its leaves. Leaves under an anyOf or
// oneOf are all reported since any branch could be the one meant.
func collect(ve *jsonschema.ValidationError, schema json.RawMessage, out *[]toolerr.FieldError) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collect(c, schema, out)
		}
		return
	}
	*out = append(*out, leaf(ve, schema)...)
}

func leaf(ve *jsonschema.ValidationError, schema json.RawMessage) []toolerr.FieldError {
	field := fieldName(ve.InstanceLocation)
	msg := ve.Message
	keyword := ve.KeywordLocation[strings.LastIndex(ve.KeywordLocation, "/")+1:]
	switch keyword {
	case "required":
		var fe []toolerr.FieldError
		for _, m := range quoted.FindAllStringSubmatch(msg, -1) {
			fe = append(fe, toolerr.FieldError{Field: join(field, m[1]), Message: "is required"})
		}
		if len(fe) > 0 {
			return fe
		}
	case "additionalProperties":
		var fe []toolerr.FieldError
		for _, m := range quoted.FindAllStringSubmatch(msg, -1) {
			fe = append(fe, toolerr.FieldError{Field: join(field, m[1]), Message: "is not an accepted field"})
		}
		if len(fe) > 0 {
			return fe
		}
	case "minLength", "maxLength":
		if m := lengths.FindStringSubmatch(msg); m != nil {
			bound := map[string]string{"minLength": "at least", "maxLength": "at most"}[keyword]
			msg = fmt.Sprintf("must be %s %s characters long, got %s", bound, m[1], m[2])
			if keyword == "minLength" && m[1] == "1" && m[2] == "0" {
				msg = "must not be empty or only whitespace"
			}
		}
	case "pattern":
		msg = patternMessage(schema, ve.KeywordLocation)
	case "type":
		msg = strings.Replace(msg, "expected ", "must be of type ", 1)
	case "enum":
		msg = strings.Replace(msg, "value must be one of", "must be one of", 1)
	}
	return []toolerr.FieldError{{Field: field, Message: msg}}
}

// patternMessage is the "x-error" of the schema object whose pattern
// failed (keywordLocation is a JSON pointer into schema ending in
// "/pattern"), or a sentence that says only that the form is wrong.
func patternMessage(schema json.RawMessage, keywordLocation string) string {
	const fallback = "is not in the accepted form (see the tool's input schema)"
	var node any
	if json.Unmarshal(schema, &node) != nil {
		return fallback
	}
	parts := strings.Split(strings.TrimPrefix(keywordLocation, "/"), "/")
	for _, p := range parts[:len(parts)-1] {
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		switch n := node.(type) {
		case map[string]any:
			node = n[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(n) {
				return fallback
			}
			node = n[i]
		default:
			return fallback
		}
	}
	if obj, ok := node.(map[string]any); ok {
		if m, ok := obj["x-error"].(string); ok && m != "" {
			return m
		}
	}
	return fallback
}

// fieldName turns a JSON pointer ("/baseline/cpu") into "baseline.cpu".
func fieldName(pointer string) string {
	if pointer == "" {
		return "arguments"
	}
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i, p := range parts {
		p = strings.ReplaceAll(p, "~1", "/")
		parts[i] = strings.ReplaceAll(p, "~0", "~")
	}
	return strings.Join(parts, ".")
}

func join(parent, child string) string {
	if parent == "" || parent == "arguments" {
		return child
	}
	return parent + "." + child
}
