package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
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
// schema is the raw schema validated against: where it says in words what a
// failed keyword means ("x-error", see contractMessage), that is the
// problem's message.
func invalidInput(err error, schema json.RawMessage) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return toolerr.New(toolerr.InvalidInput, "invalid arguments: %v", err)
	}
	var doc any
	if err := json.Unmarshal(schema, &doc); err != nil {
		doc = nil // cannot happen: the schema compiled; the messages are then the validator's
	}
	var problems []toolerr.FieldError
	collect(ve, doc, &problems)
	if len(problems) == 0 {
		problems = []toolerr.FieldError{{Field: "arguments", Message: ve.Message}}
	}
	// Named fields first, by name; problems of the arguments as a whole
	// (the contract's words for an anyOf, say) after them.
	whole := func(p toolerr.FieldError) bool { return p.Field == "arguments" }
	slices.SortStableFunc(problems, func(a, b toolerr.FieldError) int {
		switch {
		case whole(a) && !whole(b):
			return 1
		case whole(b) && !whole(a):
			return -1
		}
		return strings.Compare(a.Field, b.Field)
	})
	problems = slices.Compact(problems)
	return toolerr.Fields(problems)
}

// collect walks the error tree down to its leaves. Leaves under an anyOf or
// oneOf are all reported since any branch could be the one meant, unless
// the contract words the failure of the anyOf itself: a failure the
// contract words is one problem, whatever failed beneath it.
func collect(ve *jsonschema.ValidationError, doc any, out *[]toolerr.FieldError) {
	if msg, ok := contractMessage(doc, ve.AbsoluteKeywordLocation); ok {
		*out = append(*out, toolerr.FieldError{Field: fieldName(ve.InstanceLocation), Message: msg})
		return
	}
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collect(c, doc, out)
		}
		return
	}
	*out = append(*out, leaf(ve)...)
}

func leaf(ve *jsonschema.ValidationError) []toolerr.FieldError {
	field := fieldName(ve.InstanceLocation)
	msg := ve.Message
	keyword := ve.KeywordLocation[strings.LastIndex(ve.KeywordLocation, "/")+1:]
	switch keyword {
	case "required", "additionalProperties":
		// The message quotes the fields: one error for each.
		what := map[string]string{"required": "is required", "additionalProperties": "is not an accepted field"}[keyword]
		var fe []toolerr.FieldError
		for _, m := range quoted.FindAllStringSubmatch(msg, -1) {
			fe = append(fe, toolerr.FieldError{Field: join(field, m[1]), Message: what})
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
		// Never the regular expression; a contract should word it (x-error).
		msg = "is not in the accepted form (see the tool's input schema)"
	case "type":
		msg = strings.Replace(msg, "expected ", "must be of type ", 1)
	case "enum":
		msg = strings.Replace(msg, "value must be one of", "must be one of", 1)
	}
	return []toolerr.FieldError{{Field: field, Message: msg}}
}

// contractMessage is the message a contract gives for the failure of one
// keyword: the schema object holding the keyword may carry
//
//	"x-error": {"<keyword>": "<what is wrong, in words>", ...}
//
// e.g. {"pattern": "must be a relative path inside the repository"} next
// to a pattern, or {"anyOf": "give a title or a description"} next to an
// anyOf. location is the failed keyword's absolute location (a JSON
// pointer into doc after the '#', through any $ref); ok is false when the
// contract says nothing about it.
func contractMessage(doc any, location string) (msg string, ok bool) {
	_, pointer, found := strings.Cut(location, "#")
	cut := strings.LastIndex(pointer, "/")
	if !found || cut < 0 {
		return "", false
	}
	node, _ := lookup(doc, pointer[:cut])
	obj, _ := node.(map[string]any)
	words, _ := obj["x-error"].(map[string]any)
	msg, _ = words[pointer[cut+1:]].(string)
	return msg, msg != ""
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
