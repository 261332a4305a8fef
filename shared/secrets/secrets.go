// Package secrets gives a deployed function the values of its secret
// settings (an embedder's API key, the paging cursors' key, and any
// setting declared settings.Var.Secret) without writing them into the
// deployment. The deployment names an AWS Systems Manager Parameter Store
// parameter per secret (a SecureString, `-c
// TOOLSHED_EMBED_KEY=ssm:/toolshed/embed-key`, or Parameter Store's
// reference to a Secrets Manager secret, SecretsManagerPrefix);
// the function's environment carries only those names, in EnvVar; and the
// function reads the values once, at start (Load), and lays them over the
// getenv its settings are read with, where the setting's readers find
// them as if set in the environment. The process environment never holds
// them.
package secrets

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/settings"
)

// EnvVar is the environment variable of a deployed function that maps
// each of its secret settings to the parameter holding its value, as a
// JSON object: {"TOOLSHED_EMBED_KEY":"/toolshed/embed-key"}.
const EnvVar = "TOOLSHED_SECRET_PARAMETERS"

// Parameters is EnvVar's declaration.
var Parameters = settings.New(EnvVar, "",
	"the parameter each secret setting of a deployed function is read from at start, a JSON object (`{\"TOOLSHED_EMBED_KEY\":\"/toolshed/embed-key\"}`)",
	settings.JSONMap).Shown("(set by the CDK)")

// RefPrefix starts a deployment's value of a secret setting: the rest is
// the parameter's name.
const RefPrefix = "ssm:"

// SecretsManagerPrefix starts the names under which Parameter Store shows
// Secrets Manager's secrets: the parameter
// /aws/reference/secretsmanager/NAME, read with decryption, is the value
// of the secret NAME. So a secret setting may name a Secrets Manager
// secret as well (the CDK app names the cursor key it generates so).
const SecretsManagerPrefix = "/aws/reference/secretsmanager/"

// ReferencedSecret returns the name of the Secrets Manager secret the
// parameter name refers to, when it is such a reference: a function that
// reads it needs secretsmanager:GetSecretValue on that secret too.
func ReferencedSecret(parameter string) (string, bool) {
	name, ok := strings.CutPrefix(parameter, SecretsManagerPrefix)
	if !ok || name == "" {
		return "", false
	}
	return name, true
}

// parameterName is what Parameter Store accepts as a name: letters,
// digits and _.-/, with a leading / when the name has a path.
var parameterName = regexp.MustCompile(`^(/[A-Za-z0-9_.\-]+)+$|^[A-Za-z0-9_.\-]+$`)

// ParseRef returns the parameter name in ref ("ssm:/toolshed/embed-key"),
// or why ref is not one.
func ParseRef(ref string) (string, error) {
	name, ok := strings.CutPrefix(ref, RefPrefix)
	if !ok {
		return "", fmt.Errorf("a secret is never written into the deployment: store it as an SSM SecureString parameter and give %s/its/name", RefPrefix)
	}
	if len(name) > 1011 || !parameterName.MatchString(name) {
		return "", fmt.Errorf("%q is not a parameter name: use letters, digits and _.-/, e.g. %s/toolshed/embed-key", name, RefPrefix)
	}
	return name, nil
}

// Encode is EnvVar's value for settings → parameter names.
func Encode(params map[string]string) string {
	b, _ := json.Marshal(params) // a map of strings always encodes
	return string(b)
}

// Fetch returns the decrypted value of a parameter (Parameter Store's:
// shared/secrets/parameterstore).
type Fetch func(ctx context.Context, name string) (string, error)

// Load reads EnvVar with getenv and returns getenv with each setting it
// names laid over it: the value of that setting's parameter, fetched
// once, now. Without EnvVar it returns getenv itself (and never calls
// fetch).
func Load(ctx context.Context, getenv func(string) string, fetch Fetch) (func(string) string, error) {
	params, err := Parameters.Get(getenv)
	if err != nil || len(params) == 0 {
		return getenv, err
	}
	values := make(map[string]string, len(params))
	for _, s := range slices.Sorted(maps.Keys(params)) {
		v, err := fetch(ctx, params[s])
		if err != nil {
			return nil, fmt.Errorf("read %s from parameter %s: %w", s, params[s], err)
		}
		values[s] = v
	}
	return func(k string) string {
		if v, ok := values[k]; ok {
			return v
		}
		return getenv(k)
	}, nil
}
