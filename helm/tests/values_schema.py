#!/usr/bin/env python3
"""Writes (--write) or checks (--check) the rules of the gateway's own
values in helm/s3-gateway/values.schema.json: every `config` value and the
credentials (`rootAccessKey`, `rootSecretKey`, `keys`), from the JSON
Schemas the gateway binary declares (`s3-gateway settings --json`), so the
chart refuses what the gateway would refuse at start and accepts what it
accepts. A setting the gateway declares and the chart does not yet take
is added, described by the gateway's `--help` line, with an empty value in
values.yaml; one it no longer declares is dropped from both. Descriptions
are then the chart's own to edit.

The binary is $S3GW_BIN, else $CARGO_TARGET_DIR/debug/s3-gateway, else
target/debug/s3-gateway (build it with `cargo build -p s3-gateway`)."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMA = REPO_ROOT / "helm" / "s3-gateway" / "values.schema.json"
VALUES = REPO_ROOT / "helm" / "s3-gateway" / "values.yaml"
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


def sentence_part(text: str) -> str:
    """`text` to follow a colon: "Address to ..." reads "address to ...",
    an acronym ("URL of ...") stays."""
    return text[0].lower() + text[1:] if text[1:2].islower() else text


def generated(schema: dict, settings: dict[str, dict]) -> dict:
    schema = json.loads(json.dumps(schema))
    old = schema["properties"]["config"]["properties"]
    # The chart's order and descriptions for what it has; new settings after
    # them, in the gateway's order.
    keys = [key for key in old if key in settings and key not in CHART_OWNED]
    keys += [key for key in settings if key not in CHART_OWNED and key not in old]
    config = {}
    for key in keys:
        node = old.get(key) or {"description": f"`{key}`: {sentence_part(settings[key]['help'])}."}
        config[key] = with_rules(node, or_empty(settings[key]["schema"]))
    schema["properties"]["config"]["properties"] = config
    key_schema = settings["credentials"]["file_schema"]["properties"]["keys"]["items"]
    credentials = schema["properties"]["credentials"]["properties"]
    for value, field in (("rootAccessKey", "access_key"), ("rootSecretKey", "secret_key")):
        credentials[value] = with_rules(credentials[value], or_empty(key_schema["properties"][field]))
    credentials["keys"]["items"] = key_schema
    return schema


# A value left to the gateway's default.
EMPTY = '""'


def values_yaml(text: str, keys: list[str]) -> str:
    """values.yaml with its `config:` block holding exactly `keys`: those
    already there keep their place and value, new ones follow, empty (the
    gateway's default)."""
    lines = text.splitlines(keepends=True)
    start = lines.index("config:\n") + 1
    end = start
    while end < len(lines) and lines[end].startswith("  "):
        end += 1
    given = {key: value.strip() for key, value in (line.strip().split(":", 1) for line in lines[start:end])}
    order = [key for key in given if key in keys] + [key for key in keys if key not in given]
    block = [f"  {key}: {given.get(key, EMPTY)}\n" for key in order]
    return "".join(lines[:start] + block + lines[end:])


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) == 2 else ""
    if mode not in ("--write", "--check"):
        print("usage: values_schema.py --write | --check", file=sys.stderr)
        return 2
    text, values = SCHEMA.read_text(), VALUES.read_text()
    schema = generated(json.loads(text), declared_settings(gateway_binary()))
    wanted = json.dumps(schema, indent=2) + "\n"
    wanted_values = values_yaml(values, list(schema["properties"]["config"]["properties"]))
    if mode == "--write":
        SCHEMA.write_text(wanted)
        VALUES.write_text(wanted_values)
        return 0
    stale = [path for path, now, then in ((SCHEMA, text, wanted), (VALUES, values, wanted_values)) if now != then]
    for path in stale:
        print(f"{path} is out of date: run helm/tests/values_schema.py --write", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
