"""Apache Kafka's conformance vectors (conformance/vectors/kafka-clients-<release>.jsonl),
every one of them, through the Python binding, with the native runner's three comparisons:

- decode: kwire decodes the bytes; its JSON must equal the vector's json semantically
  (key order ignored, integers exact, floats by bit pattern, bools apart from ints);
- encode: kwire encodes the vector's json; the bytes must equal the vector's;
- round trip: kwire encodes its own decoded JSON; the bytes must equal the vector's;
  and again through Python values (decode_message's dict given to encode_message).

Renamed fields and superseded unstable versions are handled as the native runner does,
from the ABI's catalogue: keys a newer release renamed are compared under the new name;
a vector of a version that its release marks unstable and that kwire declares superseded
is excused (and counted in the report). Then, for one vector per (api, version, kind),
the body is wrapped in a frame and checked through the frame functions and the peek.
"""

import base64
import json
import struct
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

import kwire
from conftest import VECTORS, read_jsonl

RELEASES = ["3.9.2", "4.4.0"]


def test_catalogue_lists_the_vector_releases(catalogue: kwire.Catalogue) -> None:
    assert catalogue["specReleases"] == RELEASES


# ---- semantic JSON comparison -------------------------------------------------------------


def _show(v: Any) -> str:
    s = json.dumps(v, ensure_ascii=False)
    return s if len(s) <= 80 else s[:77] + "..."


def json_diff(path: str, w: Any, g: Any) -> Optional[Tuple[str, str, str]]:
    """The first difference (path, want, got) between two parsed JSON values, or None."""
    if isinstance(w, dict):
        if not isinstance(g, dict):
            return path, _show(w), _show(g)
        for k in sorted(set(w) | set(g)):
            p = f"{path}.{k}"
            if k not in w:
                return p, "(absent)", _show(g[k])
            if k not in g:
                return p, _show(w[k]), "(absent)"
            d = json_diff(p, w[k], g[k])
            if d:
                return d
        return None
    if isinstance(w, list):
        if not isinstance(g, list):
            return path, _show(w), _show(g)
        for i, (a, b) in enumerate(zip(w, g)):
            d = json_diff(f"{path}[{i}]", a, b)
            if d:
                return d
        if len(w) != len(g):
            return path, f"{len(w)} elements", f"{len(g)} elements"
        return None
    if type(w) is not type(g):
        # 1 and 1.0 are different JSON texts but the same number only when both are
        # numbers; a bool never equals a number.
        if isinstance(w, (int, float)) and isinstance(g, (int, float)) and not isinstance(w, bool) and not isinstance(g, bool):
            if float(w) == float(g) and struct.pack("<d", float(w)) == struct.pack("<d", float(g)):
                return None
        return path, _show(w), _show(g)
    if isinstance(w, float):
        if struct.pack("<d", w) != struct.pack("<d", g):
            return path, repr(w), repr(g)
        return None
    if w != g:
        return path, _show(w), _show(g)
    return None


def apply_rename(v: Any, path: List[str], old: str, new: str) -> None:
    """Renames key old to new in the objects at path ("topics[]" steps into each element)."""
    if not isinstance(v, dict):
        return
    if not path:
        if old in v and new not in v:
            v[new] = v.pop(old)
        return
    step, rest = path[0], path[1:]
    if step.endswith("[]"):
        arr = v.get(step[:-2])
        if isinstance(arr, list):
            for e in arr:
                apply_rename(e, rest, old, new)
        return
    apply_rename(v.get(step), rest, old, new)


def renamed_copy(want: Any, msg: kwire.CatalogueMessage) -> Tuple[Any, bool]:
    renames = msg.get("renames") or []
    if not renames:
        return want, False
    w = json.loads(json.dumps(want))
    before = json.dumps(w, sort_keys=True)
    for r in renames:
        apply_rename(w, r["path"].split(".") if r["path"] else [], r["old"], r["new"])
    return w, json.dumps(w, sort_keys=True) != before


def _parse_int(s: str) -> Any:
    # "-0" is negative zero: keep its sign (Python would read it as the int 0).
    return -0.0 if s == "-0" else int(s)


def parse(text: bytes) -> Any:
    return json.loads(text, parse_int=_parse_int)


def first_diff(a: bytes, b: bytes) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return -1 if len(a) == len(b) else min(len(a), len(b))


# ---- the run --------------------------------------------------------------------------------


class Catalog:
    def __init__(self, cat: kwire.Catalogue) -> None:
        self.by_name: Dict[str, kwire.CatalogueMessage] = {m["name"]: m for m in cat["messages"]}
        self.apis = {a["apiKey"]: a for a in cat["apis"]}

    def lookup(self, name: str, api_key: int, kind: str) -> Tuple[Optional[kwire.CatalogueMessage], bool]:
        m = self.by_name.get(name)
        if m is not None:
            return m, False
        a = self.apis.get(api_key)
        if a is None or kind not in ("request", "response"):
            return None, False
        return self.by_name.get(a[kind]), True  # type: ignore[literal-required]


