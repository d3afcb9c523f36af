package broker

// DescribeLogDirs: v1-5
//
// Behavior:
// * One log directory (log.dirs) with the size of every partition log (or
//   of the ones asked for; Topics null = all), and (v4+) the file system's
//   total and usable bytes. Offset lag is 0: there are no future replicas.
//   v5: the directory is never cordoned.

import (
	"path/filepath"
	"sort"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { regKey(35, 1, 5, handleDescribeLogDirs) }

func handleDescribeLogDirs(r *request, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.DescribeLogDirsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if !r.authorizeCluster(opDescribe) {
		if r.version >= 3 {
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		}
		return resp, nil
	}
	dir := kmsg.NewDescribeLogDirsResponseDir()
	abs, err := filepath.Abs(r.s.cfg.LogDirs)
	if err != nil {
		abs = r.s.cfg.LogDirs
	}
	dir.Dir = abs
	dir.TotalBytes, dir.UsableBytes = -1, -1
	var st syscall.Statfs_t
	if err := syscall.Statfs(abs, &st); err == nil {
		dir.TotalBytes = int64(st.Blocks) * int64(st.Bsize)
		dir.UsableBytes = int64(st.Bavail) * int64(st.Bsize)
	}
	want := map[string][]int32{}
	if req.Topics != nil {
		for _, t := range req.Topics {
			want[t.Topic] = append(want[t.Topic], t.Partitions...)
		}
	}
	r.s.partsMu.RLock()
	names := make([]string, 0, len(r.s.topics))
	for name := range r.s.topics {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		parts, asked := want[name]
		if req.Topics != nil && !asked {
			continue
		}
		dt := kmsg.NewDescribeLogDirsResponseDirTopic()
		dt.Topic = name
		for _, p := range r.s.topics[name].parts {
			if p == nil || (req.Topics != nil && !containsInt32(parts, p.index)) {
				continue
			}
			dp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			dp.Partition = p.index
			if st, ok := p.stats(); ok {
				dp.Size = st.Size
			}
			dt.Partitions = append(dt.Partitions, dp)
		}
		if len(dt.Partitions) > 0 {
			dir.Topics = append(dir.Topics, dt)
		}
	}
	r.s.partsMu.RUnlock()
	resp.Dirs = append(resp.Dirs, dir)
	return resp, nil
}

func containsInt32(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
