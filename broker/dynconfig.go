package broker

import (
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sharq/config"
	"sharq/log"
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

// asKafkaShows adjusts a node's broker config entries where Kafka's answer
// comes from what the running broker knows rather than from its config
// file: listeners with the ports actually bound (a configured port 0 shows
// as the port the kernel gave), and broker.id, which a KRaft broker sets
// to its node.id.
func (s *Server) asKafkaShows(entries []config.Entry) []config.Entry {
	bound := make([]string, 0, len(s.cfg.Listeners))
	for i, l := range s.cfg.Listeners {
		port := l.Port
		if i < len(s.listeners) {
			if a, ok := s.listeners[i].Addr().(*net.TCPAddr); ok {
				port = a.Port
			}
		}
		bound = append(bound, l.Name+"://"+net.JoinHostPort(l.Host, strconv.Itoa(port)))
	}
	listeners := strings.Join(bound, ",")
	id := strconv.Itoa(int(s.cfg.NodeID))
	for i, e := range entries {
		switch e.Name {
		case "listeners":
			if len(s.listeners) == 0 || e.Source != config.SourceStaticBroker {
				continue
			}
			e.Value = listeners
			syn := append([]config.Synonym(nil), e.Synonyms...)
			for j := range syn {
				if syn[j].Source == config.SourceStaticBroker {
					syn[j].Value = listeners
				}
			}
			e.Synonyms = syn
		case "broker.id":
			if e.Source != config.SourceDefault {
				continue
			}
			def := e.Value
			e.Value, e.Source = id, config.SourceStaticBroker
			e.Synonyms = []config.Synonym{{Name: "broker.id", Value: id, Source: config.SourceStaticBroker},
				{Name: "broker.id", Value: def, Source: config.SourceDefault}}
		default:
			continue
		}
		entries[i] = e
	}
	return entries
}
