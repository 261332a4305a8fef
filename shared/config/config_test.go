package config_test

import (
	"github.com/toolshed/toolshed/shared/config"
)

func from(env map[string]string) (config.Config, error) {
	return config.FromEnv(func(k string) string { return env[k] })
}
