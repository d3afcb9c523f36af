package interop

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The 3-node Kafka 4.4 cluster is started once per test binary by the first
// test that asks for it (sharedCluster) and stopped by the last test that
// uses it (TestMirrorMaker2), else by TestMain, so the MirrorMaker tests
// pay its start-up once. A test asking for it after it was stopped fails.
var (
	clusterMu   sync.Mutex
	clusterOnce bool
	cluster     *KafkaCluster
	clusterErr  error
)

// sharedCluster returns the shared 3-node cluster (replication factor 3,
// min.insync.replicas 2), starting it on first use. Tests must use topic
// and group names of their own on it.
func sharedCluster(t testing.TB) *KafkaCluster {
	t.Helper()
	j := needJava(t)
	clusterMu.Lock()
	defer clusterMu.Unlock()
	if !clusterOnce {
		clusterOnce = true
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		start := time.Now()
		cluster, clusterErr = StartKafkaCluster(ctx, j, filepath.Join(workDir, "cluster"), 3, nil)
		if clusterErr == nil {
			t.Logf("3-node Kafka %s cluster ready at %s after %v", KafkaVersion, cluster.Bootstrap, time.Since(start).Round(time.Millisecond))
		}
	}
	if clusterErr != nil {
		t.Fatalf("start 3-node Kafka cluster: %v", clusterErr)
	}
	if cluster == nil {
		t.Fatal("the shared Kafka cluster was stopped by an earlier test; start a new one or move this test before it")
	}
	for _, p := range cluster.Nodes {
		select {
		case <-p.Exited():
			t.Fatalf("%s of the shared cluster has exited:\n%s", p.Name, p.LogTail(4000))
		default:
		}
	}
	return cluster
}

// stopSharedCluster stops the shared cluster if a test started it.
func stopSharedCluster() error {
	clusterMu.Lock()
	defer clusterMu.Unlock()
	if cluster == nil {
		return nil
	}
	err := cluster.Stop(60 * time.Second)
	cluster = nil
	return err
}
