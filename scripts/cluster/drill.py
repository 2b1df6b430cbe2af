"""The failover drill (docs/cluster.md): a 3-node cluster behind the router, writers posting to
tenants spread over the nodes; node after node is killed (SIGKILL, Litestream too) and its data
directory deleted, and a replacement on a fresh directory restores from the replica and takes the
same place in the ring while the writers go on. Once, the volume survives instead (only the process
died). A follower of each written tenant's change feed is caught up before its node is killed and pages
on after the restore. The report: writes acknowledged before a kill that are missing after the restore,
the replication lag (p50/p99) that bounds them, time to restore, requests failed during the switch, the
followers that saw a new epoch; and it fails unless every write acknowledged after a replacement was
ready is there, nothing is lost when the volume survives, no lost write is older than the lag bound, the
stores of a node that lost writes come back with new epochs (R-D7) and those of a node whose volume
survived keep theirs, and every follower ends holding exactly what its store holds."""
import json
import shutil
import tempfile
import time

from local_cluster import Cluster
from follower import Follower, FollowerStuck
from lag import LagProbe, percentile
from workload import Writer, create_tenant, stored_ids

# A lost write was acknowledged at most this long before the kill (seconds) — or the largest lag the
# probes measured, when that is more: Litestream notices a transaction within its monitor interval
# (1 s) and ships it at the next sync (1 s); a loaded 2-core machine adds to both.
LOSS_AGE_BOUND = 3.0


def page_on(followers):
    """Each follower pages to its store's head; returns why those that could not did not."""
    stuck = []
    for follower in followers:
        try:
            follower.catch_up()
        except FollowerStuck as error:
            stuck.append(str(error))
    return stuck


def failover(cluster, index, wipe, writers, followers, phase_seconds):
    """Kills node `index`, starts its replacement, lets the writers go on; returns what happened."""
    node = cluster.nodes[index]
    tenants = [w.tenant for w in writers if cluster.ring.node(w.tenant) == node.address]
    # The node's followers are caught up when it dies: each holds the epoch and position the node gave it.
    watching = [followers[tenant] for tenant in tenants]
    stuck = page_on(watching)
    epochs = {follower.tenant: follower.epoch for follower in watching}
    switch_started = time.monotonic()
    new = cluster.replace(index, wipe)
    killed = time.monotonic()  # the node is dead: its port is free
    new.start()
    ready = time.monotonic()
    lost, ages = 0, []
    for writer in writers:
        if writer.tenant not in tenants:
            continue
        present = stored_ids(cluster.router.url, writer.key, writer.tenant)
        for note, at in list(writer.acknowledged.items()):
            # Acknowledged by the dead node: before its replacement's server existed (a response read just
            # after the kill was sent before it). A write lost at an earlier failover is counted there only.
            if at < new.server_started and note not in present and note not in writer.lost:
                writer.lost.add(note)
                lost += 1
                ages.append(max(0.0, killed - at))
    failed = sum(1 for w in writers for at, _ in w.failures if switch_started <= at <= ready)
    time.sleep(phase_seconds)
    # Then they page on from where they were, as followers do: a new epoch sends one back to 0.
    stuck += page_on(watching)
    return {"node": index, "volumeDeleted": wipe, "restoredDatabases": new.restored,
            "restoreSeconds": round(new.restore_seconds, 3), "killToReadySeconds": round(ready - killed, 3),
            "failedRequestsDuringSwitch": failed, "lostAcknowledgedWrites": lost,
            "oldestLostWriteAgeSeconds": round(max(ages), 3) if ages else None,
            "followers": len(watching), "followersWithNewEpoch": sum(1 for f in watching if f.epoch != epochs[f.tenant]),
            "followersStuck": stuck, "readyAt": ready, "tenants": tenants}


def run(binary, failovers, phase_seconds, per_node, report_path, keep=False):
    root = tempfile.mkdtemp(prefix="cartograph-drill-")
    cluster = Cluster(binary, root, nodes=3)
    writers, probes = [], []
    report = {"nodes": 3, "failovers": []}
    try:
        cluster.start()
        chosen = cluster.spread_tenants(per_node + 1, "t")
        for address, tenants in chosen.items():
            # The first tenant of each node is its lag probe; the others have writers.
            probe_tenant, *written = tenants
            probes.append(LagProbe(cluster.router.url, create_tenant(cluster.router.url, cluster.admin_token, probe_tenant),
                                   probe_tenant, cluster))
            for tenant in written:
                writers.append(Writer(cluster.router.url, create_tenant(cluster.router.url, cluster.admin_token, tenant), tenant))
        report["tenants"] = {address: tenants[1:] for address, tenants in chosen.items()}
        followers = {w.tenant: Follower(cluster.router.url, w.key, w.tenant) for w in writers}
        for thread in writers + probes:
            thread.start()
        time.sleep(phase_seconds)
        # First the process alone dies (the volume survives), then machines die with their volumes.
        plan = [(0, False)] + [(i % 3, True) for i in range(failovers)]
        for index, wipe in plan:
            report["failovers"].append(failover(cluster, index, wipe, writers, followers, phase_seconds))
            print(json.dumps({k: v for k, v in report["failovers"][-1].items() if k not in ("readyAt", "tenants")}), flush=True)
        for thread in writers + probes:
            thread.stop()
        # Everything acknowledged after its node's last replacement was ready must be there, and every
        # follower, paging on to the head, must hold what its store holds: no more, no less.
        missing_after_ready = 0
        follower_mismatches = {}
        stuck = page_on(followers.values())
        for writer in writers:
            ready = max([f["readyAt"] for f in report["failovers"] if writer.tenant in f["tenants"]] or [0])
            present = stored_ids(cluster.router.url, writer.key, writer.tenant)
            missing_after_ready += sum(1 for note, at in writer.acknowledged.items() if at >= ready and note not in present)
            held = followers[writer.tenant].ids
            if held != present:
                follower_mismatches[writer.tenant] = {"missed": len(present - held), "extra": len(held - present)}
        samples = [s for p in probes for s in p.samples]
        report.update({
            "acknowledgedWrites": sum(len(w.acknowledged) for w in writers),
            "missingWritesAcknowledgedAfterReady": missing_after_ready,
            "followersStuckAtTheEnd": stuck, "followerMismatches": follower_mismatches,
            "replicationLagSeconds": {"samples": len(samples), "p50": round(percentile(samples, 50), 3) if samples else None,
                                      "p99": round(percentile(samples, 99), 3) if samples else None,
                                      "max": round(max(samples), 3) if samples else None},
        })
    finally:
        for thread in writers + probes:
            thread.stopping.set()
        cluster.stop()
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    for f in report["failovers"]:
        del f["readyAt"]
    failures = check(report)
    report["passed"] = not failures
    report["failures"] = failures
    if report_path:
        with open(report_path, "w") as out:
            json.dump(report, out, indent=2)
    print_report(report)
    return report


