"""Unit tests of the benchmark's result handling (bench/report.py) and of
the profile's stage split (bench/stages.py); the benchmark itself is a
documented command, not a test."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import report  # noqa: E402
import stages  # noqa: E402


def s3bench_json(ops_per_sec, rows=None):
    rows = rows or [{"op": "GET", "ops": 100, "errors": 0, "ops_per_sec": ops_per_sec,
                     "mib_per_sec": 1.0, "p50_ms": 1.5, "p90_ms": 2, "p99_ms": 3, "max_ms": 4}]
    return {"mode": "get", "results": rows}


def record(tmp_path, results, server, workload, raw, tool="s3-bench", conc=32, round_=1, size="1KiB"):
    path = tmp_path / f"{server}-{workload.replace(' ', '_')}-{round_}.json"
    path.write_text(json.dumps(raw))
    mode = workload.split()[0]
    assert report.main(["record", str(results), "--file", str(path), "--tool", tool,
                        "--server", server, "--workload", workload, "--mode", mode,
                        "--size", size, "--size-bytes", "1024", "--concurrency", str(conc),
                        "--round", str(round_), "--rss-kib", "2048", "--cpu-s", "0.5"]) == 0


def test_mixed_runs_record_their_total_row_and_every_error(tmp_path):
    results = tmp_path / "results.jsonl"
    rows = [
        {"op": "GET", "ops": 10, "errors": 1, "ops_per_sec": 5, "mib_per_sec": 0, "p50_ms": 1, "p99_ms": 2},
        {"op": "PUT", "ops": 10, "errors": 2, "ops_per_sec": 5, "mib_per_sec": 0, "p50_ms": 3, "p99_ms": 4},
        {"op": "TOTAL", "ops": 20, "errors": 3, "ops_per_sec": 10, "mib_per_sec": 0, "p50_ms": 2, "p99_ms": 4},
    ]
    record(tmp_path, results, "s3gw", "MIXED 1KiB c32", s3bench_json(0, rows))
    [run] = report.load(results)
    assert (run["ops_per_sec"], run["errors"], run["p50_ms"]) == (10, 3, 2)


def test_oha_counts_only_successful_answers(tmp_path):
    results = tmp_path / "results.jsonl"
    oha = {"summary": {"total": 2.0}, "latencyPercentiles": {"p50": 0.001, "p99": 0.004},
           "statusCodeDistribution": {"200": 900, "503": 100}, "errorDistribution": {"timeout": 5}}
    record(tmp_path, results, "s3gw", "oha GET 1KiB c32", oha, tool="oha")
    [run] = report.load(results)
    assert run["ops_per_sec"] == 450
    assert run["errors"] == 105
    assert run["p50_ms"] == 1.0


def test_render_gives_medians_ratios_to_peers_and_ceiling_and_replaces_its_section(tmp_path):
    results = tmp_path / "results.jsonl"
    for round_, (ours, peer, ceiling) in enumerate([(100, 50, 400), (300, 50, 400), (200, 50, 400)], 1):
        record(tmp_path, results, "s3gw", "GET 1KiB c32", s3bench_json(ours), round_=round_)
        record(tmp_path, results, "garage", "GET 1KiB c32", s3bench_json(peer), round_=round_)
        record(tmp_path, results, "nginx", "GET 1KiB c32", s3bench_json(ceiling), round_=round_)
    meta = {"quick": True, "command": "bench/run.sh --quick", "commit": "abc", "finished": "now",
            "rounds": 3, "duration": "3s", "cores": 2, "load_before": "1", "load_after": "2",
            "out": "out", "svg_link": "plot.svg",
            "servers": [{"name": n, "label": label, "version": "1", "durability": "d", "probe": "p"}
                        for n, label in (("nginx", "nginx (ceiling)"), ("s3gw", "s3-gateway"), ("garage", "Garage"))]}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    benchmarks = tmp_path / "BENCHMARKS.md"
    benchmarks.write_text(f"# Benchmarks\n\nkept\n\n{report.BEGIN}\nold\n{report.END}\n\n## After\n")
    assert report.main(["render", str(results), "--meta", str(tmp_path / "meta.json"),
                        "--markdown", str(tmp_path / "report.md"), "--svg", str(tmp_path / "plot.svg"),
                        "--benchmarks", str(benchmarks)]) == 0
    text = benchmarks.read_text()
    assert "kept" in text and "## After" in text and "\nold\n" not in text
    assert text.count(report.BEGIN) == 1
    # Medians over the rounds: ours 200, Garage 50, nginx 400.
    assert "| GET 1KiB c32 | 400 (1.50) | 200 (1.50) | 50.0 (1.50) |" in text
    # Ours ÷ Garage, then ours and Garage ÷ nginx.
    assert "| GET 1KiB c32 | 4.00x | 0.50x | 0.12x |" in text
    assert "--quick" in text
    svg = (tmp_path / "plot.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") == 3


def test_render_states_each_target_met_or_not(tmp_path):
    results = tmp_path / "results.jsonl"
    cells = {  # workload: (ours, garage, minio, nginx)
        "GET 1KiB c32": (300, 200, 100, 500),
        "HEAD 1KiB c32": (200, 250, 100, 500),
        "PUT 1KiB c32": (100, 300, 50, None),
    }
    for workload, rates in cells.items():
        for server, rate in zip(("s3gw", "garage", "minio", "nginx"), rates):
            if rate is not None:
                record(tmp_path, results, server, workload, s3bench_json(rate))
    probes = {"s3gw": "2.0 sync calls, 0.0 O_(D)SYNC opens", "garage": "0.0 sync calls, 0.0 O_(D)SYNC opens",
              "minio": "1.5 sync calls, 0.0 O_(D)SYNC opens", "nginx": "–"}
    meta = {"quick": False, "command": "bench/run.sh", "commit": "abc", "finished": "now",
            "rounds": 1, "duration": "3s", "cores": 2, "load_before": "1", "load_after": "2",
            "out": "out", "svg_link": "plot.svg",
            "servers": [{"name": n, "label": n.capitalize(), "version": "1", "durability": "d", "probe": probes[n]}
                        for n in ("nginx", "s3gw", "garage", "minio")]}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    assert report.main(["render", str(results), "--meta", str(tmp_path / "meta.json"),
                        "--markdown", str(tmp_path / "report.md"), "--svg", str(tmp_path / "plot.svg")]) == 0
    text = (tmp_path / "report.md").read_text()
    assert "| 1 KiB GET c32 ÷ nginx (s3-bench) | ≥ 0.50x | 0.60x | yes |" in text
    assert "| 1 KiB GET c32 p50 (s3-bench) | ≤ 1 ms | 1.50 ms | **no** |" in text
    # 0.5 s of CPU over the 100 timed requests of the recorded run.
    assert "| 1 KiB GET c32, gateway CPU per request (s3-bench) | ≤ 25 µs | 5000 µs | **no** |" in text
    assert "| GET 1KiB c32 ÷ Garage | ≥ 1.00x each | 1.50x | yes |" in text
    assert "| HEAD 1KiB c32 ÷ Garage | ≥ 1.00x each | 0.80x | **no** |" in text
    # Garage's probe counted no sync: the fsync comparison is against MinIO alone.
    assert "| durable PUT 1KiB c32 ÷ the fastest peer that syncs (Minio) | ≥ 1.00x | 2.00x | yes |" in text
    assert "in this run: Minio." in text
    assert "| gateway peak RSS, sampled over the 1 KiB runs and the 256 MiB GETs | ≤ 64 MiB | 2 MiB | yes |" in text
    # With oha's runs, the ceiling is oha's (s3-bench's nginx row is s3-bench's own limit).
    oha = {"summary": {"total": 1.0}, "latencyPercentiles": {"p50": 0.001, "p99": 0.002},
           "statusCodeDistribution": {"200": 1000}, "errorDistribution": {}}
    record(tmp_path, results, "nginx", "oha GET 1KiB c32", oha, tool="oha")
    record(tmp_path, results, "s3gw", "oha GET 1KiB c32", dict(oha, statusCodeDistribution={"200": 100}), tool="oha")
    assert report.main(["render", str(results), "--meta", str(tmp_path / "meta.json"),
                        "--markdown", str(tmp_path / "report.md"), "--svg", str(tmp_path / "plot.svg")]) == 0
    text = (tmp_path / "report.md").read_text()
    assert "| 1 KiB GET c32 ÷ nginx (oha) | ≥ 0.50x | 0.10x | **no** |" in text
    assert "| 1 KiB GET c32 p50 (oha) | ≤ 1 ms | 1.00 ms | yes |" in text
    assert "÷ nginx (s3-bench)" not in text
    # The HTTP floor: the same ratio for the stack with no S3 work, and never a peer.
    record(tmp_path, results, "http-floor", "oha GET 1KiB c32", dict(oha, statusCodeDistribution={"200": 400}),
           tool="oha")
    record(tmp_path, results, "http-floor", "GET 1KiB c32", s3bench_json(10_000))
    meta["servers"].append({"name": "http-floor", "label": "HTTP floor", "version": "1", "durability": "–",
                            "probe": "–"})
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    assert report.main(["render", str(results), "--meta", str(tmp_path / "meta.json"),
                        "--markdown", str(tmp_path / "report.md"), "--svg", str(tmp_path / "plot.svg")]) == 0
    text = (tmp_path / "report.md").read_text()
    assert "| the same for the HTTP floor alone (no S3 work) | ≥ 0.50x | 0.40x | **no** |" in text
    assert "| GET 1KiB c32 ÷ Garage | ≥ 1.00x each | 1.50x | yes |" in text
    # The Ozone pair: each concurrency against Ozone's own gateway, in one row.
    for conc, ours, s3g in ((1, 90, 30), (32, 200, 100)):
        record(tmp_path, results, "s3gw-ozone", f"PUT 1KiB c{conc}", s3bench_json(ours), conc=conc)
        record(tmp_path, results, "ozone-s3g", f"PUT 1KiB c{conc}", s3bench_json(s3g), conc=conc)
    meta["servers"] += [{"name": n, "label": n, "version": "1", "durability": "Ratis", "probe": "–"}
                        for n in ("s3gw-ozone", "ozone-s3g")]
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    assert report.main(["render", str(results), "--meta", str(tmp_path / "meta.json"),
                        "--markdown", str(tmp_path / "report.md"), "--svg", str(tmp_path / "plot.svg")]) == 0
    text = (tmp_path / "report.md").read_text()
    assert "| Ozone: 1 KiB PUT ÷ Ozone's S3G (c1, c32) | ≥ 3.00x each | 3.00x / 2.00x | **no** |" in text


def test_stages_take_the_deepest_named_frame_and_name_hand_offs():
    assert stages.classify(["tokio::runtime::x", "s3_gateway::ops::get::get",
                            "storage_client::embedded::dn::read", "storage_client::token::verify",
                            "sha2::compress"]) == "token issue + check"
    assert stages.classify(["hyper::proto", "s3_gateway::ops::get::get",
                            "storage_client::embedded::om::lookup", "tokio::task::spawn_blocking",
                            "futex_wake_[k]"]) == "metadata (OM role, redb): hand-off to the blocking pool"
    assert stages.classify(["tokio::runtime::blocking::pool::Inner::run", "schedule_[k]"]).startswith("tokio runtime")
    assert stages.classify(["main", "libc_start"]) == "other"
    assert stages.leaf_kind(["s3_gateway::x", "__x64_sys_futex_[k]", "futex_wait_[k]"]) == "kernel: futex and scheduling"
    assert stages.leaf_kind(["s3_gateway::x", "_int_malloc"]) == "allocator (malloc, free)"
