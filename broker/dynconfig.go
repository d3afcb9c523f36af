package broker

import (
	"sharq/log"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
)

// Dynamic broker configs (kafka-configs --entity-type brokers) live in the
// metadata image: the cluster-wide default entity ("") and per-node
// entities. The effective config is the static one with both laid over it
// (config.WithDynamic, which also makes DescribeConfigs report their
// sources and synonyms as Kafka does); it is rebuilt whenever they change
// and read without locks.

func (s *Server) effectiveConfig() *config.Config {
	if c := s.effective.Load(); c != nil {
		return c
	}
	return s.cfg
}

// applyDynamicBrokerConfigs rebuilds the effective config from the image and
// pushes topic defaults that changed into the open partition logs.
func (s *Server) applyDynamicBrokerConfigs() error {
	img := s.meta.Image()
	eff, err := s.cfg.WithDynamic(img.BrokerConfigs[""], img.BrokerConfigs[strconv.Itoa(int(s.cfg.NodeID))])
	if err != nil {
		return err
	}
	s.effective.Store(eff)
	s.logs.SetCleanerOptions(cleanerOptions(eff))
	return s.syncPartitions()
}

// cleanerOptions are the log.cleaner.* settings of a config.
func cleanerOptions(cfg *config.Config) log.CleanerOptions {
	return log.CleanerOptions{
		Disable:             !cfg.LogCleanerEnable || cfg.LogCleanerThreads == 0,
		Threads:             int(cfg.LogCleanerThreads),
		Backoff:             time.Duration(cfg.LogCleanerBackoffMs) * time.Millisecond,
		DedupeBufferSize:    cfg.LogCleanerDedupeBufferSize,
		IOBufferSize:        int(cfg.LogCleanerIOBufferSize),
		IOBufferLoadFactor:  cfg.LogCleanerIOBufferLoadFactor,
		IOMaxBytesPerSecond: cfg.LogCleanerIOMaxBytesPerSecond,
	}
}

// toSynonyms converts an entry's synonym list to the wire form.
func toSynonyms(e config.Entry) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	out := make([]kmsg.DescribeConfigsResponseResourceConfigConfigSynonym, 0, len(e.Synonyms))
	for _, syn := range e.Synonyms {
		ws := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
		ws.Name, ws.Source = syn.Name, kmsg.ConfigSource(syn.Source)
		if !syn.Null && !e.Sensitive {
			v := syn.Value
			ws.Value = &v
		}
		out = append(out, ws)
	}
	return out
}
