//go:build sharqsoak

package main

// soakDefaultCycles: the long form of TestMixedKill9Soak (issue 26 item
// 2), 1,000 kill -9 cycles per flush mode.
const soakDefaultCycles = 1000
