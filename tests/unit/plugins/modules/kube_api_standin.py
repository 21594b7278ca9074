# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpuops.hardening developers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in of the Kubernetes API server's nodes, enough for the real kubectl's get, cordon, taint and annotate.

It is no API server: it serves one Node object (core/v1) and the discovery documents kubectl reads first
(/version, /api as APIVersions, /apis as an empty APIGroupList, /api/v1 as an APIResourceList naming nodes),
and applies PATCH bodies as JSON merge patches (RFC 7386: null removes a key, a list replaces the list). That
covers what kubectl 1.32 sends for these commands, as its requests to this stand-in show: a strategic merge
patch {"spec": {"unschedulable": true}} for cordon, the node's whole taint list for taint (NodeSpec.taints has no
merge strategy, so the list is replaced), and a merge patch of metadata.annotations for annotate. Every request
is recorded in `requests`.
"""

from __future__ import annotations

import copy
import http.server
import json
import threading

RESOURCES = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1", "resources": [
    {"name": "nodes", "singularName": "node", "namespaced": False, "kind": "Node",
     "verbs": ["get", "list", "patch", "update"], "shortNames": ["no"]}]}
DISCOVERY = {
    "/version": {"major": "1", "minor": "32", "gitVersion": "v1.32.0-standin"},
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    "/api/v1": RESOURCES,
}


def merge_patch(target, patch):
    """RFC 7386: the patch's keys set or, when null, remove the target's; objects merge, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


class NodesApi(object):
    """One Node served on 127.0.0.1, on a free port, while the context is open."""

    def __init__(self, node):
        self.node = copy.deepcopy(node)
        self.requests = []
        self._server = None

    def kubeconfig(self, path):
        """A kubeconfig that points kubectl at this stand-in."""
        config = {"apiVersion": "v1", "kind": "Config", "current-context": "standin",
                  "clusters": [{"name": "standin", "cluster": {"server": "http://127.0.0.1:%d" % self._server.server_address[1]}}],
                  "users": [{"name": "standin", "user": {"token": "standin"}}],
                  "contexts": [{"name": "standin", "context": {"cluster": "standin", "user": "standin"}}]}
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(config, handle)
        return path

    def patches(self):
        return [body for method, _path, body in self.requests if method == "PATCH"]

    def __enter__(self):
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # pylint: disable=arguments-differ
                pass

            def _send(self, code, body):
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _node_path(self):
                return "/api/v1/nodes/%s" % api.node["metadata"]["name"]

            def do_GET(self):  # pylint: disable=invalid-name
                path = self.path.split("?", 1)[0]
                api.requests.append(("GET", path, None))
                if path in DISCOVERY:
                    return self._send(200, DISCOVERY[path])
                if path == self._node_path():
                    return self._send(200, api.node)
                return self._send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                                        "code": 404, "message": "%s not found" % path})

            def do_PATCH(self):  # pylint: disable=invalid-name
                path = self.path.split("?", 1)[0]
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                api.requests.append(("PATCH", path, body))
                if path != self._node_path():
                    return self._send(404, {"kind": "Status", "code": 404, "status": "Failure", "reason": "NotFound"})
                api.node = merge_patch(api.node, body)
                return self._send(200, api.node)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
