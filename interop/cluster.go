package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// KafkaCluster is a multi-node Apache Kafka KRaft cluster started from the
// jars: one process per node, each a combined broker and controller, with a
// static voter set. Topics default to replication factor 3 and
// min.insync.replicas 2, so an acks=all write is on two nodes before it is
// acknowledged, as on a production cluster.
type KafkaCluster struct {
	Nodes     []*Process
	Bootstrap string // comma-separated PLAINTEXT listeners of every node
	Dir       string
}

// KafkaClusterConfig is node id's server.properties in a cluster whose
// nodes listen on ports and controllerPorts (index i is node i+1). The
// internal topics keep Kafka's replication factor 3 but fewer partitions
// than the default 50, which only cost start-up time on a test machine;
// topics are never auto-created, so a topic MirrorMaker fails to create
// stays missing instead of appearing with one partition.
func KafkaClusterConfig(id int, dataDir string, ports, controllerPorts []int) string {
	var voters []string
	for i, p := range controllerPorts {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, p))
	}
	rf := len(ports)
	minISR := rf - 1
	if minISR < 1 {
		minISR = 1
	}
	return fmt.Sprintf(`process.roles=broker,controller
node.id=%[1]d
controller.quorum.voters=%[2]s
listeners=PLAINTEXT://127.0.0.1:%[3]d,CONTROLLER://127.0.0.1:%[4]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[3]d,CONTROLLER://127.0.0.1:%[4]d
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=%[5]s
default.replication.factor=%[6]d
min.insync.replicas=%[7]d
auto.create.topics.enable=false
offsets.topic.replication.factor=%[6]d
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=%[6]d
transaction.state.log.min.isr=%[7]d
transaction.state.log.num.partitions=5
share.coordinator.state.topic.replication.factor=%[6]d
share.coordinator.state.topic.min.isr=%[7]d
share.coordinator.state.topic.num.partitions=5
group.initial.rebalance.delay.ms=0
`, id, strings.Join(voters, ","), ports[id-1], controllerPorts[id-1], dataDir, rf, minISR)
}

// StartKafkaCluster formats and starts an n-node cluster under dir and
// returns once every node answers Metadata listing all n brokers and a
// controller. Ports are picked free and may be taken by another process
// before the JVM binds them; a cluster whose node exits early is stopped
// and started again on new ports (three attempts).
func StartKafkaCluster(ctx context.Context, j *Java, dir string, n int, jvmFlags []string) (*KafkaCluster, error) {
	if jvmFlags == nil {
		jvmFlags = testKafkaJVMFlags
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		c, err := startClusterOnce(ctx, j, filepath.Join(dir, fmt.Sprintf("try%d", attempt)), n, jvmFlags)
		if err == nil {
			return c, nil
		}
		lastErr = err
		if !errors.Is(err, errExitedEarly) || ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func startClusterOnce(ctx context.Context, j *Java, dir string, n int, jvmFlags []string) (*KafkaCluster, error) {
	ports := make([]int, n)
	cports := make([]int, n)
	for i := range ports {
		var err error
		if ports[i], err = freePort(); err != nil {
			return nil, err
		}
		if cports[i], err = freePort(); err != nil {
			return nil, err
		}
	}
	clusterID, err := RandomClusterID()
	if err != nil {
		return nil, err
	}
	nodes := make([]*KafkaNode, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nodes[i], errs[i] = formatClusterNode(ctx, j, filepath.Join(dir, fmt.Sprintf("node%d", i+1)), i+1, clusterID, ports, cports)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c := &KafkaCluster{Dir: dir}
	var addrs []string
	for i, node := range nodes {
		p, err := node.Start(jvmFlags)
		if err != nil {
			c.Stop(10 * time.Second)
			return nil, err
		}
		p.Name = fmt.Sprintf("kafka%d", i+1)
		p.BrokerID = int32(i + 1)
		c.Nodes = append(c.Nodes, p)
		addrs = append(addrs, p.Bootstrap)
	}
	c.Bootstrap = strings.Join(addrs, ",")
	if err := c.waitReady(ctx, 3*time.Minute); err != nil {
		c.Stop(10 * time.Second)
		return nil, err
	}
	return c, nil
}

// formatClusterNode writes node id's server.properties and formats its data
// dir for the static voter set (no --standalone: the voters are in the
// config).
func formatClusterNode(ctx context.Context, j *Java, dir string, id int, clusterID string, ports, cports []int) (*KafkaNode, error) {
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", data, err)
	}
	props := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(props, []byte(KafkaClusterConfig(id, data, ports, cports)), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", props, err)
	}
	res, err := j.Run(ctx, nil, ClassStorage, "format", "-t", clusterID, "-c", props)
	if err != nil {
		return nil, fmt.Errorf("kafka-storage format node %d: %w\n%s%s", id, err, res.Stdout, res.Stderr)
	}
	return &KafkaNode{Dir: dir, Port: ports[id-1], ControllerPort: cports[id-1], j: j, props: props}, nil
}

// waitReady polls every node until its Metadata lists all the cluster's
// brokers and a controller.
func (c *KafkaCluster) waitReady(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for _, p := range c.Nodes {
		var last error
		for {
			n, err := brokerCount(ctx, p.Bootstrap)
			if err == nil && n == len(c.Nodes) {
				break
			}
			if err == nil {
				err = fmt.Errorf("%d of %d brokers registered", n, len(c.Nodes))
			}
			last = err
			select {
			case <-p.done:
				return fmt.Errorf("%s: %w (%v)\n--- server.log tail ---\n%s", p.Name, errExitedEarly, p.err, p.LogTail(4000))
			case <-ctx.Done():
				return fmt.Errorf("%s not ready within %v: %w\n--- server.log tail ---\n%s", p.Name, limit, last, p.LogTail(4000))
			case <-tick.C:
			}
		}
	}
	return nil
}

// brokerCount asks addr for Metadata and returns how many live brokers it
// lists, failing while no controller is known.
func brokerCount(ctx context.Context, addr string) (int, error) {
	conn, f, _, err := dialAPIVersions(ctx, addr, "sharq-interop")
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	md.Topics = []kmsg.MetadataRequestTopic{}
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	if err := roundTrip(conn, f, 2, md, resp); err != nil {
		return 0, fmt.Errorf("Metadata: %w", err)
	}
	if resp.ControllerID < 0 {
		return 0, errors.New("Metadata: no controller yet")
	}
	return len(resp.Brokers), nil
}

// Stop ends every node (SIGTERM, then kill after grace) and reports the
// nodes that had to be killed.
func (c *KafkaCluster) Stop(grace time.Duration) error {
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for i, p := range c.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = p.Stop(grace)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// LogTails returns the end of every node's log, for failure messages.
func (c *KafkaCluster) LogTails(n int) string {
	var sb strings.Builder
	for _, p := range c.Nodes {
		fmt.Fprintf(&sb, "--- %s (%s) ---\n%s\n", p.Name, p.Log, p.LogTail(n))
	}
	return sb.String()
}
