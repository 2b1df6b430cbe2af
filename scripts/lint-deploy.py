#!/usr/bin/env python3
"""Checks the deployment files that cannot run here (no Docker engine, no cluster): the properties
docs/configuration.md and SECURITY.md rely on — non-root, health checks, probes, a data volume, the token from a Secret."""
import re
import sys

import yaml

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


dockerfile = open("Dockerfile").read()
stages = re.findall(r"^FROM\s+(\S+)", dockerfile, re.M)
check(len(stages) >= 2, "Dockerfile is multi-stage (build + runtime)")
runtime = dockerfile[dockerfile.rindex("\nFROM "):]
user = re.findall(r"^USER\s+(\S+)", runtime, re.M)
check(user and not user[-1].startswith(("0", "root")), "runtime stage runs as a non-root USER")
check("HEALTHCHECK" in runtime and "/healthz" in runtime, "runtime stage has a HEALTHCHECK on /healthz")
check(re.search(r"^VOLUME\s+\[\"/data\"\]", runtime, re.M), "runtime stage declares the /data volume")
check("-dev" not in runtime, "runtime stage installs no -dev packages")

unit = open("deploy/cartograph.service").read()
for key in ("ExecStart=/usr/local/bin/cartograph serve", "KillSignal=SIGTERM", "NoNewPrivileges=yes", "StateDirectory="):
    check(key in unit, f"systemd unit sets {key}")

docs = list(yaml.safe_load_all(open("deploy/kubernetes/cartograph.yaml")))
kinds = {d["kind"] for d in docs}
check({"Service", "StatefulSet"} <= kinds, "manifests define a Service and a StatefulSet")
sts = next(d for d in docs if d["kind"] == "StatefulSet")
pod = sts["spec"]["template"]["spec"]
container = pod["containers"][0]
check(pod["securityContext"].get("runAsNonRoot") is True, "pod runs as non-root")
check(container["readinessProbe"]["httpGet"]["path"] == "/readyz", "readiness probe on /readyz")
check(container["livenessProbe"]["httpGet"]["path"] == "/healthz", "liveness probe on /healthz")
check("requests" in container["resources"], "container has resource requests")
env = {e["name"]: e for e in container["env"]}
check("secretKeyRef" in env.get("CARTOGRAPH_ADMIN_TOKEN", {}).get("valueFrom", {}), "admin token comes from a Secret")
mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
claims = {c["metadata"]["name"] for c in sts["spec"].get("volumeClaimTemplates", [])}
check(mounts.get("data") == "/data" and "data" in claims, "data dir is a PersistentVolumeClaim mounted at /data")
check(pod.get("terminationGracePeriodSeconds", 30) > 30, "grace period exceeds the 30 s drain timeout")

# The cluster (docs/cluster.md): the router, Litestream beside each node with a restore before the
# server starts, the replica settings in a Secret, one stable Service per node for the ring.
sys.path.insert(0, "scripts/cluster")
from router import kubernetes_configuration  # noqa: E402

cluster = list(yaml.safe_load_all(open("deploy/kubernetes/cluster.yaml")))
named = {(d["kind"], d["metadata"]["name"]): d for d in cluster}
nodes = named[("StatefulSet", "cartograph")]
pod = nodes["spec"]["template"]["spec"]
replicas = nodes["spec"]["replicas"]
init = [c["name"] for c in pod.get("initContainers", [])]
sidecar = pod["initContainers"][-1]
check(init[-2:] == ["restore", "litestream"] and "restore" in " ".join(pod["initContainers"][-2]["command"]),
      "cluster: the restore step runs, then Litestream starts, before the server")
check(sidecar.get("restartPolicy") == "Always" and sidecar["args"][0] == "replicate",
      "cluster: Litestream replicates beside each node (a sidecar, running before the server starts)")
secret = named.get(("Secret", "cartograph-replica"), {})
check({"REPLICA_BUCKET", "LITESTREAM_ACCESS_KEY_ID", "LITESTREAM_SECRET_ACCESS_KEY"} <= set(secret.get("stringData", {})),
      "cluster: the replica settings are a Secret")
for name in init:
    container = next(c for c in pod["initContainers"] if c["name"] == name)
    check({"secretRef": {"name": "cartograph-replica"}} in container.get("envFrom", []), f"cluster: {name} reads the replica Secret")
    check({"name": "data", "mountPath": "/data"} in container["volumeMounts"], f"cluster: {name} mounts the data volume")
settings = named[("ConfigMap", "cartograph-litestream")]["data"]
check("watch: true" in settings["litestream.yml"] and "/data/control.sqlite" in settings["litestream.yml"],
      "cluster: Litestream replicates the control database and watches the stores")
check(all(("Service", f"cartograph-{i}") in named for i in range(replicas)), "cluster: one Service per node (the ring's names)")
router = named[("Deployment", "cartograph-router")]["spec"]["template"]["spec"]
check(router["containers"][0]["readinessProbe"]["httpGet"]["path"] == "/router/healthz", "cluster: the router has a readiness probe")
router_conf = named[("ConfigMap", "cartograph-router")]["data"]["nginx.conf"]
check(router_conf == kubernetes_configuration(replicas),
      f"cluster: the router's nginx.conf is `python3 scripts/cluster/router.py {replicas}`")
# A body goes to its node only once the router has read it whole (a 502 to a POST then keeps the client's
# keep-alive connection), so the router refuses what the nodes would refuse, and takes what they take.
check(re.search(r"^\s*proxy_request_buffering on;", router_conf, re.M), "cluster: the router reads request bodies whole")
node_env = {e["name"]: e.get("value") for e in pod["containers"][0].get("env", [])}
default_body = re.search(r"^\| `--max-body-bytes[^|]*\| `CARTOGRAPH_MAX_BODY_BYTES` \| `(\d+)`", open("docs/configuration.md").read(), re.M)
router_body = re.search(r"^\s*client_max_body_size (\d+);", router_conf, re.M)
check(default_body and router_body and router_body.group(1) == node_env.get("CARTOGRAPH_MAX_BODY_BYTES", default_body.group(1)),
      "cluster: the router's client_max_body_size is the nodes' --max-body-bytes")
# R-D7: a store restored from the replica lacks its last writes; marked so, it opens with a new epoch.
check(re.search(r'echo restored > "/data/tenants/\$store-instance"', settings["restore.sh"]),
      "cluster: the restore step marks each restored store (its -instance sidecar says 'restored')")
for d in cluster:
    spec = d.get("spec", {}).get("template", {}).get("spec")
    if spec:
        check(spec["securityContext"].get("runAsNonRoot") is True, f"cluster: {d['metadata']['name']} runs as non-root")

if failures:
    print("deploy lint failed:\n- " + "\n- ".join(failures))
    sys.exit(1)
print("deploy lint: Dockerfile, systemd unit and Kubernetes manifests (single node and cluster) OK")
