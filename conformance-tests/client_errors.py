"""Reading botocore ClientErrors: the S3 error code and the HTTP status."""

from botocore.exceptions import ClientError


def error_code(err: ClientError) -> str:
    return err.response["Error"]["Code"]


def status(err: ClientError) -> int:
    return err.response["ResponseMetadata"]["HTTPStatusCode"]
