package transcode

import "github.com/kwire/kwire/internal/transcode"

// Doc is one message's wire bytes indexed by the schema: every field present at the
// version gets a Node that knows its byte span, and values are read from the spans on
// demand (Parse, ParseAPI, Root, Field, First, Next, Int, Str, Bytes, UUID). Edits
// (SetInt, SetString, Remove, AppendRaw, RewriteAddresses) are applied when AppendTo
// writes the message again, leaving every byte it does not touch as it was, unknown
// tagged fields included. Parse accepts exactly what AppendJSON (and the typed codec's
// Decode) accepts, with the same errors. A Doc aliases the bytes it parsed; it is
// reusable and not safe for concurrent use.
type Doc = transcode.Doc

// Node is a value of a Doc: an index into it. The root struct is 0; NoNode stands for a
// field absent at the version, a null struct or the end of a list.
type Node = transcode.Node

// NoNode is the Node of nothing.
const NoNode = transcode.NoNode

// ErrEdit is the cause of a refused edit.
var ErrEdit = transcode.ErrEdit

// AddressMap decides where a broker address in a message goes (Doc.RewriteAddresses):
// given a node id and the host and port the broker wrote, it returns the address to
// write instead, or ok false to leave it as it is.
type AddressMap = transcode.AddressMap
