package goname

import (
	"strings"
	"testing"
)

func TestIdent(t *testing.T) {
	for in, want := range map[string]string{
		"BrokerId":                     "BrokerID",
		"TopicIds":                     "TopicIDs",
		"ApiKey":                       "APIKey",
		"ApiVersionsRequest":           "APIVersionsRequest",
		"DescribeAclsRequest":          "DescribeACLsRequest",
		"CreateAclsRequestAclCreation": "CreateACLsRequestACLCreation",
		"Acls":                         "ACLs",
		"TopicUuid":                    "TopicUUID",
		"JsonData":                     "JSONData",
		"ClientSoftwareName":           "ClientSoftwareName",
		"Idempotent":                   "Idempotent",
		"IsrNodes":                     "IsrNodes",
		"ZkMigrationReady":             "ZkMigrationReady",
		"TopicIdsV2":                   "TopicIDsV2",
		"UUIDList":                     "UUIDList",
		"ID":                           "ID",
		"Ids":                          "IDs",
	} {
		if got := Ident(in); got != want {
			t.Errorf("Ident(%s) = %s, want %s", in, got, want)
		}
		if Ident(want) != want {
			t.Errorf("Ident(%s) = %s, not a fixed point", want, Ident(want))
		}
	}
	if got := strings.Join(Words("MetadataResponseUUIDTopicIds"), " "); got != "Metadata Response UUID Topic Ids" {
		t.Errorf("Words = %s", got)
	}
}
