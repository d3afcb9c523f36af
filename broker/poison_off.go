//go:build !sharqpoison

package broker

// poisonFrames is off: the poisoning in poison.go is compiled out.
const poisonFrames = false