def check_vector(kw: kwire.Kwire, m: kwire.CatalogueMessage, v: Dict[str, Any]) -> List[str]:
    """The three comparisons; returns what failed."""
    vid, ver, want_bytes = v["id"], v["version"], v["bytes"]
    name = m["name"]
    fails = []
    try:
        enc: Optional[bytes] = kw.encode_message_json(name, ver, kwire.dumps(v["json"]))
    except kwire.KwireError as e:
        enc = None
        fails.append(f"vector {vid}: encode: {e} (path {e.path})")
    try:
        decoded: Optional[bytes] = kw.decode_message_json(name, ver, want_bytes)
    except kwire.KwireError as e:
        decoded = None
        fails.append(f"vector {vid}: decode: {e} (path {e.path}, offset {e.offset})")
    if decoded is not None:
        want, _ = renamed_copy(v["json"], m)
        d = json_diff("$", want, parse(decoded))
        if d:
            fails.append(f"vector {vid}: decode: field {d[0]}: JSON differs: want {d[1]}, got {d[2]}")
    if enc is not None and enc != want_bytes:
        fails.append(
            f"vector {vid}: encode: kwire writes {len(enc)} bytes, Kafka {len(want_bytes)}; "
            f"first difference at byte {first_diff(enc, want_bytes)}"
        )
    if decoded is not None:
        try:
            re = kw.encode_message_json(name, ver, decoded)
            if re != want_bytes:
                fails.append(
                    f"vector {vid}: round-trip: {len(re)} bytes, input {len(want_bytes)}; "
                    f"first difference at byte {first_diff(re, want_bytes)}"
                )
        except kwire.KwireError as e:
            fails.append(f"vector {vid}: round-trip: {e}")
        # The same through Python values: the dict decode_message returns, encoded again
        # by encode_message (json.dumps of ints, floats, strings, lists, dicts).
        try:
            re2 = kw.encode_message(name, ver, kwire.loads(decoded))
            if re2 != want_bytes:
                fails.append(
                    f"vector {vid}: dict round-trip: {len(re2)} bytes, input {len(want_bytes)}; "
                    f"first difference at byte {first_diff(re2, want_bytes)}"
                )
        except kwire.KwireError as e:
            fails.append(f"vector {vid}: dict round-trip: {e}")
    else:
        fails.append(f"vector {vid}: round-trip: skipped, the bytes did not decode")
    return fails


def load_release(release: str) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    base = VECTORS / f"kafka-clients-{release}"
    manifest = json.loads(Path(f"{base}.manifest.json").read_text())
    vectors = read_jsonl(Path(f"{base}.jsonl"), parse_int=_parse_int)
    for v in vectors:
        v["bytes"] = base64.b64decode(v["bytes"])
    return manifest, vectors


@pytest.fixture(scope="module", params=RELEASES)
def release(request: pytest.FixtureRequest) -> Tuple[str, Dict[str, Any], List[Dict[str, Any]]]:
    manifest, vectors = load_release(request.param)
    return request.param, manifest, vectors


def test_vectors(kw: kwire.Kwire, catalogue: kwire.Catalogue, release: Any, report: List[str]) -> None:
    rel, manifest, vectors = release
    cat = Catalog(catalogue)
    unstable = {(mm["kind"], mm["name"]): mm["unstableVersion"] for mm in manifest["messages"]}
    failures: List[str] = []
    excused: Dict[Tuple[str, int], int] = defaultdict(int)
    aliases: Dict[str, str] = {}
    renamed = 0
    per_kind: Dict[str, Dict[str, Any]] = defaultdict(lambda: {"triples": set(), "vectors": 0, "failed": set()})
    for v in vectors:
        m, alias = cat.lookup(v["name"], v["apiKey"], v["kind"])
        k = per_kind[v["kind"]]
        k["triples"].add((v["name"], v["version"]))
        k["vectors"] += 1
        if m is None:
            failures.append(f"vector {v['id']}: the catalogue has no message {v['name']} ({v['kind']}, api key {v['apiKey']})")
            k["failed"].add(v["id"])
            continue
        if alias:
            aliases[v["name"]] = m["name"]
        assert m["kind"] == v["kind"] and m["apiKey"] == v["apiKey"], v["id"]
        if renamed_copy(v["json"], m)[1]:
            renamed += 1
        fs = check_vector(kw, m, v)
        if fs:
            sup = any(s["release"] == rel and s["version"] == v["version"] for s in m.get("superseded") or [])
            if sup and unstable.get((v["kind"], v["name"])) == v["version"]:
                excused[(v["name"], v["version"])] += 1
                continue
            failures.extend(fs)
            k["failed"].add(v["id"])

    # Every (message, version) the release lists has vectors, so all of them ran.
    listed = {
        (mm["kind"], mm["name"], ver)
        for mm in manifest["messages"]
        if mm["minVersion"] >= 0
        for ver in range(mm["minVersion"], mm["maxVersion"] + 1)
    }
    ran = {(kind, n, ver) for kind, s in per_kind.items() for (n, ver) in s["triples"]}
    assert listed <= ran, f"no vector for {sorted(listed - ran)[:10]}"

    lines = [f"kafka-clients {rel} vectors through the Python binding (wasmtime)"]
    lines.append(f"  {'kind':<9} {'(msg,version)':>13} {'vectors':>8} {'failed':>7}")
    for kind in ("request", "response", "header", "data"):
        s = per_kind.get(kind)
        if s:
            lines.append(f"  {kind:<9} {len(s['triples']):>13} {s['vectors']:>8} {len(s['failed']):>7}")
    total = sum(s["vectors"] for s in per_kind.values())
    lines.append(f"  {'total':<9} {len(ran):>13} {total:>8} {len(failures):>7}")
    if renamed:
        lines.append(f"  note: {renamed} vectors use field names a newer release renamed; compared under the catalogue's renames")
    for (n, ver), c in sorted(excused.items()):
        lines.append(f"  excused: {n} v{ver}: {c} vectors differ; Kafka {rel} marks v{ver} unstable and kwire implements the newer definition")
    for old, new in sorted(aliases.items()):
        lines.append(f"  note: no message named {old} in kwire; its vectors ran against {new} (same api key)")
    report.extend(lines)
    assert total == len(vectors) and total > 6000
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:40])


