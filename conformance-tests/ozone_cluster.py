"""The Ozone dev cluster under test, driven through `ozone/ozone-dev`.

`S3GW_OZONE_PROFILE` names its profile (default, ha, secure, ha-secure, secure-tls; see
ozone/README.md); `S3GW_OZONE_OM` its OM gRPC address(es).
"""

import base64
import os
import re
import shlex
import subprocess
import time
from functools import cache
from pathlib import Path

SUITE_DIR = Path(__file__).resolve().parent
OZONE_DEV = SUITE_DIR / "ozone" / "ozone-dev"
PROFILE = os.environ.get("S3GW_OZONE_PROFILE", "default")
# What the profile is made of: an OM ring and three datanodes, Kerberos and tokens,
# gRPC TLS (where Ozone's own S3 gateway cannot run: ozone/README.md).
HA = PROFILE in ("ha", "ha-secure")
SECURE = PROFILE in ("secure", "ha-secure", "secure-tls")
TLS = PROFILE == "secure-tls"


def ozone_dev(*args: str, timeout: float) -> str:
    """Runs `ozone-dev --profile PROFILE ARGS`; its stdout, or an AssertionError."""
    result = subprocess.run([str(OZONE_DEV), "--profile", PROFILE, *args], capture_output=True, text=True,
                            timeout=timeout, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        raise AssertionError(f"ozone-dev {' '.join(args)} exited {result.returncode}\n"
                             f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}")
    return result.stdout


def batch_args(*commands: list[str]) -> list[str]:
    """Arguments that make one of Ozone's shells (`sh`, `s3`, `tenant`) run the commands
    one after another in one client JVM (the shells' `--execute` batch mode), stopping
    at the first that fails: each JVM start costs seconds of CPU, a command inside one a
    fraction of a second."""
    return [arg for command in commands for arg in ("--execute", shlex.join(command))]


def ozone_sh_batch(*commands: list[str], timeout: float) -> str:
    return ozone_dev("sh", *batch_args(*commands), timeout=timeout)


@cache
def settings() -> dict[str, str]:
    """`ozone-dev env`: work dir, OM gRPC addresses, Ozone S3G address."""
    out = ozone_dev("env", timeout=30)
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


SECRETS_GIVEN: set[tuple[str, str]] = set()


def give_s3_secret(access_key: str, secret_key: str) -> None:
    """On the secure profile, makes `secret_key` the key's secret in the OM's own store:
    the OM checks every request's signature under it, and the gateway refuses at start a
    configured key whose secret the OM does not hold (an administrator's `ozone s3
    getsecret` gives a new key a secret, `setsecret` replaces it). Nothing elsewhere."""
    if not SECURE or (access_key, secret_key) in SECRETS_GIVEN:
        return
    try:
        # One client JVM for both (every gateway a secure test starts has its key given).
        ozone_dev("s3", *batch_args(["getsecret", "-u", access_key],
                                    ["setsecret", "-u", access_key, "-s", secret_key]), timeout=120)
    except AssertionError:
        # getsecret refuses a key that has a secret already, and the batch stops there.
        ozone_dev("s3", "setsecret", "-u", access_key, "-s", secret_key, timeout=120)
    SECRETS_GIVEN.add((access_key, secret_key))


def records_key_file() -> str:
    """The records key every gateway on this cluster seals its records with (ozone_records_key_file):
    the one `ozone-dev start` made in the cluster's work dir, made here if that start predates it."""
    path = Path(settings().get("S3GW_OZONE_RECORDS_KEY_FILE")
                or Path(settings()["OZONE_DEV_WORK"]) / "s3gw-records-key")
    if not path.exists():
        old_umask = os.umask(0o077)
        try:
            path.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
        finally:
            os.umask(old_umask)
    return str(path)


def om_addresses() -> list[str]:
    return settings()["OZONE_OM_ADDRESS"].split(",")


def kill(role: str) -> None:
    ozone_dev("kill", role, timeout=60)


def start() -> None:
    """Brings every stopped role back and waits until a write succeeds."""
    ozone_dev("start", "--with-s3g", timeout=600)


def om_leader() -> str:
    """The node id of the OM ring's leader (ha and ha-secure profiles), from the
    OMs' JMX (no JVM started); an AssertionError while there is no single one."""
    return ozone_dev("om-leader", timeout=30).strip()


def transfer_om_leader(node_id: str) -> None:
    ozone_dev("admin", "om", "transfer", "--service-id", settings()["OZONE_OM_SERVICE_ID"], "-n", node_id,
              timeout=180)


AUDIT_LINE = re.compile(r"op=(?P<op>[A-Z_]+) (?P<params>\{.*\}) \| ret=(?P<ret>[A-Z]+)")


def om_audit_entries(role: str | None = None) -> list[tuple[str, str, str]]:
    """(operation, parameters, result) of every entry in one OM's audit log,
    oldest first (by default the only OM's, or on an OM ring om1's). Every
    OM of a ring applies, and audits, every write; a read only the OM that
    served it."""
    role = role or ("om1" if HA else "om")
    path = Path(settings()["OZONE_DEV_WORK"]) / "logs" / f"{role}-audit.log"
    entries = []
    for line in path.read_text(errors="replace").splitlines():
        match = AUDIT_LINE.search(line)
        if match:
            entries.append((match["op"], match["params"], match["ret"]))
    return entries


def om_audit(op: str, role: str | None = None) -> list[tuple[str, str]]:
    """(parameters, result) of every `op` in one OM's audit log, oldest first."""
    return [(params, ret) for name, params, ret in om_audit_entries(role) if name == op]


def datanode_roles() -> dict[str, str]:
    """Datanode UUID -> its role name (dn, dn1, ...), from each one's datanode.id."""
    roles = {}
    for path in (Path(settings()["OZONE_DEV_WORK"]) / "data").glob("dn*/meta/datanode.id"):
        match = re.search(r"^\s*uuid:\s*(\S+)", path.read_text(), re.MULTILINE)
        if match:
            roles[match[1]] = path.parent.parent.name
    return roles


def ratis_three_leaders() -> list[str]:
    """The roles of the datanodes that lead an open RATIS/THREE pipeline."""
    listing = ozone_dev("admin", "pipeline", "list", timeout=120)
    roles = datanode_roles()
    leaders = re.findall(r"ReplicationConfig: RATIS/THREE, State:OPEN, leaderId:([0-9a-f-]+)", listing)
    return [roles[uuid] for uuid in leaders if uuid in roles]


LOG_TIME = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) ")
# A follower becomes a candidate only after hearing nothing from the leader
# for its election timeout (5-10 s at Ozone's default ozone.om.ratis.minimum.timeout).
ELECTION_TIMEOUT_SECONDS = 10


