package kerr

// The table below is checked against Kafka by kerr_test.go: every constant's value, Kafka
// name and retriable flag must equal the dump of org.apache.kafka.common.protocol.Errors in
// conformance/vectors/errors/, and every doc comment must match the table.

// Every error code Kafka defines, in code order.
const (
	// UnknownServerError is Kafka's UNKNOWN_SERVER_ERROR (code -1): the broker hit an
	// unexpected error while handling the request.
	UnknownServerError Code = -1
	// None is Kafka's NONE (code 0): no error.
	None Code = 0
	// OffsetOutOfRange is Kafka's OFFSET_OUT_OF_RANGE (code 1): the offset lies outside the
	// partition's log.
	OffsetOutOfRange Code = 1
	// CorruptMessage is Kafka's CORRUPT_MESSAGE (code 2, retriable): a record or batch is
	// corrupt (bad checksum or size, or no key on a compacted topic).
	CorruptMessage Code = 2
	// UnknownTopicOrPartition is Kafka's UNKNOWN_TOPIC_OR_PARTITION (code 3, retriable):
	// this broker does not host the topic or partition.
	UnknownTopicOrPartition Code = 3
	// InvalidFetchSize is Kafka's INVALID_FETCH_SIZE (code 4): the fetch size is invalid.
	InvalidFetchSize Code = 4
	// LeaderNotAvailable is Kafka's LEADER_NOT_AVAILABLE (code 5, retriable): the partition
	// has no leader right now, usually during an election.
	LeaderNotAvailable Code = 5
	// NotLeaderOrFollower is Kafka's NOT_LEADER_OR_FOLLOWER (code 6, retriable): this broker
	// is not the partition's leader, or not a replica of it.
	NotLeaderOrFollower Code = 6
	// RequestTimedOut is Kafka's REQUEST_TIMED_OUT (code 7, retriable): the request timed
	// out on the broker.
	RequestTimedOut Code = 7
	// BrokerNotAvailable is Kafka's BROKER_NOT_AVAILABLE (code 8): the broker is not
	// available.
	BrokerNotAvailable Code = 8
	// ReplicaNotAvailable is Kafka's REPLICA_NOT_AVAILABLE (code 9, retriable): a replica of
	// the partition is not available.
	ReplicaNotAvailable Code = 9
	// MessageTooLarge is Kafka's MESSAGE_TOO_LARGE (code 10): a record is larger than the
	// broker accepts.
	MessageTooLarge Code = 10
	// StaleControllerEpoch is Kafka's STALE_CONTROLLER_EPOCH (code 11): the controller epoch
	// is stale; another broker is now controller.
	StaleControllerEpoch Code = 11
	// OffsetMetadataTooLarge is Kafka's OFFSET_METADATA_TOO_LARGE (code 12): the metadata
	// string of an offset commit is too long.
	OffsetMetadataTooLarge Code = 12
	// NetworkException is Kafka's NETWORK_EXCEPTION (code 13, retriable): the connection
	// closed before a response arrived.
	NetworkException Code = 13
	// CoordinatorLoadInProgress is Kafka's COORDINATOR_LOAD_IN_PROGRESS (code 14,
	// retriable): the coordinator is still loading its state.
	CoordinatorLoadInProgress Code = 14
	// CoordinatorNotAvailable is Kafka's COORDINATOR_NOT_AVAILABLE (code 15, retriable): the
	// coordinator is not available.
	CoordinatorNotAvailable Code = 15
	// NotCoordinator is Kafka's NOT_COORDINATOR (code 16, retriable): this broker is not the
	// coordinator for the group or transactional id.
	NotCoordinator Code = 16
	// InvalidTopicException is Kafka's INVALID_TOPIC_EXCEPTION (code 17): the topic name is
	// invalid, or the topic cannot be used this way.
	InvalidTopicException Code = 17
	// RecordListTooLarge is Kafka's RECORD_LIST_TOO_LARGE (code 18): a record batch is
	// larger than the broker's log segment size.
	RecordListTooLarge Code = 18
	// NotEnoughReplicas is Kafka's NOT_ENOUGH_REPLICAS (code 19, retriable): too few in-sync
	// replicas; the records were not written.
	NotEnoughReplicas Code = 19
	// NotEnoughReplicasAfterAppend is Kafka's NOT_ENOUGH_REPLICAS_AFTER_APPEND (code 20,
	// retriable): the records were written but fewer in-sync replicas than required hold
	// them.
	NotEnoughReplicasAfterAppend Code = 20
	// InvalidRequiredAcks is Kafka's INVALID_REQUIRED_ACKS (code 21): the acks value is
	// invalid.
	InvalidRequiredAcks Code = 21
	// IllegalGeneration is Kafka's ILLEGAL_GENERATION (code 22): the group generation id is
	// not the current one.
	IllegalGeneration Code = 22
	// InconsistentGroupProtocol is Kafka's INCONSISTENT_GROUP_PROTOCOL (code 23): the
	// member's protocol type or protocols do not fit the group's.
	InconsistentGroupProtocol Code = 23
	// InvalidGroupID is Kafka's INVALID_GROUP_ID (code 24): the group id is invalid.
	InvalidGroupID Code = 24
	// UnknownMemberID is Kafka's UNKNOWN_MEMBER_ID (code 25): the coordinator does not know
	// this member id.
	UnknownMemberID Code = 25
	// InvalidSessionTimeout is Kafka's INVALID_SESSION_TIMEOUT (code 26): the session
	// timeout is outside the range the broker allows.
	InvalidSessionTimeout Code = 26
	// RebalanceInProgress is Kafka's REBALANCE_IN_PROGRESS (code 27): the group is
	// rebalancing; the member must rejoin.
	RebalanceInProgress Code = 27
	// InvalidCommitOffsetSize is Kafka's INVALID_COMMIT_OFFSET_SIZE (code 28): the size of
	// the offset commit data is invalid.
	InvalidCommitOffsetSize Code = 28
	// TopicAuthorizationFailed is Kafka's TOPIC_AUTHORIZATION_FAILED (code 29): not
	// authorized to access the topic.
	TopicAuthorizationFailed Code = 29
	// GroupAuthorizationFailed is Kafka's GROUP_AUTHORIZATION_FAILED (code 30): not
	// authorized to access the group.
	GroupAuthorizationFailed Code = 30
	// ClusterAuthorizationFailed is Kafka's CLUSTER_AUTHORIZATION_FAILED (code 31): not
	// authorized for the cluster-level operation.
	ClusterAuthorizationFailed Code = 31
	// InvalidTimestamp is Kafka's INVALID_TIMESTAMP (code 32): a record timestamp is outside
	// the accepted range.
	InvalidTimestamp Code = 32
	// UnsupportedSaslMechanism is Kafka's UNSUPPORTED_SASL_MECHANISM (code 33): the broker
	// does not enable this SASL mechanism.
	UnsupportedSaslMechanism Code = 33
	// IllegalSaslState is Kafka's ILLEGAL_SASL_STATE (code 34): the request is not allowed
	// in the current SASL state.
	IllegalSaslState Code = 34
	// UnsupportedVersion is Kafka's UNSUPPORTED_VERSION (code 35): the broker does not
	// support this API version.
	UnsupportedVersion Code = 35
	// TopicAlreadyExists is Kafka's TOPIC_ALREADY_EXISTS (code 36): a topic with this name
	// already exists.
	TopicAlreadyExists Code = 36
	// InvalidPartitions is Kafka's INVALID_PARTITIONS (code 37): the number of partitions is
	// invalid.
	InvalidPartitions Code = 37
	// InvalidReplicationFactor is Kafka's INVALID_REPLICATION_FACTOR (code 38): the
	// replication factor is invalid for this cluster.
	InvalidReplicationFactor Code = 38
	// InvalidReplicaAssignment is Kafka's INVALID_REPLICA_ASSIGNMENT (code 39): the replica
	// assignment is invalid.
	InvalidReplicaAssignment Code = 39
	// InvalidConfig is Kafka's INVALID_CONFIG (code 40): the configuration is invalid.
	InvalidConfig Code = 40
	// NotController is Kafka's NOT_CONTROLLER (code 41, retriable): this broker is not the
	// active controller.
	NotController Code = 41
	// InvalidRequest is Kafka's INVALID_REQUEST (code 42): the request is malformed or this
	// broker cannot handle it.
	InvalidRequest Code = 42
	// UnsupportedForMessageFormat is Kafka's UNSUPPORTED_FOR_MESSAGE_FORMAT (code 43): the
	// request needs a newer message format than the broker's.
	UnsupportedForMessageFormat Code = 43
	// PolicyViolation is Kafka's POLICY_VIOLATION (code 44): the request breaks a policy
	// configured on the broker.
	PolicyViolation Code = 44
	// OutOfOrderSequenceNumber is Kafka's OUT_OF_ORDER_SEQUENCE_NUMBER (code 45): the
	// producer's sequence number is out of order.
	OutOfOrderSequenceNumber Code = 45
	// DuplicateSequenceNumber is Kafka's DUPLICATE_SEQUENCE_NUMBER (code 46): the producer's
	// sequence number was already used.
	DuplicateSequenceNumber Code = 46
	// InvalidProducerEpoch is Kafka's INVALID_PRODUCER_EPOCH (code 47): the producer epoch
	// is older than the current one.
	InvalidProducerEpoch Code = 47
	// InvalidTxnState is Kafka's INVALID_TXN_STATE (code 48): the operation is not valid in
	// the transaction's current state.
	InvalidTxnState Code = 48
	// InvalidProducerIDMapping is Kafka's INVALID_PRODUCER_ID_MAPPING (code 49): the
	// producer id is not the one assigned to this transactional id.
	InvalidProducerIDMapping Code = 49
	// InvalidTransactionTimeout is Kafka's INVALID_TRANSACTION_TIMEOUT (code 50): the
	// transaction timeout exceeds the broker's maximum.
	InvalidTransactionTimeout Code = 50
	// ConcurrentTransactions is Kafka's CONCURRENT_TRANSACTIONS (code 51, retriable):
	// another operation on the same transaction is still running.
	ConcurrentTransactions Code = 51
	// TransactionCoordinatorFenced is Kafka's TRANSACTION_COORDINATOR_FENCED (code 52): the
	// transaction coordinator is no longer the current one.
	TransactionCoordinatorFenced Code = 52
	// TransactionalIDAuthorizationFailed is Kafka's TRANSACTIONAL_ID_AUTHORIZATION_FAILED
	// (code 53): not authorized to use the transactional id.
	TransactionalIDAuthorizationFailed Code = 53
	// SecurityDisabled is Kafka's SECURITY_DISABLED (code 54): security features are
	// disabled on the broker.
	SecurityDisabled Code = 54
	// OperationNotAttempted is Kafka's OPERATION_NOT_ATTEMPTED (code 55): the operation was
	// skipped because another one in the same request failed.
	OperationNotAttempted Code = 55
	// KafkaStorageError is Kafka's KAFKA_STORAGE_ERROR (code 56, retriable): the broker
	// could not access a log directory.
	KafkaStorageError Code = 56
	// LogDirNotFound is Kafka's LOG_DIR_NOT_FOUND (code 57): the log directory is not
	// configured on the broker.
	LogDirNotFound Code = 57
	// SaslAuthenticationFailed is Kafka's SASL_AUTHENTICATION_FAILED (code 58): SASL
	// authentication failed.
	SaslAuthenticationFailed Code = 58
	// UnknownProducerID is Kafka's UNKNOWN_PRODUCER_ID (code 59): the broker holds no state
	// for this producer id.
	UnknownProducerID Code = 59
	// ReassignmentInProgress is Kafka's REASSIGNMENT_IN_PROGRESS (code 60): a partition
	// reassignment is in progress.
	ReassignmentInProgress Code = 60
	// DelegationTokenAuthDisabled is Kafka's DELEGATION_TOKEN_AUTH_DISABLED (code 61):
	// delegation tokens are disabled.
	DelegationTokenAuthDisabled Code = 61
	// DelegationTokenNotFound is Kafka's DELEGATION_TOKEN_NOT_FOUND (code 62): the
	// delegation token does not exist.
	DelegationTokenNotFound Code = 62
	// DelegationTokenOwnerMismatch is Kafka's DELEGATION_TOKEN_OWNER_MISMATCH (code 63): the
	// principal is neither owner nor renewer of the token.
	DelegationTokenOwnerMismatch Code = 63
	// DelegationTokenRequestNotAllowed is Kafka's DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (code
	// 64): delegation token requests are not allowed on this kind of connection.
	DelegationTokenRequestNotAllowed Code = 64
	// DelegationTokenAuthorizationFailed is Kafka's DELEGATION_TOKEN_AUTHORIZATION_FAILED
	// (code 65): not authorized for the delegation token.
	DelegationTokenAuthorizationFailed Code = 65
	// DelegationTokenExpired is Kafka's DELEGATION_TOKEN_EXPIRED (code 66): the delegation
	// token has expired.
	DelegationTokenExpired Code = 66
	// InvalidPrincipalType is Kafka's INVALID_PRINCIPAL_TYPE (code 67): the principal type
	// is not supported.
	InvalidPrincipalType Code = 67
	// NonEmptyGroup is Kafka's NON_EMPTY_GROUP (code 68): the group still has members.
	NonEmptyGroup Code = 68
	// GroupIDNotFound is Kafka's GROUP_ID_NOT_FOUND (code 69): the group does not exist.
	GroupIDNotFound Code = 69
	// FetchSessionIDNotFound is Kafka's FETCH_SESSION_ID_NOT_FOUND (code 70, retriable): the
	// fetch session does not exist.
	FetchSessionIDNotFound Code = 70
	// InvalidFetchSessionEpoch is Kafka's INVALID_FETCH_SESSION_EPOCH (code 71, retriable):
	// the fetch session epoch is wrong.
	InvalidFetchSessionEpoch Code = 71
	// ListenerNotFound is Kafka's LISTENER_NOT_FOUND (code 72, retriable): the leader has no
	// listener matching the one the request arrived on.
	ListenerNotFound Code = 72
	// TopicDeletionDisabled is Kafka's TOPIC_DELETION_DISABLED (code 73): topic deletion is
	// disabled.
	TopicDeletionDisabled Code = 73
	// FencedLeaderEpoch is Kafka's FENCED_LEADER_EPOCH (code 74, retriable): the request's
	// leader epoch is older than the broker's.
	FencedLeaderEpoch Code = 74
	// UnknownLeaderEpoch is Kafka's UNKNOWN_LEADER_EPOCH (code 75, retriable): the request's
	// leader epoch is newer than the broker's.
	UnknownLeaderEpoch Code = 75
	// UnsupportedCompressionType is Kafka's UNSUPPORTED_COMPRESSION_TYPE (code 76): the
	// client does not support the partition's compression type.
	UnsupportedCompressionType Code = 76
	// StaleBrokerEpoch is Kafka's STALE_BROKER_EPOCH (code 77): the broker epoch is stale.
	StaleBrokerEpoch Code = 77
	// OffsetNotAvailable is Kafka's OFFSET_NOT_AVAILABLE (code 78, retriable): the offset is
	// not available yet after a leader change.
	OffsetNotAvailable Code = 78
	// MemberIDRequired is Kafka's MEMBER_ID_REQUIRED (code 79): the member must join again
	// with the member id it was given.
	MemberIDRequired Code = 79
	// PreferredLeaderNotAvailable is Kafka's PREFERRED_LEADER_NOT_AVAILABLE (code 80,
	// retriable): the preferred leader is not available.
	PreferredLeaderNotAvailable Code = 80
	// GroupMaxSizeReached is Kafka's GROUP_MAX_SIZE_REACHED (code 81): the group has reached
	// its maximum size.
	GroupMaxSizeReached Code = 81
	// FencedInstanceID is Kafka's FENCED_INSTANCE_ID (code 82): another member with the same
	// group instance id fenced this static member.
	FencedInstanceID Code = 82
	// EligibleLeadersNotAvailable is Kafka's ELIGIBLE_LEADERS_NOT_AVAILABLE (code 83,
	// retriable): no eligible leader is available for the partition.
	EligibleLeadersNotAvailable Code = 83
	// ElectionNotNeeded is Kafka's ELECTION_NOT_NEEDED (code 84, retriable): the partition
	// needs no leader election.
	ElectionNotNeeded Code = 84
	// NoReassignmentInProgress is Kafka's NO_REASSIGNMENT_IN_PROGRESS (code 85): no
	// partition reassignment is in progress.
	NoReassignmentInProgress Code = 85
	// GroupSubscribedToTopic is Kafka's GROUP_SUBSCRIBED_TO_TOPIC (code 86): the group is
	// subscribed to the topic, so its offsets cannot be deleted.
	GroupSubscribedToTopic Code = 86
	// InvalidRecord is Kafka's INVALID_RECORD (code 87): the broker rejected a record as
	// invalid.
	InvalidRecord Code = 87
	// UnstableOffsetCommit is Kafka's UNSTABLE_OFFSET_COMMIT (code 88, retriable): pending
	// transactional offset commits must complete first.
	UnstableOffsetCommit Code = 88
	// ThrottlingQuotaExceeded is Kafka's THROTTLING_QUOTA_EXCEEDED (code 89, retriable): the
	// throttling quota is exceeded.
	ThrottlingQuotaExceeded Code = 89
	// ProducerFenced is Kafka's PRODUCER_FENCED (code 90): a newer producer with the same
	// transactional id fenced this one.
	ProducerFenced Code = 90
	// ResourceNotFound is Kafka's RESOURCE_NOT_FOUND (code 91): a referenced resource does
	// not exist.
	ResourceNotFound Code = 91
	// DuplicateResource is Kafka's DUPLICATE_RESOURCE (code 92): a resource is referenced
	// more than once.
	DuplicateResource Code = 92
	// UnacceptableCredential is Kafka's UNACCEPTABLE_CREDENTIAL (code 93): the credential
	// does not meet the requirements.
	UnacceptableCredential Code = 93
	// InconsistentVoterSet is Kafka's INCONSISTENT_VOTER_SET (code 94): the sender or
	// receiver is not an expected voter.
	InconsistentVoterSet Code = 94
	// InvalidUpdateVersion is Kafka's INVALID_UPDATE_VERSION (code 95): the feature update
	// version is invalid.
	InvalidUpdateVersion Code = 95
	// FeatureUpdateFailed is Kafka's FEATURE_UPDATE_FAILED (code 96): updating the finalized
	// features failed.
	FeatureUpdateFailed Code = 96
	// PrincipalDeserializationFailure is Kafka's PRINCIPAL_DESERIALIZATION_FAILURE (code
	// 97): the principal of a forwarded request could not be decoded.
	PrincipalDeserializationFailure Code = 97
	// SnapshotNotFound is Kafka's SNAPSHOT_NOT_FOUND (code 98): the snapshot does not exist.
	SnapshotNotFound Code = 98
	// PositionOutOfRange is Kafka's POSITION_OUT_OF_RANGE (code 99): the position lies
	// outside the snapshot.
	PositionOutOfRange Code = 99
	// UnknownTopicID is Kafka's UNKNOWN_TOPIC_ID (code 100, retriable): this broker does not
	// host a topic with this id.
	UnknownTopicID Code = 100
	// DuplicateBrokerRegistration is Kafka's DUPLICATE_BROKER_REGISTRATION (code 101): the
	// broker id is already in use.
	DuplicateBrokerRegistration Code = 101
	// BrokerIDNotRegistered is Kafka's BROKER_ID_NOT_REGISTERED (code 102): the broker id is
	// not registered.
	BrokerIDNotRegistered Code = 102
	// InconsistentTopicID is Kafka's INCONSISTENT_TOPIC_ID (code 103, retriable): the topic
	// id does not match the log's.
	InconsistentTopicID Code = 103
	// InconsistentClusterID is Kafka's INCONSISTENT_CLUSTER_ID (code 104): the cluster id
	// does not match the server's.
	InconsistentClusterID Code = 104
	// TransactionalIDNotFound is Kafka's TRANSACTIONAL_ID_NOT_FOUND (code 105): the
	// transactional id does not exist.
	TransactionalIDNotFound Code = 105
	// FetchSessionTopicIDError is Kafka's FETCH_SESSION_TOPIC_ID_ERROR (code 106,
	// retriable): the fetch session uses topic ids inconsistently.
	FetchSessionTopicIDError Code = 106
	// IneligibleReplica is Kafka's INELIGIBLE_REPLICA (code 107): the proposed in-sync
	// replica set holds an ineligible replica.
	IneligibleReplica Code = 107
	// NewLeaderElected is Kafka's NEW_LEADER_ELECTED (code 108): the partition state was
	// updated but the leader has changed.
	NewLeaderElected Code = 108
	// OffsetMovedToTieredStorage is Kafka's OFFSET_MOVED_TO_TIERED_STORAGE (code 109): the
	// offset has moved to tiered storage.
	OffsetMovedToTieredStorage Code = 109
	// FencedMemberEpoch is Kafka's FENCED_MEMBER_EPOCH (code 110): the member epoch is
	// fenced; the member must release its partitions and rejoin.
	FencedMemberEpoch Code = 110
	// UnreleasedInstanceID is Kafka's UNRELEASED_INSTANCE_ID (code 111): another group
	// member still holds the instance id.
	UnreleasedInstanceID Code = 111
	// UnsupportedAssignor is Kafka's UNSUPPORTED_ASSIGNOR (code 112): the group does not
	// support the assignor or its version.
	UnsupportedAssignor Code = 112
	// StaleMemberEpoch is Kafka's STALE_MEMBER_EPOCH (code 113): the member epoch is stale.
	StaleMemberEpoch Code = 113
	// MismatchedEndpointType is Kafka's MISMATCHED_ENDPOINT_TYPE (code 114): the request
	// went to the wrong kind of endpoint.
	MismatchedEndpointType Code = 114
	// UnsupportedEndpointType is Kafka's UNSUPPORTED_ENDPOINT_TYPE (code 115): the endpoint
	// type is not supported.
	UnsupportedEndpointType Code = 115
	// UnknownControllerID is Kafka's UNKNOWN_CONTROLLER_ID (code 116): the controller id is
	// unknown.
	UnknownControllerID Code = 116
	// UnknownSubscriptionID is Kafka's UNKNOWN_SUBSCRIPTION_ID (code 117): the telemetry
	// subscription id is unknown or outdated.
	UnknownSubscriptionID Code = 117
	// TelemetryTooLarge is Kafka's TELEMETRY_TOO_LARGE (code 118): the telemetry push is
	// larger than the broker accepts.
	TelemetryTooLarge Code = 118
	// InvalidRegistration is Kafka's INVALID_REGISTRATION (code 119): the controller found
	// the broker registration invalid.
	InvalidRegistration Code = 119
	// TransactionAbortable is Kafka's TRANSACTION_ABORTABLE (code 120): the transaction
	// failed; abort it to go on using the transactional id.
	TransactionAbortable Code = 120
	// InvalidRecordState is Kafka's INVALID_RECORD_STATE (code 121): the record's delivery
	// state does not allow this acknowledgement.
	InvalidRecordState Code = 121
	// ShareSessionNotFound is Kafka's SHARE_SESSION_NOT_FOUND (code 122, retriable): the
	// share session does not exist.
	ShareSessionNotFound Code = 122
	// InvalidShareSessionEpoch is Kafka's INVALID_SHARE_SESSION_EPOCH (code 123, retriable):
	// the share session epoch is wrong.
	InvalidShareSessionEpoch Code = 123
	// FencedStateEpoch is Kafka's FENCED_STATE_EPOCH (code 124): the share state epoch does
	// not match the coordinator's.
	FencedStateEpoch Code = 124
	// InvalidVoterKey is Kafka's INVALID_VOTER_KEY (code 125): the voter key does not match
	// the receiving replica.
	InvalidVoterKey Code = 125
	// DuplicateVoter is Kafka's DUPLICATE_VOTER (code 126): the voter is already in the
	// voter set.
	DuplicateVoter Code = 126
	// VoterNotFound is Kafka's VOTER_NOT_FOUND (code 127): the voter is not in the voter
	// set.
	VoterNotFound Code = 127
	// InvalidRegularExpression is Kafka's INVALID_REGULAR_EXPRESSION (code 128): the regular
	// expression is invalid.
	InvalidRegularExpression Code = 128
	// RebootstrapRequired is Kafka's REBOOTSTRAP_REQUIRED (code 129): the client's metadata
	// is stale; it must bootstrap again.
	RebootstrapRequired Code = 129
	// StreamsInvalidTopology is Kafka's STREAMS_INVALID_TOPOLOGY (code 130): the streams
	// topology is invalid.
	StreamsInvalidTopology Code = 130
	// StreamsInvalidTopologyEpoch is Kafka's STREAMS_INVALID_TOPOLOGY_EPOCH (code 131): the
	// streams topology epoch is invalid.
	StreamsInvalidTopologyEpoch Code = 131
	// StreamsTopologyFenced is Kafka's STREAMS_TOPOLOGY_FENCED (code 132): the streams
	// topology epoch is outdated.
	StreamsTopologyFenced Code = 132
	// ShareSessionLimitReached is Kafka's SHARE_SESSION_LIMIT_REACHED (code 133, retriable):
	// the broker's limit of share sessions is reached.
	ShareSessionLimitReached Code = 133
	// GroupDeletionFailed is Kafka's GROUP_DELETION_FAILED (code 134): deleting the group
	// failed; the per-group result says why.
	GroupDeletionFailed Code = 134
	// StreamsTopologyDescriptionUpdateFailed is Kafka's
	// STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED (code 135): updating the streams topology
	// description failed.
	StreamsTopologyDescriptionUpdateFailed Code = 135
	// ControllerIDNotRegistered is Kafka's CONTROLLER_ID_NOT_REGISTERED (code 136): the
	// controller id is not registered.
	ControllerIDNotRegistered Code = 136
)

