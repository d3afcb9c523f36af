//go:build sharqpoison

package broker

// poisonFrames is on: see poison.go.
const poisonFrames = true
