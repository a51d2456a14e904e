// Package goname turns the CamelCase names of Kafka's message descriptors into Go
// identifiers that follow Go's initialisms: BrokerId becomes BrokerID, TopicIds TopicIDs,
// ApiKey APIKey, DescribeAclsRequest DescribeACLsRequest.
//
// The generator names every generated type and field with Ident, and the rename tool
// uses it to rewrite references to the names the generator wrote before.
package goname

import (
	"strings"
	"unicode"
)

// initialisms are the words Go writes in one case, as Go's linters list them.
var initialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CPU": true, "CSS": true, "DNS": true,
	"EOF": true, "GUID": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true,
	"IP": true, "JSON": true, "LHS": true, "QPS": true, "RAM": true, "RHS": true,
	"RPC": true, "SLA": true, "SMTP": true, "SQL": true, "SSH": true, "TCP": true,
	"TLS": true, "TTL": true, "UDP": true, "UI": true, "UID": true, "UUID": true,
	"URI": true, "URL": true, "UTF8": true, "VM": true, "XML": true, "XMPP": true,
	"XSRF": true, "XSS": true,
}

// Words splits a CamelCase name into its words: "TopicIdsV2" is Topic, Ids, V2;
// "UUIDList" is UUID, List.
func Words(s string) []string {
	rs := []rune(s)
	var out []string
	start := 0
	for i := 1; i < len(rs); i++ {
		up := unicode.IsUpper(rs[i])
		prevUp := unicode.IsUpper(rs[i-1])
		nextLow := i+1 < len(rs) && unicode.IsLower(rs[i+1])
		if up && (!prevUp || nextLow) {
			out = append(out, string(rs[start:i]))
			start = i
		}
	}
	return append(out, string(rs[start:]))
}

// Word is one word in Go's spelling: an initialism in capitals ("Id" is ID), its plural
// with a small s ("Ids" is IDs, "Acls" ACLs), any other word unchanged.
func Word(w string) string {
	u := strings.ToUpper(w)
	if initialisms[u] {
		return u
	}
	if len(w) > 2 && w[len(w)-1] == 's' && initialisms[u[:len(u)-1]] {
		return u[:len(u)-1] + "s"
	}
	return w
}

// Ident is s with every word in Go's spelling. It leaves the first letter's case as it
// is, so an unexported name stays unexported unless its first word is an initialism.
func Ident(s string) string {
	if s == "" {
		return s
	}
	var b strings.Builder
	for _, w := range Words(s) {
		b.WriteString(Word(w))
	}
	return b.String()
}
