"""The Helm chart without a cluster: `helm lint --strict` of every example
values file for two Kubernetes versions, every profile rendered and
validated strictly against the Kubernetes OpenAPI schemas (unknown fields
refused) and the prometheus-operator types, values the chart must refuse,
the rendered gateway.toml and keys file accepted by the real binary, and
the chart's unit tests (helm-unittest)."""

import base64
import json
import os
import re
import signal
import subprocess
import sys
import tomllib

import pytest
import requests
import yaml

from conftest import (CHART, KUBE_VERSIONS, REPO_ROOT, VALUES_FILES, find, gateway_binary, helm_template,
                      render, run, tool)
import values_schema
from values_schema import CHART_OWNED

PROFILES = {
    "embedded": [],
    "ozone": ["-f", str(CHART / "ci" / "ozone-values.yaml")],
    "ozone-ingress-tls": ["-f", str(CHART / "ci" / "ozone-ingress-tls-values.yaml")],
    "ozone-hpa-pdb-servicemonitor": ["-f", str(CHART / "ci" / "ozone-ha-values.yaml")],
    "existing-secret": ["-f", str(CHART / "ci" / "existing-secret-values.yaml")],
}
OZONE = ["--set", "backend=ozone", "--set", "ozone.om[0]=om:8981"]


