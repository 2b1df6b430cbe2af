#!/usr/bin/env python3
"""A local Cartograph cluster on loopback: N nodes, each replicated by Litestream to its own replica
directory, behind an nginx router that sends each tenant to its node (docs/cluster.md).

  cluster.py up [--nodes 3] [--dir .cluster] [--port 8090]   start it and wait for Ctrl-C
  cluster.py drill [--failovers N] [--seconds S]             the failover drill, then its report
  cluster.py throughput [--writers 6] [--seconds 10]         ingest: one node beside three through the router
  kill -USR1 $(cat .cluster/up.pid)                          a running `up` adds a node (rebalance.py)

The cluster itself is local_cluster.py; each command is a module of its own (up.py, drill.py,
throughput.py) that adds its arguments to the table below.
"""
import argparse

import drill
import throughput
import up


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=".build/release/cartograph")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in (up, drill, throughput):
        command.add_command(commands)
    arguments = parser.parse_args()
    arguments.run(arguments)


if __name__ == "__main__":
    main()
