package transcode

// AddressMap decides where a broker address in a message goes: given a node id and
// the host and port the broker wrote, it returns the address to write instead, or
// ok false to leave it as it is.
type AddressMap func(node int32, host string, port int32) (newHost string, newPort int32, ok bool)

// RewriteAddresses rewrites every broker address under n through to: any struct
// with a host, a port and a node id (nodeId or brokerId) whose error code, if it has
// one, is 0. That covers Metadata's brokers, FindCoordinator's coordinator (and
// coordinators), DescribeCluster's brokers, the node endpoints of Produce, Fetch and
// the share-group responses, and any later message that carries addresses the same
// way. It reports whether anything changed.
func (d *Doc) RewriteAddresses(n Node, to AddressMap) (bool, error) {
	changed := false
	host, port := d.Field(n, "host"), d.Field(n, "port")
	if host != NoNode && port != NoNode {
		id := d.Field(n, "nodeId")
		if id == NoNode {
			id = d.Field(n, "brokerId")
		}
		errCode := d.Field(n, "errorCode")
		if id != NoNode && (errCode == NoNode || d.Int(errCode) == 0) {
			h, _ := d.Str(host)
			p := int32(d.Int(port))
			if nh, np, ok := to(int32(d.Int(id)), string(h), p); ok && (nh != string(h) || np != p) {
				if err := d.SetString(host, nh); err != nil {
					return false, err
				}
				if err := d.SetInt(port, int64(np)); err != nil {
					return false, err
				}
				changed = true
			}
		}
	}
	for c := d.First(n); c != NoNode; c = d.Next(c) {
		ch, err := d.RewriteAddresses(c, to)
		if err != nil {
			return false, err
		}
		changed = ch || changed
	}
	return changed, nil
}
