"""The rules of the gateway's own values in values.schema.json (`config`
and the credentials), which values_schema.py generates from the rules the
gateway binary declares. For each rule, a value the gateway refuses at
start: `helm template` must refuse it on the schema, and the gateway
itself, given it, must stop with a configuration error (exit 2). And the
boundary values the schema accepts must render into a gateway.toml and a
Secret the gateway starts with."""

import base64
import json
import os
import subprocess
import tomllib

import pytest
import yaml

from conftest import find, gateway_binary, helm_template, render, run
from values_schema import CHART_OWNED, declared_settings

SETTINGS = declared_settings(gateway_binary())
CONFIG = {key: s for key, s in SETTINGS.items() if key not in CHART_OWNED}
OZONE = ["--set", "backend=ozone", "--set", "ozone.om[0]=om:8981"]
ROOT = {"S3GW_ROOT_ACCESS_KEY": "S3GWEXAMPLEROOT00001", "S3GW_ROOT_SECRET_KEY": "e" * 40}

# Values of the right type whose text the gateway refuses, by kind.
BAD_TEXT = {
    "size": ["1MB/s", "0KiB"],
    "duration": ["15M", "1w"],
    "count": ["4k", "0"],
    "bool": ["yes", 1],
    "choice": ["xml"],
    "text": [5],
    "path": [5],
    "list": [5, [5]],
}
BAD_WORDS = {"region": ["EU-WEST-1"], "domain": ["s3.example.com/bucket"]}
# Values the gateway accepts, written as text, by kind.
GOOD_TEXT = {"size": "64KiB", "duration": "15m", "count": "16", "bool": "false"}
GOOD_WORDS = {"region": "eu-west-1", "domain": "s3.example.com", "log_level": "s3_gateway=debug,info",
              "log_format": "json"}


def backend_args(key: str) -> list[str]:
    return OZONE if SETTINGS[key]["read_by"] == "ozone" else []


def refused_config_values():
    for key, setting in CONFIG.items():
        schema = setting["schema"]
        values = list(BAD_WORDS.get(key, []))
        if "minimum" in schema:
            values.append(schema["minimum"] - 1)
        if "maximum" in schema:
            values.append(schema["maximum"] + 1)
        if setting["kind"] == "duration" and schema["minimum"] > 0:
            values.append("0s")
        values += BAD_TEXT[setting["kind"]]
        for value in values:
            yield pytest.param(key, value, id=f"{key}={value!r}")


def toml_value(value) -> str:
    return json.dumps(value)  # a number, a string or a boolean alike in TOML


def gateway_refuses(tmp_path, toml: str = "", env: dict | None = None) -> str:
    """The gateway's configuration error for this file and environment."""
    config = tmp_path / "refused.toml"
    config.write_text(toml)
    env = {"PATH": os.environ["PATH"], "S3GW_LISTEN": "127.0.0.1:0", "S3GW_DATA_DIR": str(tmp_path / "data"),
           **ROOT, **(env or {})}
    result = run([str(gateway_binary()), "--config", str(config)], check=False, env=env, timeout=60)
    assert result.returncode == 2, f"the gateway took {toml!r} {env}: {result}"
    return result.stderr


@pytest.mark.parametrize("key, value", list(refused_config_values()))
def test_the_schema_refuses_a_config_value_the_gateway_refuses(key, value, tmp_path):
    set_value = ["--set-json", f"config.{key}={json.dumps(value)}"]
    result = helm_template(*backend_args(key), *set_value, check=False)
    assert result.returncode != 0, f"rendered config.{key}={value!r}"
    assert f"config/{key}" in result.stderr, result.stderr
    toml = f"{key} = {toml_value(value)}\n"
    if SETTINGS[key]["read_by"] == "ozone":
        toml += 'backend = "ozone"\nom = "127.0.0.1:1"\n'
    assert key in gateway_refuses(tmp_path, toml)


