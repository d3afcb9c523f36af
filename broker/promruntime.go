package broker

import (
	"os"
	"runtime"
	"slices"
	"time"
)

// The Go runtime's and the process's families, under the names
// client_golang's Go and process collectors give them, so that dashboards
// made for any Go service read them.
var (
	descGoGoroutines  = newDesc("go_goroutines", "Number of goroutines that currently exist.", kindGauge)
	descGoThreads     = newDesc("go_threads", "Number of OS threads created.", kindGauge)
	descGoInfo        = newDesc("go_info", "Information about the Go environment.", kindGauge, "version")
	descGoGC          = newDesc("go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", "summary", "quantile")
	descGoAlloc       = newDesc("go_memstats_alloc_bytes", "Number of heap bytes allocated and currently in use.", kindGauge)
	descGoAllocTotal  = newDesc("go_memstats_alloc_bytes_total", "Total number of heap bytes allocated, even if freed.", kindCounter)
	descGoSys         = newDesc("go_memstats_sys_bytes", "Number of bytes obtained from system.", kindGauge)
	descGoHeapInuse   = newDesc("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use.", kindGauge)
	descGoHeapIdle    = newDesc("go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used.", kindGauge)
	descGoHeapRel     = newDesc("go_memstats_heap_released_bytes", "Number of heap bytes released to OS.", kindGauge)
	descGoHeapObjects = newDesc("go_memstats_heap_objects", "Number of currently allocated objects.", kindGauge)
	descGoMallocs     = newDesc("go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed.", kindCounter)
	descGoFrees       = newDesc("go_memstats_frees_total", "Total number of heap objects frees.", kindCounter)
	descGoStackInuse  = newDesc("go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments.", kindGauge)
	descGoNextGC      = newDesc("go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place.", kindGauge)
	descGoLastGC      = newDesc("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", kindGauge)

	descProcCPU     = newDesc("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", kindCounter)
	descProcRSS     = newDesc("process_resident_memory_bytes", "Resident memory size in bytes.", kindGauge)
	descProcVirt    = newDesc("process_virtual_memory_bytes", "Virtual memory size in bytes.", kindGauge)
	descProcOpenFDs = newDesc("process_open_fds", "Number of open file descriptors.", kindGauge)
	descProcMaxFDs  = newDesc("process_max_fds", "Maximum number of open file descriptors.", kindGauge)
	descProcStart   = newDesc("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", kindGauge)
)

// processStart is taken when the package initialises, a few milliseconds
// after exec: close enough for a start time in seconds.
var processStart = time.Now()

func collectRuntime(e *expo) {
	e.add(descGoGoroutines, float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	e.add(descGoThreads, float64(threads))
	e.add(descGoInfo, 1, runtime.Version())

	// ReadMemStats stops the world for microseconds: a scrape's cost, not
	// a request's.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	n := min(int(ms.NumGC), len(ms.PauseNs))
	pauses := make([]float64, n)
	for i := range n {
		pauses[i] = float64(ms.PauseNs[(int(ms.NumGC)-1-i+len(ms.PauseNs))%len(ms.PauseNs)]) / 1e9
	}
	slices.Sort(pauses)
	gc := e.buf(descGoGC)
	for _, q := range []struct {
		label string
		at    float64
	}{{"0", 0}, {"0.25", .25}, {"0.5", .5}, {"0.75", .75}, {"1", 1}} {
		v := 0.0
		if n > 0 {
			v = pauses[int(q.at*float64(n-1))]
		}
		e.sample(gc, descGoGC.name, descGoGC, v, []string{q.label}, "", "")
	}
	gcNoLabel := &metricDesc{name: descGoGC.name}
	e.sample(gc, descGoGC.name+"_sum", gcNoLabel, float64(ms.PauseTotalNs)/1e9, nil, "", "")
	e.sample(gc, descGoGC.name+"_count", gcNoLabel, float64(ms.NumGC), nil, "", "")

	e.add(descGoAlloc, float64(ms.Alloc))
	e.add(descGoAllocTotal, float64(ms.TotalAlloc))
	e.add(descGoSys, float64(ms.Sys))
	e.add(descGoHeapInuse, float64(ms.HeapInuse))
	e.add(descGoHeapIdle, float64(ms.HeapIdle))
	e.add(descGoHeapRel, float64(ms.HeapReleased))
	e.add(descGoHeapObjects, float64(ms.HeapObjects))
	e.add(descGoMallocs, float64(ms.Mallocs))
	e.add(descGoFrees, float64(ms.Frees))
	e.add(descGoStackInuse, float64(ms.StackInuse))
	e.add(descGoNextGC, float64(ms.NextGC))
	if ms.LastGC > 0 {
		e.add(descGoLastGC, float64(ms.LastGC)/1e9)
	}

	if cpu, ok := processCPUSeconds(); ok {
		e.add(descProcCPU, cpu)
	}
	if rss, virt, ok := processMemory(); ok {
		e.add(descProcRSS, float64(rss))
		e.add(descProcVirt, float64(virt))
	}
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		e.add(descProcOpenFDs, float64(len(ents)))
	}
	if max, ok := processMaxFDs(); ok {
		e.add(descProcMaxFDs, float64(max))
	}
	e.add(descProcStart, float64(processStart.UnixNano())/1e9)
}
