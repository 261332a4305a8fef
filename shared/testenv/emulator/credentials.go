package emulator

import (
	"path/filepath"
	"testing"
)

// NoCredentials sets the environment of t so that the AWS SDK finds no
// credentials anywhere: none in variables, no ~/.aws files, no profile,
// and no instance or container role (it never asks the metadata service).
func NoCredentials(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME": home, "AWS_CONFIG_FILE": filepath.Join(home, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "credentials"),
		"AWS_ACCESS_KEY_ID":           "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_EC2_METADATA_DISABLED": "true", "AWS_REGION": "us-east-1",
	} {
		t.Setenv(k, v)
	}
}
