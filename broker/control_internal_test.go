package broker

import "testing"

func TestControlLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:5000": true, "[::1]:80": true, "localhost:1": true,
		"10.0.0.2:5000": false, "172.17.0.1:9644": false, "[2001:db8::1]:1": false, "garbage": false,
	} {
		if got := isLoopbackAddr(addr); got != want {
			t.Errorf("isLoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestRegControlNeedsMethodAndPrefix(t *testing.T) {
	for _, p := range []string{"/api/v1/x", "GET /x", "GET api/v1/x"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("regControl(%q) accepted", p)
				}
			}()
			regControl(p, nil)
		}()
	}
}
