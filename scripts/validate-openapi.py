#!/usr/bin/env python3
"""Validates an OpenAPI document and checks the conventions Cartograph relies on."""
import sys

import yaml
from openapi_spec_validator import validate

path = sys.argv[1] if len(sys.argv) > 1 else "openapi.yaml"
with open(path) as f:
    spec = yaml.safe_load(f)
validate(spec)
operations = [(m.upper(), p) for p, item in spec["paths"].items() for m in item if m in ("get", "put", "post", "delete", "patch")]
ids = [spec["paths"][p][m.lower()]["operationId"] for m, p in operations]
assert len(ids) == len(set(ids)), "operationIds must be unique"
planned = sum(1 for m, p in operations if spec["paths"][p][m.lower()].get("x-cartograph-planned"))
print(f"{path}: valid OpenAPI {spec['openapi']}, {len(operations)} operations ({planned} planned)")
