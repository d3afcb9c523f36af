//go:build !unix

package broker

func processCPUSeconds() (float64, bool)         { return 0, false }
func processMemory() (rss, virt uint64, ok bool) { return 0, 0, false }
func processMaxFDs() (uint64, bool)              { return 0, false }
