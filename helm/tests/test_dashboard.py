"""The Grafana dashboard (helm/s3-gateway/dashboards/s3-gateway.json) is
built from the metrics the gateway really exports: every s3gw_* name a
query uses is exported by a running gateway, every exported family is shown
somewhere, and every query is PromQL that promtool accepts. A metric added
to the gateway fails this test until the dashboard shows it."""

import json
import re
import signal
import subprocess

import pytest
import requests
import yaml

from conftest import CHART, find, gateway_binary, render, tool

DASHBOARD = CHART / "dashboards" / "s3-gateway.json"
# Grafana's variables, replaced by what Prometheus would be sent.
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$namespace": ".*", "$job": ".*"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def queries(dashboard: dict) -> list[str]:
    found = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    found += [v["query"]["query"] for v in dashboard["templating"]["list"] if v["type"] == "query"]
    return found


@pytest.fixture(scope="module")
def metrics_page(tmp_path_factory) -> str:
    """The /metrics of a real gateway that served a request."""
    data = tmp_path_factory.mktemp("data")
    process = subprocess.Popen([str(gateway_binary()), "--listen", "127.0.0.1:0", "--data-dir", str(data)],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    try:
        line = ""
        while not line.startswith("s3-gateway listening on "):
            line = process.stdout.readline()
            assert line, "the gateway exited before listening"
        endpoint = line.split()[-1]
        requests.get(f"{endpoint}/some-bucket", timeout=10)  # refused: a labelled request counter
        text = requests.get(f"{endpoint}/metrics", timeout=10).text
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    return text


@pytest.fixture(scope="module")
def exported(metrics_page) -> dict[str, str]:
    """Metric family -> type."""
    return dict(re.findall(r"^# TYPE (\S+) (\S+)$", metrics_page, re.MULTILINE))


def test_metrics_page_passes_promtool(metrics_page):
    result = subprocess.run([tool("promtool"), "check", "metrics"], input=metrics_page, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dashboard_uses_only_exported_metrics(exported):
    allowed = set(exported)
    allowed |= {name + suffix for name, kind in exported.items() if kind == "histogram" for suffix in HISTOGRAM_SUFFIXES}
    used = {name for query in queries(json.loads(DASHBOARD.read_text())) for name in re.findall(r"\bs3gw_\w+", query)}
    assert used, "the dashboard queries no s3gw_ metric"
    assert used <= allowed, f"not exported by the gateway: {sorted(used - allowed)}"


def test_dashboard_shows_every_exported_metric(exported):
    text = " ".join(queries(json.loads(DASHBOARD.read_text())))
    missing = [name for name, kind in exported.items()
               if not re.search(rf"\b{name}({'|'.join(HISTOGRAM_SUFFIXES)})?\b", text)]
    assert not missing, f"exported but on no panel: {missing}"


def test_dashboard_queries_are_valid_promql(tmp_path):
    dashboard = json.loads(DASHBOARD.read_text())
    rules = []
    for number, query in enumerate(queries(dashboard)):
        if query.startswith("label_values("):
            continue  # a Grafana function, not PromQL
        for variable, value in GRAFANA_VARIABLES.items():
            query = query.replace(variable, value)
        rules.append({"record": f"s3gw_dashboard:query{number}", "expr": query})
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    result = subprocess.run([tool("promtool"), "check", "rules", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rules)} rules found" in result.stdout, result.stdout


def test_dashboard_panels_are_well_formed():
    dashboard = json.loads(DASHBOARD.read_text())
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    assert all(panel["datasource"]["uid"] == "${datasource}" for panel in dashboard["panels"])


def test_dashboard_configmap_carries_the_file():
    objects = render("--set", "metrics.dashboard.enabled=true")
    configmap = find(objects, "ConfigMap", "-dashboard")
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(configmap["data"]["s3-gateway.json"]) == json.loads(DASHBOARD.read_text())