def long(char: str, length: int) -> str:
    return char * length


# One value per rule of a key: too short, too long, a character refused.
REFUSED_KEYS = {
    "access_key": ["S3GWTOOSHORT123", long("A", 129), "S3GWlowercase00001", "S3GW/SLASH000000001"],
    "secret_key": [long("s", 29), long("s", 129), "with space" + long("s", 30), "é" + long("s", 30)],
    "name": ["", long("n", 65), "-dash", "a/b"],
}
GOOD_KEY = {"name": "app", "access_key": "S3GWAPP0000000000001", "secret_key": long("a", 40)}


@pytest.mark.parametrize("field, value", [(f, v) for f, values in REFUSED_KEYS.items() for v in values],
                         ids=lambda v: repr(v)[:24])
def test_the_schema_refuses_a_key_the_gateway_refuses(field, value, tmp_path):
    key = {**GOOD_KEY, field: value}
    result = helm_template("--set-json", f"credentials.keys=[{json.dumps(key)}]", check=False)
    assert result.returncode != 0 and f"credentials/keys/0/{field}" in result.stderr, result.stderr
    keys = tmp_path / "keys.toml"
    keys.write_text("[[keys]]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in key.items()))
    keys.chmod(0o600)
    assert field in gateway_refuses(tmp_path, f"credentials = {toml_value(str(keys))}\n")
    if field == "name":
        return
    value_name = {"access_key": "rootAccessKey", "secret_key": "rootSecretKey"}[field]
    root = {"rootAccessKey": ROOT["S3GW_ROOT_ACCESS_KEY"], "rootSecretKey": ROOT["S3GW_ROOT_SECRET_KEY"],
            value_name: value}
    result = helm_template(*(a for k, v in root.items() for a in ("--set-json", f"credentials.{k}={json.dumps(v)}")),
                           check=False)
    assert result.returncode != 0 and f"credentials/{value_name}" in result.stderr, result.stderr
    env = {"S3GW_ROOT_ACCESS_KEY": root["rootAccessKey"], "S3GW_ROOT_SECRET_KEY": root["rootSecretKey"]}
    assert field in gateway_refuses(tmp_path, env=env)


def boundary_values(which: str, backend: str) -> dict:
    """The `config` values at their least (`minimum`) or greatest
    (`maximum`) the schema accepts, or written as text (`text`), for the
    settings this back end reads."""
    values = {}
    for key, setting in CONFIG.items():
        if setting["read_by"] not in ("both", backend):
            continue
        schema = setting["schema"]
        if which == "text":
            value = GOOD_WORDS.get(key, GOOD_TEXT.get(setting["kind"]))
        elif setting["kind"] == "bool":
            value = which == "maximum"
        else:
            value = schema.get(which)
        if value is not None:
            values[key] = value
    # At start the gateway waits for a listing of the access keys up to
    # this long before it stores the keys file's keys: kept short here.
    values["unknown_key_cache_ttl"] = 0
    if values.get("proxy_protocol") is True:
        # A rule across settings (values.schema.json's if/then): the proxies that send the header.
        values["trusted_proxies"] = ["127.0.0.0/8"]
    if which == "minimum":
        # The storage's own rules across settings are beyond the schema: a
        # chunk of whole 16 KiB checksum windows, at most a block.
        values.update(block_size=16384, chunk_size=16384)
    return values


def start_with(objects: list[dict], tmp_path) -> subprocess.CompletedProcess | str:
    """Starts the gateway on the rendered gateway.toml and Secret, with the
    paths meant for the pod pointed at temporary ones: on embedded, its
    endpoint line once it serves; on ozone, its exit once it finds no OM."""
    toml = tomllib.loads(find(objects, "ConfigMap")["data"]["gateway.toml"])
    secret = next(o["data"] for o in objects if o["kind"] == "Secret" and "root-access-key" in o["data"])
    env = {"PATH": os.environ["PATH"],
           "S3GW_ROOT_ACCESS_KEY": base64.b64decode(secret["root-access-key"]).decode(),
           "S3GW_ROOT_SECRET_KEY": base64.b64decode(secret["root-secret-key"]).decode()}
    toml.update(listen="127.0.0.1:0", data_dir=str(tmp_path / "data"))
    if "credentials" in toml:
        keys = tmp_path / "keys.toml"
        keys.write_text(base64.b64decode(secret["keys.toml"]).decode())
        keys.chmod(0o600)
        toml["credentials"] = str(keys)
    if toml["backend"] == "ozone":
        records_key = tmp_path / "records-key"
        records_key.write_text("r" * 44)
        records_key.chmod(0o600)
        toml.update(om=["127.0.0.1:1"], ozone_records_key_file=str(records_key))
    config = tmp_path / "gateway.toml"
    config.write_text("".join(f"{k} = {toml_value(v)}\n" for k, v in toml.items()))
    if toml["backend"] == "ozone":
        return run([str(gateway_binary()), "--config", str(config)], check=False, env=env, timeout=120)
    log = tmp_path / "gateway.log"
    with open(log, "w") as stderr:
        process = subprocess.Popen([str(gateway_binary()), "--config", str(config)], env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL)
    try:
        for line in process.stdout:
            if line.startswith("s3-gateway listening on "):
                return line
        process.wait(timeout=30)
        return log.read_text()
    finally:
        # Killed, not stopped: a drain_delay at its greatest would wait years.
        process.kill()
        process.wait(timeout=30)


@pytest.mark.parametrize("backend", ["embedded", "ozone"])
@pytest.mark.parametrize("which", ["minimum", "maximum", "text"])
def test_boundary_values_render_and_start_the_gateway(which, backend, tmp_path):
    """From a values file (YAML numbers reach the templates as floats) and
    with keys at their shortest and longest."""
    values = {"config": boundary_values(which, backend),
              "credentials": {"rootAccessKey": long("A", 16 if which == "minimum" else 128),
                              "rootSecretKey": long("~", 30 if which == "minimum" else 128),
                              "keys": [{"name": long("a", 1 if which == "minimum" else 64),
                                        "access_key": long("K", 16 if which == "minimum" else 128),
                                        "secret_key": long("!", 30 if which == "minimum" else 128)}]}}
    if backend == "ozone":
        values.update(backend="ozone", ozone={"om": ["om:8981"]})
    file = tmp_path / "values.yaml"
    file.write_text(yaml.safe_dump(values))
    objects = render("-f", str(file))
    rendered = tomllib.loads(find(objects, "ConfigMap")["data"]["gateway.toml"])
    for key, value in values["config"].items():
        assert rendered[key] == value, f"{key}: {value!r} rendered as {rendered[key]!r}"
    started = start_with(objects, tmp_path)
    if backend == "ozone":
        assert started.returncode == 1 and "cannot use the Ozone cluster at 127.0.0.1:1" in started.stderr, started
    else:
        assert started.startswith("s3-gateway listening on "), started


def test_proxy_protocol_without_trusted_proxies_is_refused_by_both(tmp_path):
    refused = helm_template("--set", "config.proxy_protocol=true", check=False)
    assert refused.returncode != 0 and "trusted_proxies" in refused.stderr, refused
    render("--set", "config.proxy_protocol=true", "--set", "config.trusted_proxies=10.0.0.0/8")
    assert "needs trusted_proxies" in gateway_refuses(tmp_path, "proxy_protocol = true\n")


def test_a_number_given_with_set_renders_as_a_toml_integer():
    """`--set config.max_connections=8192` (issue 24) passes a number."""
    objects = render("--set", "config.max_connections=8192", "--set", "config.reclaim_grace=0")
    toml = find(objects, "ConfigMap")["data"]["gateway.toml"]
    assert "max_connections = 8192\n" in toml and "reclaim_grace = 0\n" in toml, toml
