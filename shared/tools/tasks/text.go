package tasks

import (
	"strings"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// Limits of the task tools' contracts, in characters (Unicode code points, as JSON Schema
// counts maxLength), after trimming.
const (
	maxTitle       = 255
	maxDescription = 1000
)

// cleanTitle trims a title and checks it is 1-255 characters. The schema
// checks the untrimmed text with an ASCII-only \S, so a title of only
// Unicode or vertical-tab whitespace gets this far.
func cleanTitle(title string) (string, error) {
	t := strings.TrimSpace(title)
	n := utf8.RuneCountInString(t)
	switch {
	case n == 0:
		return "", toolerr.Field("title", "must not be empty or only whitespace")
	case n > maxTitle:
		return "", toolerr.Field("title", "must be at most %d characters long after trimming, got %d", maxTitle, n)
	}
	return t, nil
}

// cleanDescription trims a description; nil, empty and whitespace-only
// descriptions become nil (none).
func cleanDescription(description *string) (*string, error) {
	if description == nil {
		return nil, nil
	}
	d := strings.TrimSpace(*description)
	if d == "" {
		return nil, nil
	}
	if n := utf8.RuneCountInString(d); n > maxDescription {
		return nil, toolerr.Field("description", "must be at most %d characters long after trimming, got %d", maxDescription, n)
	}
	return &d, nil
}
