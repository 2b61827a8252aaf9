"""Counts listings that still show keys a DeleteObjects just deleted.

Each round PUTs KEYS objects of 1 KiB under a fresh prefix, deletes them
with one DeleteObjects and lists the prefix at once; a listing that shows
any of them is stale. Run by bench/deleted-then-listed.sh, one process per
server at the same time (see BENCHMARKS.md, "DeleteObjects in one storage
call").

    python bench/deleted-then-listed.py ENDPOINT BUCKET ROUNDS KEYS
"""

import os
import sys
from concurrent.futures import ThreadPoolExecutor

import boto3
from botocore.config import Config


def main() -> None:
    endpoint, bucket, rounds, keys_per_round = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:5])
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
        config=Config(max_pool_connections=16, retries={"max_attempts": 1}),
    )
    s3.create_bucket(Bucket=bucket)
    stale_listings = stale_keys = 0
    with ThreadPoolExecutor(8) as pool:
        for round_ in range(rounds):
            prefix = f"r{round_:04d}/"
            keys = [f"{prefix}k{i:03d}" for i in range(keys_per_round)]
            list(pool.map(lambda key: s3.put_object(Bucket=bucket, Key=key, Body=b"x" * 1024), keys))
            s3.delete_objects(
                Bucket=bucket, Delete={"Objects": [{"Key": key} for key in keys], "Quiet": True}
            )
            shown = s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("KeyCount", 0)
            if shown:
                stale_listings += 1
                stale_keys += shown
    print(f"{stale_listings} of {rounds} listings stale, {stale_keys} deleted keys shown")


if __name__ == "__main__":
    main()