def test_frames(kw: kwire.Kwire, catalogue: kwire.Catalogue, release: Any, report: List[str]) -> None:
    """One vector per (api, version, kind): the body in a frame decodes to kwire.h's
    envelope, encodes back to the same frame, and the peek reads the header."""
    rel, manifest, vectors = release
    cat = Catalog(catalogue)
    hv_of: Dict[Tuple[str, int, int], int] = {}
    for mm in manifest["messages"]:
        for i, hv in enumerate(mm.get("headerVersions") or []):
            hv_of[(mm["kind"], mm["apiKey"], mm["minVersion"] + i)] = hv
    seen = set()
    fails: List[str] = []
    n = 0
    for i, v in enumerate(vectors):
        kind, key, ver = v["kind"], v["apiKey"], v["version"]
        if kind not in ("request", "response") or (kind, key, ver) in seen:
            continue
        a = cat.apis.get(key)
        if a is None:
            continue
        name = a[kind]
        try:
            body = kw.decode_message_json(name, ver, v["bytes"])
        except kwire.KwireError:
            continue  # the vector run reports it (or excuses a superseded version)
        seen.add((kind, key, ver))
        n += 1
        corr = (i * 7919) % (1 << 31)
        client = f"client-{corr % 97}"
        hv = hv_of[(kind, key, ver)]
        assert kw.header_versions(key, ver)[0 if kind == "request" else 1] == hv, (kind, key, ver)
        if kind == "request":
            hdr = kw.encode_message(
                "RequestHeader", hv, {"requestApiKey": key, "requestApiVersion": ver, "correlationId": corr, "clientId": client}
            )
        else:
            hdr = kw.encode_message("ResponseHeader", hv, {"correlationId": corr})
        frame = struct.pack(">i", len(hdr) + len(v["bytes"])) + hdr + v["bytes"]
        if kind == "request":
            js = kw.decode_request_frame_json(frame)
        else:
            js = kw.decode_response_frame_json(frame, key, ver)
        env = json.loads(js)
        where = f"vector {v['id']}"
        if not js.startswith(b'{"apiKey":') or list(env) != ["apiKey", "apiVersion", "headerVersion", "header", "body"]:
            fails.append(f"{where}: frame JSON keys {list(env)}")
            continue
        if (env["apiKey"], env["apiVersion"], env["headerVersion"]) != (key, ver, hv):
            fails.append(f"{where}: frame names {env['apiKey']} v{env['apiVersion']} header v{env['headerVersion']}")
        if json_diff("$", parse(body), parse(js)["body"]):
            fails.append(f"{where}: frame body differs from decode_message")
        if env["header"]["correlationId"] != corr or (kind == "request" and hv >= 1 and env["header"]["clientId"] != client):
            fails.append(f"{where}: header {env['header']}")
        re = kw.encode_request_frame_json(js) if kind == "request" else kw.encode_response_frame_json(js, key, ver)
        if re != frame:
            fails.append(f"{where}: frame JSON encodes to {len(re)} bytes, the frame had {len(frame)}")
        # The dict form round-trips too (int64 strings, base64 bytes as they came).
        re2 = kw.encode_request_frame(env) if kind == "request" else kw.encode_response_frame(env, key, ver)
        if re2 != frame:
            fails.append(f"{where}: frame dict encodes to other bytes")
        if kind == "request":
            p = kw.peek_request_header(frame)
            want_client = client if hv >= 1 else None
            want = (len(frame) - 4, key, ver, corr, hv, want_client, 14 if hv >= 1 else -1, len(client) if hv >= 1 else -1)
            if tuple(p) != want:
                fails.append(f"{where}: peek {p}, want {want}")
            if hv >= 1 and kw.peek_request_header(frame[: 14 + len(client)]) != p:
                fails.append(f"{where}: peek of the first {14 + len(client)} bytes differs")
    report.append(f"kafka-clients {rel}: {n} frames (one per (api, version, kind)) decoded, re-encoded and peeked, {len(fails)} failed")
    assert n > 300
    assert not fails, "\n".join(fails[:40])
