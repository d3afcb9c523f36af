package raftmeta

import "context"

// The signatures the broker compiles against (api.go's comment). If one of
// these lines stops compiling, the contract changed.
var (
	_ func(Config) (*Store, error)                                                             = Open
	_ func(*Store) *Image                                                                      = (*Store).Image
	_ func(*Store) error                                                                       = (*Store).Close
	_ func(*Store, context.Context, Broker) error                                              = (*Store).RegisterBroker
	_ func(*Store, context.Context, string, int32, []int32, map[string]string) (*Topic, error) = (*Store).CreateTopic
	_ func(*Store, context.Context, string) (UUID, error)                                      = (*Store).DeleteTopic
	_ func(*Store, context.Context, string, int32) error                                       = (*Store).CreatePartitions
	_ func(*Store, context.Context, string, map[string]string, []string) error                 = (*Store).AlterTopicConfigs
	_ func(*Store, context.Context, string, map[string]string, []string) error                 = (*Store).AlterBrokerConfigs
	_ func(*Store, context.Context, string, map[string]string, []string) error                 = (*Store).AlterGroupConfigs
	_ func(*Store, context.Context, string, int16) error                                       = (*Store).SetFeature
	_ func(*Store, context.Context, int64) (int64, error)                                      = (*Store).AllocateProducerIDs
	_ func(*Store, context.Context, uint64) error                                              = (*Store).WaitApplied
)