def _log_time(line: str) -> float | None:
    match = LOG_TIME.match(line)
    if not match:
        return None
    return time.mktime(time.strptime(match[1], "%Y-%m-%d %H:%M:%S")) + int(match[2]) / 1000


def om_leaderless_windows(roles: list[str]) -> list[tuple[float, float]]:
    """Wall-clock spans in which the OM ring had no leader, as the OMs'
    own logs tell: from a leader stepping down (or, a follower turning
    candidate, an election timeout before that) until a new leader
    announces itself."""
    events = []
    for role in roles:
        path = Path(settings()["OZONE_DEV_WORK"]) / "logs" / f"{role}.log"
        if not path.exists():
            continue
        for line in path.read_text(errors="replace").splitlines():
            if "changes role from" not in line and "leader changed to" not in line:
                continue
            at = _log_time(line)
            if at is None:
                continue
            if "LEADER to FOLLOWER" in line:
                events.append((at, "lost"))
            elif "to CANDIDATE" in line:
                events.append((at - ELECTION_TIMEOUT_SECONDS, "lost"))
            elif re.search(r"(om\d+)@\S+: leader changed to \1\b", line):
                events.append((at, "elected"))
    windows = []
    opened = None
    for at, what in sorted(events):
        if what == "lost" and opened is None:
            opened = at
        elif what == "elected" and opened is not None:
            windows.append((opened, at))
            opened = None
    if opened is not None:
        windows.append((opened, time.time()))
    return windows
