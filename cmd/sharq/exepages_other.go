//go:build !linux

package main

// releaseExePages is Linux-only (it reads /proc/self/maps); elsewhere the
// start-up pages stay mapped.
func releaseExePages() error { return nil }