@pytest.mark.parametrize("kube_version", KUBE_VERSIONS)
@pytest.mark.parametrize("values", VALUES_FILES, ids=lambda p: p.name)
def test_lint_strict(values, kube_version):
    result = run([tool("helm"), "lint", "--strict", str(CHART), "-f", str(values), "--kube-version", kube_version],
                 check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[WARNING]" not in result.stdout and "[ERROR]" not in result.stdout, result.stdout


@pytest.mark.parametrize("kube_version", KUBE_VERSIONS)
@pytest.mark.parametrize("profile", PROFILES)
def test_profile_validates_strictly(profile, kube_version, tmp_path):
    manifests = tmp_path / f"{profile}.yaml"
    manifests.write_text(helm_template(*PROFILES[profile], kube_version=kube_version).stdout)
    kinds = {doc["kind"] for doc in yaml.safe_load_all(manifests.read_text()) if doc}
    result = run([tool("kubernetes-validate"), "--strict", "--kubernetes-version", kube_version, "--quiet",
                  str(manifests)], check=False)
    # Only the ServiceMonitor has no Kubernetes schema; crd-check below takes it.
    output = "\n".join(line for line in (result.stdout + result.stderr).splitlines()
                       if "Couldn't find schema for kind ServiceMonitor" not in line)
    assert result.returncode == 0 and not output.strip(), output
    checked = run([tool("crd-check"), str(manifests)])
    expected = 1 if "ServiceMonitor" in kinds else 0
    assert f"{expected} prometheus-operator object(s) valid" in checked.stdout


def test_profiles_render_what_they_promise():
    kinds = {name: {o["kind"] for o in render(*args)} for name, args in PROFILES.items()}
    assert {"StatefulSet", "Secret"} <= kinds["embedded"] and "Deployment" not in kinds["embedded"]
    assert "Deployment" in kinds["ozone"] and "StatefulSet" not in kinds["ozone"]
    assert "Ingress" in kinds["ozone-ingress-tls"]
    assert {"HorizontalPodAutoscaler", "PodDisruptionBudget", "ServiceMonitor", "NetworkPolicy"} \
        <= kinds["ozone-hpa-pdb-servicemonitor"]
    assert "Secret" not in kinds["existing-secret"]
    assert "Secret" in kinds["ozone"], "the records key's Secret"


def test_strict_validation_refuses_unknown_fields(tmp_path):
    """The validator itself is strict: a misspelt field in a rendered Deployment fails."""
    text = helm_template(*PROFILES["ozone"]).stdout.replace("readinessProbe:", "readinesProbe:")
    manifests = tmp_path / "typo.yaml"
    manifests.write_text(text)
    result = run([tool("kubernetes-validate"), "--strict", "--quiet", str(manifests)], check=False)
    assert result.returncode != 0 and "readinesProbe" in result.stdout + result.stderr


def test_crd_check_refuses_unknown_fields(tmp_path):
    text = helm_template(*PROFILES["ozone-hpa-pdb-servicemonitor"]).stdout.replace("scrapeTimeout:", "scrapeTimout:")
    manifests = tmp_path / "typo.yaml"
    manifests.write_text(text)
    result = run([tool("crd-check"), str(manifests)], check=False)
    assert result.returncode != 0 and "scrapeTimout" in result.stderr


def credentials_keys(*names_and_access_keys: tuple[str, str]) -> list[str]:
    """`credentials.keys` of these names and access keys."""
    listed = [{"name": name, "access_key": access_key, "secret_key": "s" * 40}
              for name, access_key in names_and_access_keys]
    return ["--set-json", f"credentials.keys={json.dumps(listed)}"]


REFUSED = {
    "embedded with two replicas": (["--set", "replicaCount=2"],
                                   "backend embedded keeps its store on one volume and runs exactly one replica"),
    "embedded with autoscaling": (["--set", "autoscaling.enabled=true"], "autoscaling needs backend ozone"),
    "embedded with a disruption budget": (["--set", "podDisruptionBudget.enabled=true"],
                                          "podDisruptionBudget needs backend ozone"),
    "ozone without Ozone Managers": (["--set", "backend=ozone"], "backend ozone needs the Ozone Managers"),
    "an embedded-only setting on ozone": ([*OZONE, "--set", "config.read_buffer=1MiB"],
                                          "config.read_buffer is read only by backend embedded"),
    "the reclaimer on ozone": ([*OZONE, "--set", "config.reclaim_grace=1h"],
                               "config.reclaim_grace is read only by backend embedded"),
    "an ozone-only setting on embedded": (["--set", "config.ozone_request_timeout=5s"],
                                          "config.ozone_request_timeout is read only by backend ozone"),
    "a misspelt top-level value": (["--set", "replicaCont=3"], "additional properties 'replicaCont' not allowed"),
    "a misspelt gateway setting": (["--set", "config.regoin=eu-west-1"], "additional properties 'regoin' not allowed"),
    "an unknown back end": (["--set", "backend=s3"], "value must be one of 'embedded', 'ozone'"),
    "a size the gateway cannot parse": (["--set", "config.chunk_size=1MB/s"], "config/chunk_size"),
    "a readiness timeout under 3 s": (["--set", "probes.readiness.timeoutSeconds=1"], "minimum: got 1, want 3"),
    "an Ozone Manager without a port": (["--set", "backend=ozone", "--set", "ozone.om[0]=om"], "ozone/om/0"),
    "a service port of the wrong type": (["--set-string", "service.port=http"], "got string, want integer"),
    "keys in values beside an existing Secret": (["--set", "credentials.existingSecret=mine",
                                                  "--set", "credentials.rootAccessKey=S3GWROOTKEY000000001",
                                                  "--set", f"credentials.rootSecretKey={'s' * 40}"],
                                                 "keys, rootAccessKey and rootSecretKey then belong in that Secret"),
    "two keys of one name": (credentials_keys(("app", "S3GWAPP0000000000001"), ("app", "S3GWAPP0000000000002")),
                             "two keys have the name app"),
    "two keys of one access key": (credentials_keys(("app", "S3GWAPP0000000000001"), ("ops", "S3GWAPP0000000000001")),
                                   "two keys have the access_key S3GWAPP0000000000001"),
    "half a root key": (["--set", "credentials.rootAccessKey=S3GWROOTKEY000000001"], "must be set together"),
    "TLS without a Secret": (["--set", "tls.enabled=true"], "tls.enabled needs tls.secretName"),
    "both disruption budget bounds": ([*OZONE, "--set", "podDisruptionBudget.enabled=true",
                                       "--set", "podDisruptionBudget.minAvailable=1"],
                                      "set minAvailable or maxUnavailable, not both"),
    "a grace period shorter than the preStop sleep": (["--set", "terminationGracePeriodSeconds=5"],
                                                       "terminationGracePeriodSeconds must be longer"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_refused_values(case):
    args, message = REFUSED[case]
    result = helm_template(*args, check=False)
    assert result.returncode != 0, f"rendered although {case}:\n{result.stdout[:2000]}"
    assert message in result.stderr, result.stderr


def config_and_keys(objects: list[dict]) -> tuple[str, str | None]:
    toml = find(objects, "ConfigMap")["data"]["gateway.toml"]
    secrets = [o for o in objects if o["kind"] == "Secret" and "keys.toml" in o["data"]]
    keys = None
    if secrets:
        keys = base64.b64decode(secrets[0]["data"]["keys.toml"]).decode()
    return toml, keys


def records_key(objects: list[dict]) -> str:
    """The records key the chart's own Secret holds (backend ozone)."""
    secret = next(o for o in objects if o["kind"] == "Secret" and o["metadata"]["name"].endswith("-records-key"))
    return base64.b64decode(secret["data"]["records-key"]).decode()


def test_ozone_gateway_toml_is_what_the_gateway_reads(tmp_path):
    """The binary accepts the rendered file: on Ozone it gets as far as
    contacting the (absent) Ozone Managers and exits 1, not 2 (bad config)."""
    objects = render(*PROFILES["ozone"])
    toml, _ = config_and_keys(objects)
    parsed = tomllib.loads(toml)
    assert parsed["listen"] == "0.0.0.0:9878"
    assert parsed["ozone_records_key_file"] == "/etc/s3-gateway/records/records-key"
    key_file = tmp_path / "records-key"
    key_file.write_text(records_key(objects))
    key_file.chmod(0o600)
    toml = toml.replace("/etc/s3-gateway/records/records-key", str(key_file))
    assert parsed["om"] == ["om-0.om.ozone.svc:8981", "om-1.om.ozone.svc:8981", "om-2.om.ozone.svc:8981"]
    assert parsed["ozone_request_timeout"] == "30s"
    config = tmp_path / "gateway.toml"
    config.write_text(toml.replace("0.0.0.0:9878", "127.0.0.1:0"))
    result = run([str(gateway_binary()), "--config", str(config), "--om", "127.0.0.1:1",
                  "--data-dir", str(tmp_path / "data")], check=False, timeout=120)
    assert result.returncode == 1 and "cannot use the Ozone cluster at 127.0.0.1:1" in result.stderr, result


def test_embedded_gateway_toml_and_keys_file_start_the_gateway(tmp_path):
    """The rendered gateway.toml and the Secret's keys file start the real
    gateway; paths meant for the pod are pointed at temporary ones."""
    objects = render("-f", str(CHART / "ci" / "embedded-values.yaml"))
    toml, keys = config_and_keys(objects)
    parsed = tomllib.loads(toml)
    assert parsed["credentials"] == "/etc/s3-gateway/credentials/keys.toml"
    assert parsed["region"] == "eu-west-1" and parsed["multipart_upload_expiry"] == "3d"
    assert [k["name"] for k in tomllib.loads(keys)["keys"]] == ["backups", "ops"]
    config = tmp_path / "gateway.toml"
    config.write_text(toml)
    (tmp_path / "keys.toml").write_text(keys)
    (tmp_path / "keys.toml").chmod(0o600)  # a keys file others may read is refused
    env = {"S3GW_LISTEN": "127.0.0.1:0", "S3GW_DATA_DIR": str(tmp_path / "data"),
           "S3GW_CREDENTIALS": str(tmp_path / "keys.toml"),
           "S3GW_ROOT_ACCESS_KEY": "S3GWEXAMPLEROOT00001",
           "S3GW_ROOT_SECRET_KEY": "exampleexampleexampleexampleexample00001"}
    log = tmp_path / "gateway.log"
    with open(log, "w") as stderr:
        process = subprocess.Popen([str(gateway_binary()), "--config", str(config)], env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL)
    try:
        # The banner: the data line, the root keys, then the endpoint (EOF if it exits).
        banner = []
        while not banner or not (banner[-1] == "" or banner[-1].startswith("s3-gateway listening on ")):
            banner.append(process.stdout.readline())
        assert banner[-1].startswith("s3-gateway listening on http://127.0.0.1:"), "".join(banner) + log.read_text()
        assert banner[0].startswith("Data: "), banner
        assert "S3GWEXAMPLEKEY000002, S3GWEXAMPLEROOT00001" in banner[1], "the keys file's root key is loaded"
        endpoint = banner[-1].split()[-1]
        # Serving (and so handling SIGTERM) once /health answers.
        assert requests.get(f"{endpoint}/health", timeout=10).status_code == 200
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    assert process.returncode == 0


def declared_settings() -> dict[str, dict]:
    """The gateway's settings as it declares them (`s3-gateway settings --json`)."""
    return values_schema.declared_settings(gateway_binary())


def test_gateway_settings_are_the_gateways():
    """Every setting the gateway declares is either set by the chart or a
    `config` value, and no `config` value is unknown to it."""
    settings = declared_settings()
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert set(values["config"]) | CHART_OWNED == set(settings)
    assert not set(values["config"]) & CHART_OWNED


def test_values_refused_on_a_back_end_are_those_the_gateway_refuses():
    """The chart refuses a `config` value on the back end the gateway
    refuses it on, and only there."""
    helpers = (CHART / "templates" / "_helpers.tpl").read_text()
    refused = {}
    for keys, backend in re.findall(r'range \$key := list ([^}]*?) -\}\}(?:(?!range).)*?read only by backend (\w+)',
                                    helpers, re.DOTALL):
        refused[backend] = set(re.findall(r'"([a-z0-9_]+)"', keys))
    for backend in ("embedded", "ozone"):
        declared = {key for key, s in declared_settings().items() if s["read_by"] == backend}
        assert refused[backend] == declared - CHART_OWNED, backend


def test_values_schema_holds_the_gateways_rules():
    """The rules of `config` and the credentials in values.schema.json are
    those the gateway declares (values_schema.py; test_values_rules.py
    tries each one)."""
    result = run([sys.executable, str(REPO_ROOT / "helm" / "tests" / "values_schema.py"), "--check"], check=False,
                 env={**os.environ, "S3GW_BIN": str(gateway_binary())})
    assert result.returncode == 0, result.stdout + result.stderr


def test_helm_unittest():
    result = run([tool("helm-unittest"), "--strict", str(CHART)], check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = re.search(r"Tests:\s+(\d+) passed", result.stdout)
    assert summary and int(summary.group(1)) > 0, result.stdout


def test_readme_lists_every_value():
    result = run([sys.executable, str(REPO_ROOT / "helm" / "tests" / "values_readme.py"), "--check"], check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_config_checksum_is_the_digest_of_gateway_toml():
    """`checksum/config` changes exactly when gateway.toml does."""
    import hashlib

    def checksum_and_toml(*args):
        objects = render(*PROFILES["ozone"], *args)
        annotations = find(objects, "Deployment")["spec"]["template"]["metadata"]["annotations"]
        return annotations["checksum/config"], find(objects, "ConfigMap")["data"]["gateway.toml"]

    checksum, toml = checksum_and_toml()
    assert checksum == hashlib.sha256(toml.encode()).hexdigest()
    changed, _ = checksum_and_toml("--set", "config.log_level=debug")
    assert changed != checksum
    unchanged, _ = checksum_and_toml("--set", "resources.requests.cpu=2")
    assert unchanged == checksum


def test_pod_template_carries_no_digest_of_the_credentials():
    """Anyone who may read pods must not get an offline oracle for guessed
    secrets: the pod template holds no digest of the credentials values,
    of any one of them or of the Secret's data. (That it still rolls when
    the Secret changes needs the Secret in the cluster: the helm-unittest
    suite credentials_roll_test.yaml fakes it.)"""
    import hashlib

    root = ["S3GWROOTKEY000000001", "guessable-secret-guessable-secret"]
    app = {"name": "app", "access_key": "S3GWAPP0000000000001", "secret_key": "another-guessable-one-another-one"}
    objects = render(*PROFILES["ozone"], "--set", f"credentials.rootAccessKey={root[0]}",
                     "--set", f"credentials.rootSecretKey={root[1]}",
                     "--set-json", f"credentials.keys=[{json.dumps(app)}]")
    values = yaml.safe_load((CHART / "values.yaml").read_text())["credentials"]
    values.update(rootAccessKey=root[0], rootSecretKey=root[1], keys=[app])
    secrets = [*root, *app.values(), json.dumps(values, sort_keys=True, separators=(",", ":"))]
    for secret in (o for o in objects if o["kind"] == "Secret"):  # credentials and the records key
        data = secret["data"]
        secrets += [json.dumps(data, sort_keys=True, separators=(",", ":")),
                    *data.values(), *(base64.b64decode(v).decode() for v in data.values())]
    digests = {getattr(hashlib, name)(text.encode()).hexdigest()
               for name in ("md5", "sha1", "sha256", "sha512") for text in secrets}
    pod = find(objects, "Deployment")["spec"]["template"]
    text = json.dumps(pod)
    assert not [d for d in digests if d in text]
    # Nor anything that looks like one, but the digest of the (public) gateway.toml.
    annotations = dict(pod["metadata"]["annotations"])
    del annotations["checksum/config"]
    assert not [v for v in annotations.values() if re.fullmatch(r"[0-9a-fA-F]{32,}", v)], annotations
    assert annotations["s3-gateway/credentials-revision"].isdigit()


def test_operations_guide_shows_the_worked_example():
    """docs/operations.md quotes examples/ozone.yaml whole, as linted here."""
    guide = (REPO_ROOT / "docs" / "operations.md").read_text()
    example = (CHART / "examples" / "ozone.yaml").read_text()
    assert f"```yaml\n{example}```" in guide, "docs/operations.md differs from helm/s3-gateway/examples/ozone.yaml"
