"""The data directory holds secrets in the clear; only its owner may read it (issue 8, item 2)."""

import os
import stat

import pytest

from conftest import OZONE_OM, make_s3_client, start_server
from sigv4 import Credentials

pytestmark = pytest.mark.skipif(OZONE_OM is not None, reason="the embedded store's files")


def modes(root) -> dict:
    """Every path under `root` (itself included) and its permission bits."""
    found = {str(root): stat.S_IMODE(os.stat(root).st_mode)}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            found[path] = stat.S_IMODE(os.stat(path).st_mode)
    return found


def loose(found: dict) -> dict:
    return {
        path: oct(mode) for path, mode in found.items()
        if mode & 0o077 or (os.path.isdir(path) and mode != 0o700) or (os.path.isfile(path) and mode != 0o600)
    }


def write_something(server) -> None:
    client = make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))
    client.create_bucket(Bucket="secrets-on-disk")
    client.put_object(Bucket="secrets-on-disk", Key="k", Body=b"x" * 300_000)
    # Small enough for the DN's small-block store (dn.redb).
    client.put_object(Bucket="secrets-on-disk", Key="small", Body=b"y" * 1000)


def test_a_fresh_data_dir_is_owner_only(tmp_path_factory, target):
    if not target.managed:
        pytest.skip("starts its own server")
    old_umask = os.umask(0o022)
    try:
        server = start_server(tmp_path_factory, "private-dir")
    finally:
        os.umask(old_umask)
    try:
        write_something(server)
        found = modes(server.data_dir)
        assert any(path.endswith("om.redb") for path in found), found
        assert any(path.endswith(".block") for path in found), found
        assert any(path.endswith("dn.redb") for path in found), found
        assert loose(found) == {}
    finally:
        server.stop()


def test_an_existing_looser_data_dir_is_narrowed_with_a_warning(tmp_path_factory, target):
    if not target.managed:
        pytest.skip("starts its own server")
    server = start_server(tmp_path_factory, "loose-dir")
    write_something(server)
    server.stop()
    for path in modes(server.data_dir):
        os.chmod(path, 0o755 if os.path.isdir(path) else 0o644)
    server.start()
    try:
        found = modes(server.data_dir)
        assert stat.S_IMODE(os.stat(server.data_dir).st_mode) == 0o700
        assert found[str(server.data_dir / "om.redb")] == 0o600
        assert found[str(server.data_dir / "dn.redb")] == 0o600
        assert "narrowed to its owner" in server.log_tail()
        # Files left looser inside stay out of reach of others: their directory is 0700.
        client = make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))
        assert client.get_object(Bucket="secrets-on-disk", Key="k")["Body"].read() == b"x" * 300_000
    finally:
        server.stop()
