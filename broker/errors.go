package broker

import "github.com/twmb/franz-go/pkg/kerr"

// Kafka error codes used by the handlers.
var (
	errUnknownTopicOrPartition    = kerr.UnknownTopicOrPartition.Code
	errInvalidRequest             = kerr.InvalidRequest.Code
	errUnsupportedVersion         = kerr.UnsupportedVersion.Code
	errRebootstrapRequired        = kerr.RebootstrapRequired.Code
	errInvalidTopic               = kerr.InvalidTopicException.Code
	errTopicAuthorizationFailed   = kerr.TopicAuthorizationFailed.Code
	errInvalidUpdateVersion       = kerr.InvalidUpdateVersion.Code
	errUnknownServerError         = kerr.UnknownServerError.Code
	errClusterAuthorizationFailed = kerr.ClusterAuthorizationFailed.Code
	errUnknownTopicID             = kerr.UnknownTopicID.Code
	errTopicAlreadyExists         = kerr.TopicAlreadyExists.Code
	errInvalidPartitions          = kerr.InvalidPartitions.Code
	errInvalidReplicationFactor   = kerr.InvalidReplicationFactor.Code
	errInvalidConfig              = kerr.InvalidConfig.Code
	errNotController              = kerr.NotController.Code
	errNotLeaderOrFollower        = kerr.NotLeaderForPartition.Code
	errOffsetOutOfRange           = kerr.OffsetOutOfRange.Code
	errKafkaStorage               = kerr.KafkaStorageError.Code
	errInvalidRequiredAcks        = kerr.InvalidRequiredAcks.Code
	errCorruptMessage             = kerr.CorruptMessage.Code
	errInvalidRecord              = kerr.InvalidRecord.Code
	errFetchSessionIDNotFound     = kerr.FetchSessionIDNotFound.Code
	errInvalidFetchSessionEpoch   = kerr.InvalidFetchSessionEpoch.Code
	errRequestTimedOut            = kerr.RequestTimedOut.Code
	errPolicyViolation            = kerr.PolicyViolation.Code
	errTopicDeletionDisabled      = kerr.TopicDeletionDisabled.Code
	errInvalidTxnTimeout          = kerr.InvalidTransactionTimeout.Code
	errTransactionalIDAuthFailed  = kerr.TransactionalIDAuthorizationFailed.Code
)

// errorMessage is the default message Kafka sends with an error code.
func errorMessage(code int16) string {
	if err := kerr.ErrorForCode(code); err != nil {
		if ke, ok := err.(*kerr.Error); ok {
			return ke.Description
		}
		return err.Error()
	}
	return ""
}
