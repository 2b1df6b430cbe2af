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

if failures:
    print("deploy lint failed:\n- " + "\n- ".join(failures))
    sys.exit(1)
print("deploy lint: Dockerfile, systemd unit and Kubernetes manifests OK")
