//go:build !sharqsoak

package main

// soakDefaultCycles is the short form of TestMixedKill9Soak in the normal
// suite; the build tag sharqsoak makes it 1,000 (soak_long_test.go).
const soakDefaultCycles = 2
