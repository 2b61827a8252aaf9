#!/usr/bin/env python3
"""Splits a CPU profile of the gateway into the stages of a request.

Input: folded stacks (`inferno-collapse-perf` output: `frame;frame;... N`,
root first). Each sample goes to the stage of its deepest frame that names
one (a token check inside the block read counts as the token check, redb
inside the key lookup as the metadata lookup); samples with no such frame
are HTTP or runtime work by their deepest hyper/tokio frame, else "other".
Runtime work below a stage's frame (spawn_blocking, waking a thread) is
that stage's hand-off to the blocking pool, and is shown as such.

  stages.py FOLDED [--us-per-request X] [--markdown]
"""

import argparse
import re
import sys

# (stage, pattern), matched against each frame; order only breaks ties
# within one frame. Libraries used by several stages (sha2, hmac, crc32)
# are left out so that their samples go to the stage that called them.
STAGES = [
    ("auth (SigV4)", r"s3_gateway::auth::"),
    ("checksums (ETag MD5, CRC)", r"s3_gateway::checksum"),
    ("token issue + check", r"storage_client::token"),
    ("block I/O (DN role)", r"storage_client::embedded::(dn|block_file)"),
    ("metadata (OM role, redb)", r"storage_client::embedded::om|storage_client::cache|redb::|moka::|postcard::"),
    ("storage facade", r"storage_client::(storage|writer)"),
    ("routing", r"s3_gateway::router"),
    ("handler and response", r"s3_gateway::(ops|server|xml|error)|axum::"),
    ("HTTP (hyper)", r"hyper::|hyper_util::|httparse"),
    ("tokio runtime", r"tokio::"),
]
COMPILED = [(name, re.compile(pattern)) for name, pattern in STAGES]
KERNEL = re.compile(r"_\[k\]$|^(entry_SYSCALL|do_syscall|__x64_sys)")
SYSCALL_KINDS = [
    ("network", r"tcp_|sock_|__sys_(sendto|recvfrom)|inet_|ip_|netif|__dev_queue|loopback"),
    ("file I/O", r"ext4|vfs_|filemap|__x64_sys_(openat|read|pread64|write|pwrite64|close|fsync|fdatasync)|do_sys_open|path_openat"),
    ("futex and scheduling", r"futex|schedule|try_to_wake_up|__x64_sys_epoll|ep_poll"),
]


def classify(frames):
    found = []
    for frame in frames:
        for name, pattern in COMPILED:
            if pattern.search(frame):
                found.append(name)
                break
    if not found:
        return "other"
    deepest = found[-1]
    if deepest != "tokio runtime":
        return deepest
    callers = [name for name in found if name not in ("tokio runtime", "HTTP (hyper)", "handler and response")]
    if callers:
        return f"{callers[-1]}: hand-off to the blocking pool"
    return "tokio runtime (worker and blocking-pool threads: park, wake, switch)"


USER_KINDS = [
    ("allocator (malloc, free)", r"malloc|free|realloc|_int_|tcache|consolidate|calloc"),
    ("memcpy, memmove", r"memcpy|memmove"),
    ("hashing (SHA-256, HMAC, MD5, CRC)", r"sha2|hmac|md5|crc32|crc64|compress256|sha256"),
]


def leaf_kind(frames):
    """What the sampled instruction itself was doing, whatever the stage."""
    kernel = [f for f in frames if f.endswith("_[k]")]
    if kernel:
        for name, pattern in SYSCALL_KINDS:
            if any(re.search(pattern, f) for f in kernel):
                return "kernel: " + name
        return "kernel: other"
    for name, pattern in USER_KINDS:
        if re.search(pattern, frames[-1]):
            return name
    return "other user code"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folded")
    parser.add_argument("--us-per-request", type=float)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    stages, kernel, leaves = {}, {}, {}
    total = 0
    with open(args.folded) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack:
                continue
            n = int(count)
            frames = stack.split(";")
            total += n
            stage = classify(frames)
            stages[stage] = stages.get(stage, 0) + n
            kind = leaf_kind(frames)
            kernel[kind] = kernel.get(kind, 0) + n
            leaves[frames[-1]] = leaves.get(frames[-1], 0) + n
    if not total:
        print("no samples", file=sys.stderr)
        return 1
    per = args.us_per_request
    print(f"{total / 1e9:.2f} s of sampled gateway CPU")
    print()
    print("| stage | share of gateway CPU |" + (" µs per request |" if per else ""))
    print("|---|---|" + ("---|" if per else ""))
    for name, n in sorted(stages.items(), key=lambda kv: -kv[1]):
        share = n / total
        print(f"| {name} | {share:.1%} |" + (f" {share * per:.1f} |" if per else ""))
    print()
    print("The same CPU by what the sampled code was doing (any stage):")
    print()
    print("| kind | share |")
    print("|---|---|")
    for name, n in sorted(kernel.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {n / total:.1%} |")
    print()
    print(f"Top {args.top} functions by own samples:")
    print()
    print("| function | share |")
    print("|---|---|")
    for name, n in sorted(leaves.items(), key=lambda kv: -kv[1])[: args.top]:
        shown = name if len(name) < 90 else name[:87] + "..."
        print(f"| `{shown}` | {n / total:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