def check(report):
    failures = []
    bound = max(LOSS_AGE_BOUND, (report["replicationLagSeconds"]["max"] or 0) + 0.5)
    if report["missingWritesAcknowledgedAfterReady"]:
        failures.append(f"{report['missingWritesAcknowledgedAfterReady']} writes acknowledged after a replacement was ready are missing")
    for f in report["failovers"]:
        if not f["volumeDeleted"] and f["lostAcknowledgedWrites"]:
            failures.append(f"node {f['node']} lost {f['lostAcknowledgedWrites']} acknowledged writes though its volume survived")
        kept = f["followers"] - f["followersWithNewEpoch"]
        if f["lostAcknowledgedWrites"] and kept:
            failures.append(f"node {f['node']} lost {f['lostAcknowledgedWrites']} acknowledged writes, yet {kept} of its "
                            f"{f['followers']} followed stores kept their epoch (R-D7): their followers skip the writes "
                            "that reuse the lost sequence numbers")
        if not f["volumeDeleted"] and f["followersWithNewEpoch"]:
            failures.append(f"node {f['node']}'s volume survived, yet {f['followersWithNewEpoch']} stores changed epoch")
        for stuck in f["followersStuck"]:
            failures.append(f"a follower of node {f['node']} could not page on: {stuck}")
        if f["oldestLostWriteAgeSeconds"] is not None and f["oldestLostWriteAgeSeconds"] > bound:
            failures.append(f"node {f['node']} lost a write acknowledged {f['oldestLostWriteAgeSeconds']} s before the kill "
                            f"(bound {bound} s)")
    for stuck in report["followersStuckAtTheEnd"]:
        failures.append(f"a follower could not page on at the end: {stuck}")
    for tenant, mismatch in report["followerMismatches"].items():
        failures.append(f"the follower of {tenant} missed {mismatch['missed']} notes its store holds and holds "
                        f"{mismatch['extra']} it does not")
    if not report["replicationLagSeconds"]["samples"]:
        failures.append("no replication lag sample")
    if report["acknowledgedWrites"] == 0:
        failures.append("no write was acknowledged")
    return failures


def print_report(report):
    lag = report["replicationLagSeconds"]
    wiped = [f for f in report["failovers"] if f["volumeDeleted"]]
    print("\nFailover drill report")
    print(f"  nodes: {report['nodes']}; acknowledged writes: {report['acknowledgedWrites']}")
    print(f"  replication lag (ack -> in the replica): p50 {lag['p50']} s, p99 {lag['p99']} s, max {lag['max']} s "
          f"over {lag['samples']} samples")
    for f in report["failovers"]:
        print(f"  node {f['node']} {'killed, volume deleted' if f['volumeDeleted'] else 'killed, volume kept'}: "
              f"restore {f['restoreSeconds']} s ({f['restoredDatabases']} databases), kill -> ready {f['killToReadySeconds']} s, "
              f"{f['failedRequestsDuringSwitch']} requests failed during the switch, "
              f"{f['lostAcknowledgedWrites']} acknowledged writes lost (oldest {f['oldestLostWriteAgeSeconds']} s before the kill); "
              f"{f['followersWithNewEpoch']} of its {f['followers']} followers saw a new epoch and started again from 0")
    if wiped:
        print(f"  lost on volume deletion: {sum(f['lostAcknowledgedWrites'] for f in wiped)} writes over {len(wiped)} failovers")
    print(f"  missing writes acknowledged after a replacement was ready: {report['missingWritesAcknowledgedAfterReady']}")
    print(f"  followers holding other notes than their stores at the end: {len(report['followerMismatches'])} "
          f"of {sum(len(t) for t in report['tenants'].values())}")
    print("  PASSED" if report["passed"] else "  FAILED:\n  - " + "\n  - ".join(report["failures"]))


def add_command(commands):
    drill = commands.add_parser("drill", help="run the failover drill and print its report")
    drill.add_argument("--failovers", type=int, default=3, help="failovers with the volume deleted (after one without)")
    drill.add_argument("--seconds", type=float, default=5, help="seconds of load before the first kill and after each")
    drill.add_argument("--tenants-per-node", type=int, default=2)
    drill.add_argument("--report", default=None, help="also write the report here as JSON")
    drill.add_argument("--keep", action="store_true", help="keep the cluster's directory")
    drill.set_defaults(run=lambda a: exit(0 if run(a.binary, a.failovers, a.seconds, a.tenants_per_node, a.report, a.keep)["passed"] else 1))
