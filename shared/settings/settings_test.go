package settings_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/settings"
)

func TestGet(t *testing.T) {
	quota := settings.New("TOOLSHED_X_QUOTA", "10", "a quota", settings.Positive)
	hosts := settings.New("TOOLSHED_X_HOSTS", "", "hosts", settings.List)
	tests := []struct {
		name    string
		env     map[string]string
		quota   int
		hosts   []string
		wantErr string
	}{
		{"defaults", nil, 10, nil, ""},
		{"blank is the default", map[string]string{"TOOLSHED_X_QUOTA": "  "}, 10, nil, ""},
		{"set", map[string]string{"TOOLSHED_X_QUOTA": " 7 ", "TOOLSHED_X_HOSTS": "a.com, ,b.com"}, 7, []string{"a.com", "b.com"}, ""},
		{"bad number", map[string]string{"TOOLSHED_X_QUOTA": "-1"}, 0, nil, `TOOLSHED_X_QUOTA="-1": use a positive whole number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			q, err := quota.Get(getenv)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || q != tt.quota {
				t.Fatalf("quota %d, %v; want %d", q, err, tt.quota)
			}
			h, err := hosts.Get(getenv)
			if err != nil || !slices.Equal(h, tt.hosts) {
				t.Fatalf("hosts %q, %v; want %q", h, err, tt.hosts)
			}
		})
	}
}

func TestCheckAndRow(t *testing.T) {
	quota := settings.New("TOOLSHED_X_QUOTA", "10", "a quota", settings.Positive)
	var s settings.Setting = quota
	if err := s.Check("3"); err != nil {
		t.Errorf("Check(3): %v", err)
	}
	if err := s.Check("three"); err == nil || !strings.Contains(err.Error(), "TOOLSHED_X_QUOTA") {
		t.Errorf("Check(three) = %v, want an error naming the variable", err)
	}
	if got, want := s.Row(), "| `TOOLSHED_X_QUOTA` | `10` | a quota |"; got != want {
		t.Errorf("Row() = %q, want %q", got, want)
	}
	if got, want := settings.New("TOOLSHED_Y", "", "no default", settings.Text).Row(), "| `TOOLSHED_Y` | | no default |"; got != want {
		t.Errorf("Row() = %q, want %q", got, want)
	}
	if got, want := quota.Shown("ten").Row(), "| `TOOLSHED_X_QUOTA` | ten | a quota |"; got != want {
		t.Errorf("Row() = %q, want %q", got, want)
	}
	if s.IsSecret() {
		t.Error("a setting is secret unless marked")
	}
	token := settings.New("TOOLSHED_X_TOKEN", "", "a token", settings.Text).Secret()
	if !token.IsSecret() {
		t.Error("Secret() did not mark the setting")
	}
	if got, want := token.Row(), "| `TOOLSHED_X_TOKEN` | | a token; a secret: deployed, name an SSM SecureString parameter instead (`-c TOOLSHED_X_TOKEN=ssm:/name`) |"; got != want {
		t.Errorf("Row() = %q, want %q", got, want)
	}
}

func TestDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"30s": 30 * time.Second, "250ms": 250 * time.Millisecond, "0s": 0, "-1s": 0, "soon": 0} {
		got, err := settings.Duration(in)
		if got != want || (err == nil) != (want > 0) {
			t.Errorf("Duration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestOneOf(t *testing.T) {
	type mode string
	parse := settings.OneOf[mode]("auto", "keys", "off")
	tests := []struct {
		in      string
		want    mode
		wantErr string
	}{
		{"keys", "keys", ""},
		{"off", "off", ""},
		{"maybe", "", "use auto, keys or off"},
		{"", "", "use auto, keys or off"},
	}
	for _, tt := range tests {
		got, err := parse(tt.in)
		if got != tt.want || (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
			t.Errorf("OneOf(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestReader(t *testing.T) {
	quota := settings.New("TOOLSHED_X_QUOTA", "10", "a quota", settings.Positive)
	wait := settings.New("TOOLSHED_X_WAIT", "1s", "a wait", settings.Duration)
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"defaults", nil, ""},
		{"one refused", map[string]string{"TOOLSHED_X_WAIT": "never"}, `TOOLSHED_X_WAIT="never": use a positive duration such as 30s`},
		{"both refused, both named", map[string]string{"TOOLSHED_X_QUOTA": "0", "TOOLSHED_X_WAIT": "never"},
			"TOOLSHED_X_QUOTA=\"0\": use a positive whole number\nTOOLSHED_X_WAIT=\"never\": use a positive duration such as 30s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := settings.NewReader(func(k string) string { return tt.env[k] })
			q, w := settings.Read(r, quota), settings.Read(r, wait)
			err := r.Err()
			if tt.wantErr == "" {
				if err != nil || q != 10 || w != time.Second {
					t.Fatalf("got %d, %v, %v; want 10, 1s, no error", q, w, err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestJSONMap(t *testing.T) {
	if m, err := settings.JSONMap(""); m != nil || err != nil {
		t.Errorf(`JSONMap("") = %v, %v; want none`, m, err)
	}
	if m, err := settings.JSONMap(`{"hello":"fn-hello"}`); err != nil || len(m) != 1 || m["hello"] != "fn-hello" {
		t.Errorf("JSONMap(object) = %v, %v", m, err)
	}
	for _, bad := range []string{`{"hello":1}`, `["hello"]`, `{`} {
		if _, err := settings.JSONMap(bad); err == nil {
			t.Errorf("JSONMap(%s) took it", bad)
		}
	}
}
