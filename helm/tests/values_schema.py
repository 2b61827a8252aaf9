#!/usr/bin/env python3
"""Writes (--write) or checks (--check) the rules of the gateway's own
values in helm/s3-gateway/values.schema.json: every `config` value and the
credentials (`rootAccessKey`, `rootSecretKey`, `keys`), from the JSON
Schemas the gateway binary declares (`s3-gateway settings --json`), so the
chart refuses what the gateway would refuse at start and accepts what it
accepts. Descriptions stay the chart's own.

The binary is $S3GW_BIN, else $CARGO_TARGET_DIR/debug/s3-gateway, else
target/debug/s3-gateway (build it with `cargo build -p s3-gateway`)."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMA = REPO_ROOT / "helm" / "s3-gateway" / "values.schema.json"
# Settings the chart sets itself, from other values; not under `config`.
CHART_OWNED = {"listen", "backend", "om", "data_dir", "credentials", "tls_cert", "tls_key", "ozone_records_key_file",
               "sse_master_key_file"}


def gateway_binary() -> Path:
    if os.environ.get("S3GW_BIN"):
        return Path(os.environ["S3GW_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO_ROOT / "target"))
    return target / "debug" / "s3-gateway"


def declared_settings(binary: Path) -> dict[str, dict]:
    """The gateway's settings as it declares them, by TOML key."""
    if not binary.is_file():
        raise SystemExit(f"{binary} is missing: run cargo build -p s3-gateway (or set S3GW_BIN)")
    lines = subprocess.run([str(binary), "settings", "--json"], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    return {setting["key"]: setting for setting in map(json.loads, lines)}


def or_empty(rules: dict) -> dict:
    """The rules of a value the chart also takes empty: "" keeps the gateway's default."""
    rules = dict(rules)
    if "pattern" in rules:
        pattern = rules["pattern"]
        assert pattern.startswith("^") and pattern.endswith("$"), pattern
        rules["pattern"] = f"^(?:{pattern[1:-1]})?$"
    if "enum" in rules:
        rules["enum"] = ["", *rules["enum"]]
    return rules


def with_rules(node: dict, rules: dict) -> dict:
    """`node` (its description kept) with the gateway's rules, type first."""
    return {"type": rules["type"], "description": node["description"],
            **{k: v for k, v in rules.items() if k != "type"}}


def generated(schema: dict, settings: dict[str, dict]) -> dict:
    schema = json.loads(json.dumps(schema))
    config = schema["properties"]["config"]["properties"]
    wanted = set(settings) - CHART_OWNED
    if set(config) != wanted:
        raise SystemExit(f"values.schema.json config differs from the gateway's settings: only in the schema "
                         f"{sorted(set(config) - wanted)}, only in the gateway {sorted(wanted - set(config))}")
    for key, node in config.items():
        config[key] = with_rules(node, or_empty(settings[key]["schema"]))
    key_schema = settings["credentials"]["file_schema"]["properties"]["keys"]["items"]
    credentials = schema["properties"]["credentials"]["properties"]
    for value, field in (("rootAccessKey", "access_key"), ("rootSecretKey", "secret_key")):
        credentials[value] = with_rules(credentials[value], or_empty(key_schema["properties"][field]))
    credentials["keys"]["items"] = key_schema
    return schema


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) == 2 else ""
    if mode not in ("--write", "--check"):
        print("usage: values_schema.py --write | --check", file=sys.stderr)
        return 2
    text = SCHEMA.read_text()
    wanted = json.dumps(generated(json.loads(text), declared_settings(gateway_binary())), indent=2) + "\n"
    if mode == "--write":
        SCHEMA.write_text(wanted)
        return 0
    if wanted != text:
        print(f"{SCHEMA} is out of date: run helm/tests/values_schema.py --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
