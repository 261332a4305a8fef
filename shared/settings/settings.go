// Package settings declares the settings a tool reads from its
// environment, each once: its variable, its default, how it is parsed and
// what it means. The tool reads it with Get; the CDK app passes it to the
// tool's functions by Name and checks the value with Check at synthesis;
// the README's configuration table lists it from Row (a test keeps the two
// equal). A setting marked Secret (an API key) is never written into a
// deployment: the deployment names where the function reads it at start
// (shared/secrets). Process-wide settings (listen address, stores,
// logging) are declared the same way, in shared/config.
package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Setting is what a deployment and the documentation need of a declared
// setting, whatever its type.
type Setting interface {
	// Name is the environment variable, e.g. TOOLSHED_FETCH_ALLOWED_DOMAINS.
	Name() string
	// Check reports whether value would be accepted.
	Check(value string) error
	// Row is the setting's line in the README's configuration table.
	Row() string
	// IsSecret reports whether the value is a secret (see Var.Secret).
	IsSecret() bool
}

// Var is one declared setting of type T.
type Var[T any] struct {
	name, def, doc string
	shown          string // the default as the docs say it, when not def
	secret         bool
	parse          func(string) (T, error)
}

// New declares a setting: the environment variable name, the default as
// written in the environment and in the docs ("" for none: parse then
// receives ""), a sentence for the docs, and the parser.
func New[T any](name, def, doc string, parse func(string) (T, error)) Var[T] {
	return Var[T]{name: name, def: def, doc: doc, parse: parse}
}

// Shown returns the declaration with the docs saying text for its default
// (markdown), where the default is not one value: "`none` (Lambda:
// `bedrock`)".
func (v Var[T]) Shown(text string) Var[T] {
	v.shown = text
	return v
}

// Secret returns the declaration marked secret: a deployment never holds
// its value, only the name of the parameter the function reads it from
// (shared/secrets), and the docs say so.
func (v Var[T]) Secret() Var[T] {
	v.secret = true
	return v
}

// IsSecret reports whether the setting is marked Secret.
func (v Var[T]) IsSecret() bool { return v.secret }

// Name is the environment variable.
func (v Var[T]) Name() string { return v.name }

// Get reads the setting with getenv (os.Getenv in a process): the value,
// trimmed, or the default when it is unset or blank. The error names the
// variable and says what it takes.
func (v Var[T]) Get(getenv func(string) string) (T, error) {
	raw := strings.TrimSpace(getenv(v.name))
	if raw == "" {
		raw = v.def
	}
	t, err := v.parse(raw)
	if err != nil {
		return t, fmt.Errorf("%s=%q: %w", v.name, raw, err)
	}
	return t, nil
}

// Check reports whether value (as it would be set) is accepted.
func (v Var[T]) Check(value string) error {
	_, err := v.Get(func(string) string { return value })
	return err
}

// Row is the README configuration table's row for the setting.
func (v Var[T]) Row() string {
	def := v.shown
	if def == "" && v.def != "" {
		def = "`" + v.def + "`"
	}
	if def != "" {
		def += " "
	}
	doc := v.doc
	if v.secret {
		doc += "; a secret: deployed, name an SSM SecureString parameter instead (`-c " + v.name + "=ssm:/name`)"
	}
	return fmt.Sprintf("| `%s` | %s| %s |", v.name, def, doc)
}

// List parses a comma-separated list, dropping blanks; "" is nil.
func List(s string) ([]string, error) {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out, nil
}

// Positive parses a positive whole number.
func Positive(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("use a positive whole number")
	}
	return n, nil
}

// Duration parses a positive duration: 30s, 500ms, 2m.
func Duration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("use a positive duration such as 30s")
	}
	return d, nil
}

// Text takes the value as it is.
func Text(s string) (string, error) { return s, nil }

// JSONMap reads a JSON object of strings, such as
// {"hello":"toolshed-hello"}; "" is none (nil).
func JSONMap(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return m, nil
}

// OneOf parses one of values, a typed enumeration: the error lists them
// ("use auto, keys or off").
func OneOf[T ~string](values ...T) func(string) (T, error) {
	return func(s string) (T, error) {
		for _, v := range values {
			if s == string(v) {
				return v, nil
			}
		}
		names := make([]string, len(values))
		for i, v := range values {
			names[i] = string(v)
		}
		last := len(names) - 1
		return "", fmt.Errorf("use %s or %s", strings.Join(names[:last], ", "), names[last])
	}
}

// Reader reads several settings with one getenv and keeps every error,
// so that a configuration is refused with all its problems named at once:
//
//	r := settings.NewReader(getenv)
//	quota := settings.Read(r, Quota)
//	hosts := settings.Read(r, Hosts)
//	if err := r.Err(); err != nil { ... }
type Reader struct {
	getenv func(string) string
	errs   []error
}

// NewReader returns a Reader over getenv.
func NewReader(getenv func(string) string) *Reader { return &Reader{getenv: getenv} }

// Read reads v with r's getenv (see Var.Get); an error is kept for Err,
// and the value is then T's zero value.
func Read[T any](r *Reader, v Var[T]) T {
	t, err := v.Get(r.getenv)
	if err != nil {
		r.errs = append(r.errs, err)
	}
	return t
}

// Err is every error of the settings read so far, joined; nil if none.
func (r *Reader) Err() error { return errors.Join(r.errs...) }
