package app

import "testing"

func TestGreeting(t *testing.T) {
	if Greeting() != 2 {
		t.Fatal("want 2 parts")
	}
}