// table holds one entry per known code, in code order: table[i].code == minCode+i.
var table = [...]entry{
	{UnknownServerError, "UNKNOWN_SERVER_ERROR", false, "the broker hit an unexpected error while handling the request"},
	{None, "NONE", false, "no error"},
	{OffsetOutOfRange, "OFFSET_OUT_OF_RANGE", false, "the offset lies outside the partition's log"},
	{CorruptMessage, "CORRUPT_MESSAGE", true, "a record or batch is corrupt (bad checksum or size, or no key on a compacted topic)"},
	{UnknownTopicOrPartition, "UNKNOWN_TOPIC_OR_PARTITION", true, "this broker does not host the topic or partition"},
	{InvalidFetchSize, "INVALID_FETCH_SIZE", false, "the fetch size is invalid"},
	{LeaderNotAvailable, "LEADER_NOT_AVAILABLE", true, "the partition has no leader right now, usually during an election"},
	{NotLeaderOrFollower, "NOT_LEADER_OR_FOLLOWER", true, "this broker is not the partition's leader, or not a replica of it"},
	{RequestTimedOut, "REQUEST_TIMED_OUT", true, "the request timed out on the broker"},
	{BrokerNotAvailable, "BROKER_NOT_AVAILABLE", false, "the broker is not available"},
	{ReplicaNotAvailable, "REPLICA_NOT_AVAILABLE", true, "a replica of the partition is not available"},
	{MessageTooLarge, "MESSAGE_TOO_LARGE", false, "a record is larger than the broker accepts"},
	{StaleControllerEpoch, "STALE_CONTROLLER_EPOCH", false, "the controller epoch is stale; another broker is now controller"},
	{OffsetMetadataTooLarge, "OFFSET_METADATA_TOO_LARGE", false, "the metadata string of an offset commit is too long"},
	{NetworkException, "NETWORK_EXCEPTION", true, "the connection closed before a response arrived"},
	{CoordinatorLoadInProgress, "COORDINATOR_LOAD_IN_PROGRESS", true, "the coordinator is still loading its state"},
	{CoordinatorNotAvailable, "COORDINATOR_NOT_AVAILABLE", true, "the coordinator is not available"},
	{NotCoordinator, "NOT_COORDINATOR", true, "this broker is not the coordinator for the group or transactional id"},
	{InvalidTopicException, "INVALID_TOPIC_EXCEPTION", false, "the topic name is invalid, or the topic cannot be used this way"},
	{RecordListTooLarge, "RECORD_LIST_TOO_LARGE", false, "a record batch is larger than the broker's log segment size"},
	{NotEnoughReplicas, "NOT_ENOUGH_REPLICAS", true, "too few in-sync replicas; the records were not written"},
	{NotEnoughReplicasAfterAppend, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", true, "the records were written but fewer in-sync replicas than required hold them"},
	{InvalidRequiredAcks, "INVALID_REQUIRED_ACKS", false, "the acks value is invalid"},
	{IllegalGeneration, "ILLEGAL_GENERATION", false, "the group generation id is not the current one"},
	{InconsistentGroupProtocol, "INCONSISTENT_GROUP_PROTOCOL", false, "the member's protocol type or protocols do not fit the group's"},
	{InvalidGroupID, "INVALID_GROUP_ID", false, "the group id is invalid"},
	{UnknownMemberID, "UNKNOWN_MEMBER_ID", false, "the coordinator does not know this member id"},
	{InvalidSessionTimeout, "INVALID_SESSION_TIMEOUT", false, "the session timeout is outside the range the broker allows"},
	{RebalanceInProgress, "REBALANCE_IN_PROGRESS", false, "the group is rebalancing; the member must rejoin"},
	{InvalidCommitOffsetSize, "INVALID_COMMIT_OFFSET_SIZE", false, "the size of the offset commit data is invalid"},
	{TopicAuthorizationFailed, "TOPIC_AUTHORIZATION_FAILED", false, "not authorized to access the topic"},
	{GroupAuthorizationFailed, "GROUP_AUTHORIZATION_FAILED", false, "not authorized to access the group"},
	{ClusterAuthorizationFailed, "CLUSTER_AUTHORIZATION_FAILED", false, "not authorized for the cluster-level operation"},
	{InvalidTimestamp, "INVALID_TIMESTAMP", false, "a record timestamp is outside the accepted range"},
	{UnsupportedSaslMechanism, "UNSUPPORTED_SASL_MECHANISM", false, "the broker does not enable this SASL mechanism"},
	{IllegalSaslState, "ILLEGAL_SASL_STATE", false, "the request is not allowed in the current SASL state"},
	{UnsupportedVersion, "UNSUPPORTED_VERSION", false, "the broker does not support this API version"},
	{TopicAlreadyExists, "TOPIC_ALREADY_EXISTS", false, "a topic with this name already exists"},
	{InvalidPartitions, "INVALID_PARTITIONS", false, "the number of partitions is invalid"},
	{InvalidReplicationFactor, "INVALID_REPLICATION_FACTOR", false, "the replication factor is invalid for this cluster"},
	{InvalidReplicaAssignment, "INVALID_REPLICA_ASSIGNMENT", false, "the replica assignment is invalid"},
	{InvalidConfig, "INVALID_CONFIG", false, "the configuration is invalid"},
	{NotController, "NOT_CONTROLLER", true, "this broker is not the active controller"},
	{InvalidRequest, "INVALID_REQUEST", false, "the request is malformed or this broker cannot handle it"},
	{UnsupportedForMessageFormat, "UNSUPPORTED_FOR_MESSAGE_FORMAT", false, "the request needs a newer message format than the broker's"},
	{PolicyViolation, "POLICY_VIOLATION", false, "the request breaks a policy configured on the broker"},
	{OutOfOrderSequenceNumber, "OUT_OF_ORDER_SEQUENCE_NUMBER", false, "the producer's sequence number is out of order"},
	{DuplicateSequenceNumber, "DUPLICATE_SEQUENCE_NUMBER", false, "the producer's sequence number was already used"},
	{InvalidProducerEpoch, "INVALID_PRODUCER_EPOCH", false, "the producer epoch is older than the current one"},
	{InvalidTxnState, "INVALID_TXN_STATE", false, "the operation is not valid in the transaction's current state"},
	{InvalidProducerIDMapping, "INVALID_PRODUCER_ID_MAPPING", false, "the producer id is not the one assigned to this transactional id"},
	{InvalidTransactionTimeout, "INVALID_TRANSACTION_TIMEOUT", false, "the transaction timeout exceeds the broker's maximum"},
	{ConcurrentTransactions, "CONCURRENT_TRANSACTIONS", true, "another operation on the same transaction is still running"},
	{TransactionCoordinatorFenced, "TRANSACTION_COORDINATOR_FENCED", false, "the transaction coordinator is no longer the current one"},
	{TransactionalIDAuthorizationFailed, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", false, "not authorized to use the transactional id"},
	{SecurityDisabled, "SECURITY_DISABLED", false, "security features are disabled on the broker"},
	{OperationNotAttempted, "OPERATION_NOT_ATTEMPTED", false, "the operation was skipped because another one in the same request failed"},
	{KafkaStorageError, "KAFKA_STORAGE_ERROR", true, "the broker could not access a log directory"},
	{LogDirNotFound, "LOG_DIR_NOT_FOUND", false, "the log directory is not configured on the broker"},
	{SaslAuthenticationFailed, "SASL_AUTHENTICATION_FAILED", false, "SASL authentication failed"},
	{UnknownProducerID, "UNKNOWN_PRODUCER_ID", false, "the broker holds no state for this producer id"},
	{ReassignmentInProgress, "REASSIGNMENT_IN_PROGRESS", false, "a partition reassignment is in progress"},
	{DelegationTokenAuthDisabled, "DELEGATION_TOKEN_AUTH_DISABLED", false, "delegation tokens are disabled"},
	{DelegationTokenNotFound, "DELEGATION_TOKEN_NOT_FOUND", false, "the delegation token does not exist"},
	{DelegationTokenOwnerMismatch, "DELEGATION_TOKEN_OWNER_MISMATCH", false, "the principal is neither owner nor renewer of the token"},
	{DelegationTokenRequestNotAllowed, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", false, "delegation token requests are not allowed on this kind of connection"},
	{DelegationTokenAuthorizationFailed, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", false, "not authorized for the delegation token"},
	{DelegationTokenExpired, "DELEGATION_TOKEN_EXPIRED", false, "the delegation token has expired"},
	{InvalidPrincipalType, "INVALID_PRINCIPAL_TYPE", false, "the principal type is not supported"},
	{NonEmptyGroup, "NON_EMPTY_GROUP", false, "the group still has members"},
	{GroupIDNotFound, "GROUP_ID_NOT_FOUND", false, "the group does not exist"},
	{FetchSessionIDNotFound, "FETCH_SESSION_ID_NOT_FOUND", true, "the fetch session does not exist"},
	{InvalidFetchSessionEpoch, "INVALID_FETCH_SESSION_EPOCH", true, "the fetch session epoch is wrong"},
	{ListenerNotFound, "LISTENER_NOT_FOUND", true, "the leader has no listener matching the one the request arrived on"},
	{TopicDeletionDisabled, "TOPIC_DELETION_DISABLED", false, "topic deletion is disabled"},
	{FencedLeaderEpoch, "FENCED_LEADER_EPOCH", true, "the request's leader epoch is older than the broker's"},
	{UnknownLeaderEpoch, "UNKNOWN_LEADER_EPOCH", true, "the request's leader epoch is newer than the broker's"},
	{UnsupportedCompressionType, "UNSUPPORTED_COMPRESSION_TYPE", false, "the client does not support the partition's compression type"},
	{StaleBrokerEpoch, "STALE_BROKER_EPOCH", false, "the broker epoch is stale"},
	{OffsetNotAvailable, "OFFSET_NOT_AVAILABLE", true, "the offset is not available yet after a leader change"},
	{MemberIDRequired, "MEMBER_ID_REQUIRED", false, "the member must join again with the member id it was given"},
	{PreferredLeaderNotAvailable, "PREFERRED_LEADER_NOT_AVAILABLE", true, "the preferred leader is not available"},
	{GroupMaxSizeReached, "GROUP_MAX_SIZE_REACHED", false, "the group has reached its maximum size"},
	{FencedInstanceID, "FENCED_INSTANCE_ID", false, "another member with the same group instance id fenced this static member"},
	{EligibleLeadersNotAvailable, "ELIGIBLE_LEADERS_NOT_AVAILABLE", true, "no eligible leader is available for the partition"},
	{ElectionNotNeeded, "ELECTION_NOT_NEEDED", true, "the partition needs no leader election"},
	{NoReassignmentInProgress, "NO_REASSIGNMENT_IN_PROGRESS", false, "no partition reassignment is in progress"},
	{GroupSubscribedToTopic, "GROUP_SUBSCRIBED_TO_TOPIC", false, "the group is subscribed to the topic, so its offsets cannot be deleted"},
	{InvalidRecord, "INVALID_RECORD", false, "the broker rejected a record as invalid"},
	{UnstableOffsetCommit, "UNSTABLE_OFFSET_COMMIT", true, "pending transactional offset commits must complete first"},
	{ThrottlingQuotaExceeded, "THROTTLING_QUOTA_EXCEEDED", true, "the throttling quota is exceeded"},
	{ProducerFenced, "PRODUCER_FENCED", false, "a newer producer with the same transactional id fenced this one"},
	{ResourceNotFound, "RESOURCE_NOT_FOUND", false, "a referenced resource does not exist"},
	{DuplicateResource, "DUPLICATE_RESOURCE", false, "a resource is referenced more than once"},
	{UnacceptableCredential, "UNACCEPTABLE_CREDENTIAL", false, "the credential does not meet the requirements"},
	{InconsistentVoterSet, "INCONSISTENT_VOTER_SET", false, "the sender or receiver is not an expected voter"},
	{InvalidUpdateVersion, "INVALID_UPDATE_VERSION", false, "the feature update version is invalid"},
	{FeatureUpdateFailed, "FEATURE_UPDATE_FAILED", false, "updating the finalized features failed"},
	{PrincipalDeserializationFailure, "PRINCIPAL_DESERIALIZATION_FAILURE", false, "the principal of a forwarded request could not be decoded"},
	{SnapshotNotFound, "SNAPSHOT_NOT_FOUND", false, "the snapshot does not exist"},
	{PositionOutOfRange, "POSITION_OUT_OF_RANGE", false, "the position lies outside the snapshot"},
	{UnknownTopicID, "UNKNOWN_TOPIC_ID", true, "this broker does not host a topic with this id"},
	{DuplicateBrokerRegistration, "DUPLICATE_BROKER_REGISTRATION", false, "the broker id is already in use"},
	{BrokerIDNotRegistered, "BROKER_ID_NOT_REGISTERED", false, "the broker id is not registered"},
	{InconsistentTopicID, "INCONSISTENT_TOPIC_ID", true, "the topic id does not match the log's"},
	{InconsistentClusterID, "INCONSISTENT_CLUSTER_ID", false, "the cluster id does not match the server's"},
	{TransactionalIDNotFound, "TRANSACTIONAL_ID_NOT_FOUND", false, "the transactional id does not exist"},
	{FetchSessionTopicIDError, "FETCH_SESSION_TOPIC_ID_ERROR", true, "the fetch session uses topic ids inconsistently"},
	{IneligibleReplica, "INELIGIBLE_REPLICA", false, "the proposed in-sync replica set holds an ineligible replica"},
	{NewLeaderElected, "NEW_LEADER_ELECTED", false, "the partition state was updated but the leader has changed"},
	{OffsetMovedToTieredStorage, "OFFSET_MOVED_TO_TIERED_STORAGE", false, "the offset has moved to tiered storage"},
	{FencedMemberEpoch, "FENCED_MEMBER_EPOCH", false, "the member epoch is fenced; the member must release its partitions and rejoin"},
	{UnreleasedInstanceID, "UNRELEASED_INSTANCE_ID", false, "another group member still holds the instance id"},
	{UnsupportedAssignor, "UNSUPPORTED_ASSIGNOR", false, "the group does not support the assignor or its version"},
	{StaleMemberEpoch, "STALE_MEMBER_EPOCH", false, "the member epoch is stale"},
	{MismatchedEndpointType, "MISMATCHED_ENDPOINT_TYPE", false, "the request went to the wrong kind of endpoint"},
	{UnsupportedEndpointType, "UNSUPPORTED_ENDPOINT_TYPE", false, "the endpoint type is not supported"},
	{UnknownControllerID, "UNKNOWN_CONTROLLER_ID", false, "the controller id is unknown"},
	{UnknownSubscriptionID, "UNKNOWN_SUBSCRIPTION_ID", false, "the telemetry subscription id is unknown or outdated"},
	{TelemetryTooLarge, "TELEMETRY_TOO_LARGE", false, "the telemetry push is larger than the broker accepts"},
	{InvalidRegistration, "INVALID_REGISTRATION", false, "the controller found the broker registration invalid"},
	{TransactionAbortable, "TRANSACTION_ABORTABLE", false, "the transaction failed; abort it to go on using the transactional id"},
	{InvalidRecordState, "INVALID_RECORD_STATE", false, "the record's delivery state does not allow this acknowledgement"},
	{ShareSessionNotFound, "SHARE_SESSION_NOT_FOUND", true, "the share session does not exist"},
	{InvalidShareSessionEpoch, "INVALID_SHARE_SESSION_EPOCH", true, "the share session epoch is wrong"},
	{FencedStateEpoch, "FENCED_STATE_EPOCH", false, "the share state epoch does not match the coordinator's"},
	{InvalidVoterKey, "INVALID_VOTER_KEY", false, "the voter key does not match the receiving replica"},
	{DuplicateVoter, "DUPLICATE_VOTER", false, "the voter is already in the voter set"},
	{VoterNotFound, "VOTER_NOT_FOUND", false, "the voter is not in the voter set"},
	{InvalidRegularExpression, "INVALID_REGULAR_EXPRESSION", false, "the regular expression is invalid"},
	{RebootstrapRequired, "REBOOTSTRAP_REQUIRED", false, "the client's metadata is stale; it must bootstrap again"},
	{StreamsInvalidTopology, "STREAMS_INVALID_TOPOLOGY", false, "the streams topology is invalid"},
	{StreamsInvalidTopologyEpoch, "STREAMS_INVALID_TOPOLOGY_EPOCH", false, "the streams topology epoch is invalid"},
	{StreamsTopologyFenced, "STREAMS_TOPOLOGY_FENCED", false, "the streams topology epoch is outdated"},
	{ShareSessionLimitReached, "SHARE_SESSION_LIMIT_REACHED", true, "the broker's limit of share sessions is reached"},
	{GroupDeletionFailed, "GROUP_DELETION_FAILED", false, "deleting the group failed; the per-group result says why"},
	{StreamsTopologyDescriptionUpdateFailed, "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED", false, "updating the streams topology description failed"},
	{ControllerIDNotRegistered, "CONTROLLER_ID_NOT_REGISTERED", false, "the controller id is not registered"},
}
