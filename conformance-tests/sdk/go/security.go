package main

// Encryption, object lock and a conditioned bucket policy (issue 22): the
// sse-s3, sse-c, object-lock and policy-condition scenarios, each but sse-c in
// a bucket of its own (prefix -e, -l, -p) so that the shared bucket stays plain.

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// securityScenarioNames run by go-v2 (not minio-go), after the shared ones.
var securityScenarioNames = []string{"sse-s3", "sse-c", "object-lock", "policy-condition"}

func errorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// expectRefused checks that err is an S3 error with this status (and code, unless empty).
func expectRefused(err error, status int, code, what string) error {
	if err == nil {
		return failure("%s: succeeded, expected HTTP %d %s", what, status, code)
	}
	if statusOf(err) != status || (code != "" && errorCode(err) != code) {
		return failure("%s: expected HTTP %d %s, got %v", what, status, code, err)
	}
	return nil
}

func (s *scenarios) sseS3Scenario(ctx context.Context) (string, error) {
	key := aws.String("sse-s3/object.bin")
	body := randomBytes(32*1024 + 5)
	put, err := s.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: s.bucket(), Key: key, Body: bytes.NewReader(body), ServerSideEncryption: types.ServerSideEncryptionAes256,
	})
	if err != nil {
		return "", err
	}
	if put.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		return "", failure("PutObject ServerSideEncryption %q", put.ServerSideEncryption)
	}
	if aws.ToString(put.ETag) != quotedMD5(body) {
		return "", failure("PutObject ETag %s, expected the plaintext's MD5 %s", aws.ToString(put.ETag), quotedMD5(body))
	}
	head, err := s.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: s.bucket(), Key: key})
	if err != nil {
		return "", err
	}
	if head.ServerSideEncryption != types.ServerSideEncryptionAes256 || aws.ToInt64(head.ContentLength) != int64(len(body)) {
		return "", failure("HeadObject ServerSideEncryption %q, Content-Length %d", head.ServerSideEncryption, aws.ToInt64(head.ContentLength))
	}
	if err := s.getEncrypted(ctx, s.bucket(), key, body); err != nil {
		return "", err
	}

	// Bucket default encryption: a plain PUT comes back encrypted.
	bucket := aws.String(s.prefix + "-e")
	if err := s.createBucket(ctx, bucket); err != nil {
		return "", err
	}
	_, err = s.s3.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{
		Bucket: bucket,
		ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{Rules: []types.ServerSideEncryptionRule{{
			ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAes256},
		}}},
	})
	if err != nil {
		return "", err
	}
	config, err := s.s3.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: bucket})
	if err != nil {
		return "", err
	}
	rules := config.ServerSideEncryptionConfiguration.Rules
	if len(rules) != 1 || rules[0].ApplyServerSideEncryptionByDefault == nil ||
		rules[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm != types.ServerSideEncryptionAes256 {
		return "", failure("GetBucketEncryption rules %+v", rules)
	}
	plain := randomBytes(10_000)
	defaulted, err := s.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: bucket, Key: key, Body: bytes.NewReader(plain)})
	if err != nil {
		return "", err
	}
	if defaulted.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		return "", failure("plain PutObject into a bucket with default encryption: ServerSideEncryption %q", defaulted.ServerSideEncryption)
	}
	head, err = s.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: bucket, Key: key})
	if err != nil {
		return "", err
	}
	if head.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		return "", failure("HeadObject of a default-encrypted object: ServerSideEncryption %q", head.ServerSideEncryption)
	}
	return "", s.getEncrypted(ctx, bucket, key, plain)
}

func (s *scenarios) getEncrypted(ctx context.Context, bucket, key *string, body []byte) error {
	got, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: bucket, Key: key})
	if err != nil {
		return err
	}
	data, err := readAll(got.Body)
	if err != nil {
		return err
	}
	if got.ServerSideEncryption != types.ServerSideEncryptionAes256 {
		return failure("GetObject ServerSideEncryption %q", got.ServerSideEncryption)
	}
	return checkSameBytes(data, body, "GetObject of an SSE-S3 object")
}

// customerKey is an SSE-C key as the Go SDK v2 takes it: base64 key and base64 MD5 (it computes neither).
type customerKey struct{ key, md5 *string }

func newCustomerKey() customerKey {
	raw := randomBytes(32)
	sum := md5.Sum(raw)
	return customerKey{aws.String(base64.StdEncoding.EncodeToString(raw)), aws.String(base64.StdEncoding.EncodeToString(sum[:]))}
}

func (s *scenarios) sseCScenario(ctx context.Context) (string, error) {
	key := aws.String("sse-c/object.bin")
	body := randomBytes(20*1024 + 3)
	mine, other := newCustomerKey(), newCustomerKey()
	algorithm := aws.String("AES256")
	put, err := s.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: s.bucket(), Key: key, Body: bytes.NewReader(body),
		SSECustomerAlgorithm: algorithm, SSECustomerKey: mine.key, SSECustomerKeyMD5: mine.md5,
	})
	if err != nil {
		return "", err
	}
	if aws.ToString(put.SSECustomerAlgorithm) != "AES256" || aws.ToString(put.SSECustomerKeyMD5) != *mine.md5 {
		return "", failure("PutObject echoed algorithm %q, key MD5 %q", aws.ToString(put.SSECustomerAlgorithm), aws.ToString(put.SSECustomerKeyMD5))
	}
	head, err := s.s3.HeadObject(ctx, &s3.HeadObjectInput{
		Bucket: s.bucket(), Key: key, SSECustomerAlgorithm: algorithm, SSECustomerKey: mine.key, SSECustomerKeyMD5: mine.md5,
	})
	if err != nil {
		return "", err
	}
	if aws.ToInt64(head.ContentLength) != int64(len(body)) || aws.ToString(head.SSECustomerKeyMD5) != *mine.md5 {
		return "", failure("HeadObject Content-Length %d, key MD5 %q", aws.ToInt64(head.ContentLength), aws.ToString(head.SSECustomerKeyMD5))
	}
	got, err := s.s3.GetObject(ctx, &s3.GetObjectInput{
		Bucket: s.bucket(), Key: key, SSECustomerAlgorithm: algorithm, SSECustomerKey: mine.key, SSECustomerKeyMD5: mine.md5,
	})
	if err != nil {
		return "", err
	}
	data, err := readAll(got.Body)
	if err != nil {
		return "", err
	}
	if err := checkSameBytes(data, body, "GetObject with the key"); err != nil {
		return "", err
	}
	if aws.ToString(got.SSECustomerAlgorithm) != "AES256" || aws.ToString(got.SSECustomerKeyMD5) != *mine.md5 {
		return "", failure("GetObject echoed algorithm %q, key MD5 %q", aws.ToString(got.SSECustomerAlgorithm), aws.ToString(got.SSECustomerKeyMD5))
	}
	ranged, err := s.s3.GetObject(ctx, &s3.GetObjectInput{
		Bucket: s.bucket(), Key: key, Range: aws.String("bytes=100-199"),
		SSECustomerAlgorithm: algorithm, SSECustomerKey: mine.key, SSECustomerKeyMD5: mine.md5,
	})
	if err != nil {
		return "", err
	}
	if data, err = readAll(ranged.Body); err != nil {
		return "", err
	}
	if err := checkSameBytes(data, body[100:200], "GetObject bytes=100-199 with the key"); err != nil {
		return "", err
	}
	_, err = s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: s.bucket(), Key: key})
	if err := expectRefused(err, 400, "InvalidRequest", "GetObject without the key"); err != nil {
		return "", err
	}
	_, err = s.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: s.bucket(), Key: key})
	if err := expectRefused(err, 400, "", "HeadObject without the key"); err != nil {
		return "", err
	}
	_, err = s.s3.GetObject(ctx, &s3.GetObjectInput{
		Bucket: s.bucket(), Key: key, SSECustomerAlgorithm: algorithm, SSECustomerKey: other.key, SSECustomerKeyMD5: other.md5,
	})
	return "", expectRefused(err, 403, "AccessDenied", "GetObject with another key")
}

func (s *scenarios) objectLockScenario(ctx context.Context) (string, error) {
	bucket := aws.String(s.prefix + "-l")
	_, err := s.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: bucket, ObjectLockEnabledForBucket: aws.Bool(true)})
	if os.Getenv("S3_VERSIONING") == "none" {
		if err := expectRefused(err, 501, "NotImplemented", "CreateBucket with object lock on a back end without versions"); err != nil {
			return "", err
		}
		return "S3_VERSIONING=none: CreateBucket with object lock answers 501 NotImplemented, as expected", nil
	}
	if err != nil {
		return "", err
	}
	_, err = s.s3.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{
		Bucket: bucket,
		ObjectLockConfiguration: &types.ObjectLockConfiguration{
			ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{
				Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1),
			}},
		},
	})
	if err != nil {
		return "", err
	}
	config, err := s.s3.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: bucket})
	if err != nil {
		return "", err
	}
	if c := config.ObjectLockConfiguration; c == nil || c.Rule == nil || c.Rule.DefaultRetention == nil ||
		c.Rule.DefaultRetention.Mode != types.ObjectLockRetentionModeGovernance || aws.ToInt32(c.Rule.DefaultRetention.Days) != 1 {
		return "", failure("GetObjectLockConfiguration %+v", config.ObjectLockConfiguration)
	}

	key := aws.String("locked.txt")
	// An upload given a retention must prove its body (Content-MD5 or a checksum), as AWS documents;
	// over plain HTTP the Go SDK sends neither unless asked, so this asks for CRC32.
	put, err := s.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: bucket, Key: key, Body: strings.NewReader("kept"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
	})
	if err != nil {
		return "", err
	}
	version := put.VersionId
	head, err := s.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: bucket, Key: key, VersionId: version})
	if err != nil {
		return "", err
	}
	if head.ObjectLockMode != types.ObjectLockModeGovernance || head.ObjectLockRetainUntilDate == nil {
		return "", failure("HeadObject of a version under the default retention: mode %q, until %v", head.ObjectLockMode, head.ObjectLockRetainUntilDate)
	}
	until := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Second)
	_, err = s.s3.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{
		Bucket: bucket, Key: key, VersionId: version,
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: aws.Time(until)},
	})
	if err != nil {
		return "", err
	}
	retention, err := s.s3.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: bucket, Key: key, VersionId: version})
	if err != nil {
		return "", err
	}
	if r := retention.Retention; r == nil || r.Mode != types.ObjectLockRetentionModeGovernance || !aws.ToTime(r.RetainUntilDate).Equal(until) {
		return "", failure("GetObjectRetention %+v, expected GOVERNANCE until %v", retention.Retention, until)
	}
	_, err = s.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: key, VersionId: version})
	if err := expectRefused(err, 403, "AccessDenied", "DeleteObject of a version under GOVERNANCE"); err != nil {
		return "", err
	}
	_, err = s.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: key, VersionId: version, BypassGovernanceRetention: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("DeleteObject with x-amz-bypass-governance-retention: %w", err)
	}
	_, err = s.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: bucket, Key: key, VersionId: version})
	if err := expectNotFound(err, "HeadObject of the version deleted with bypass"); err != nil {
		return "", err
	}

	// A legal hold binds even a caller that may bypass GOVERNANCE.
	held := aws.String("held.txt")
	put, err = s.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: bucket, Key: held, Body: strings.NewReader("held"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
	})
	if err != nil {
		return "", err
	}
	version = put.VersionId
	setHold := func(status types.ObjectLockLegalHoldStatus) error {
		_, err := s.s3.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{
			Bucket: bucket, Key: held, VersionId: version, LegalHold: &types.ObjectLockLegalHold{Status: status},
		})
		return err
	}
	if err := setHold(types.ObjectLockLegalHoldStatusOn); err != nil {
		return "", err
	}
	hold, err := s.s3.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: bucket, Key: held, VersionId: version})
	if err != nil {
		return "", err
	}
	if hold.LegalHold == nil || hold.LegalHold.Status != types.ObjectLockLegalHoldStatusOn {
		return "", failure("GetObjectLegalHold %+v", hold.LegalHold)
	}
	_, err = s.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: held, VersionId: version, BypassGovernanceRetention: aws.Bool(true)})
	if err := expectRefused(err, 403, "AccessDenied", "DeleteObject (with bypass) of a version under legal hold"); err != nil {
		return "", err
	}
	if err := setHold(types.ObjectLockLegalHoldStatusOff); err != nil {
		return "", err
	}
	_, err = s.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: held, VersionId: version, BypassGovernanceRetention: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("DeleteObject after the legal hold is lifted: %w", err)
	}
	return "", nil
}

// conditionedPolicy is the AWS S3 user guide's "require SSE-S3 on every upload" (two Deny
// statements, StringNotEquals and Null on s3:x-amz-server-side-encryption), plus anonymous
// reads of public/ and an anonymous listing allowed only with s3:prefix = public/.
func conditionedPolicy(bucket string) string {
	policy := map[string]any{
		"Version": "2012-10-17",
		"Statement": []map[string]any{
			{"Sid": "DenyIncorrectEncryptionHeader", "Effect": "Deny", "Principal": "*", "Action": "s3:PutObject",
				"Resource":  "arn:aws:s3:::" + bucket + "/*",
				"Condition": map[string]any{"StringNotEquals": map[string]string{"s3:x-amz-server-side-encryption": "AES256"}}},
			{"Sid": "DenyUnencryptedObjectUploads", "Effect": "Deny", "Principal": "*", "Action": "s3:PutObject",
				"Resource":  "arn:aws:s3:::" + bucket + "/*",
				"Condition": map[string]any{"Null": map[string]string{"s3:x-amz-server-side-encryption": "true"}}},
			{"Sid": "PublicListOfPublic", "Effect": "Allow", "Principal": "*", "Action": "s3:ListBucket",
				"Resource":  "arn:aws:s3:::" + bucket,
				"Condition": map[string]any{"StringEquals": map[string]string{"s3:prefix": "public/"}}},
			{"Sid": "PublicRead", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
				"Resource": "arn:aws:s3:::" + bucket + "/public/*"},
		},
	}
	text, _ := json.Marshal(policy)
	return string(text)
}

func (s *scenarios) policyConditionScenario(ctx context.Context) (string, error) {
	name := s.prefix + "-p"
	bucket := aws.String(name)
	if err := s.createBucket(ctx, bucket); err != nil {
		return "", err
	}
	if _, err := s.s3.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: bucket, Policy: aws.String(conditionedPolicy(name))}); err != nil {
		return "", err
	}
	stored, err := s.s3.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: bucket})
	if err != nil {
		return "", err
	}
	var parsed struct{ Statement []struct{ Sid string } }
	if err := json.Unmarshal([]byte(aws.ToString(stored.Policy)), &parsed); err != nil || len(parsed.Statement) != 4 {
		return "", failure("GetBucketPolicy %.300s (%v)", aws.ToString(stored.Policy), err)
	}
	putObject := func(key string, sse types.ServerSideEncryption) (*s3.PutObjectOutput, error) {
		return s.s3.PutObject(ctx, &s3.PutObjectInput{
			Bucket: bucket, Key: aws.String(key), Body: strings.NewReader("body of " + key), ServerSideEncryption: sse,
		})
	}
	_, err = putObject("public/plain.txt", "")
	if err := expectRefused(err, 403, "AccessDenied", "PutObject without x-amz-server-side-encryption"); err != nil {
		return "", err
	}
	for _, key := range []string{"public/encrypted.txt", "private/encrypted.txt"} {
		put, err := putObject(key, types.ServerSideEncryptionAes256)
		if err != nil {
			return "", fmt.Errorf("PutObject %s with AES256 under the policy: %w", key, err)
		}
		if put.ServerSideEncryption != types.ServerSideEncryptionAes256 {
			return "", failure("PutObject %s ServerSideEncryption %q", key, put.ServerSideEncryption)
		}
	}
	// Anonymous requests: plain net/http, no signature.
	anonymous := func(method, path string, header map[string][]string, body []byte) (int, []byte, error) {
		return send(ctx, method, s.endpoint.URL+"/"+name+path, header, body)
	}
	checks := []struct {
		method, path string
		header       map[string][]string
		body         []byte
		status       int
	}{
		{"GET", "/public/encrypted.txt", nil, nil, 200},
		{"GET", "/private/encrypted.txt", nil, nil, 403},
		{"GET", "?list-type=2&prefix=public%2F", nil, nil, 200},
		{"GET", "?list-type=2", nil, nil, 403},
		{"GET", "?list-type=2&prefix=private%2F", nil, nil, 403},
		{"PUT", "/public/anonymous.txt", map[string][]string{"X-Amz-Server-Side-Encryption": {"AES256"}}, []byte("anon"), 403},
	}
	for _, c := range checks {
		status, answer, err := anonymous(c.method, c.path, c.header, c.body)
		if err != nil {
			return "", err
		}
		if status != c.status {
			return "", failure("anonymous %s %s: HTTP %d, expected %d: %.300s", c.method, c.path, status, c.status, answer)
		}
		if c.path == "/public/encrypted.txt" && string(answer) != "body of public/encrypted.txt" {
			return "", failure("anonymous GET of an SSE-S3 object: %.100q", answer)
		}
		if strings.HasPrefix(c.path, "?list-type=2&prefix=public") && !bytes.Contains(answer, []byte("<Key>public/encrypted.txt</Key>")) {
			return "", failure("anonymous listing of public/: %.300s", answer)
		}
	}
	if _, err := s.s3.DeleteBucketPolicy(ctx, &s3.DeleteBucketPolicyInput{Bucket: bucket}); err != nil {
		return "", err
	}
	if _, err := putObject("public/plain.txt", ""); err != nil {
		return "", fmt.Errorf("PutObject without encryption after DeleteBucketPolicy: %w", err)
	}
	status, _, err := anonymous("GET", "/public/encrypted.txt", nil, nil)
	if err != nil {
		return "", err
	}
	if status != 403 {
		return "", failure("anonymous GET after DeleteBucketPolicy: HTTP %d, expected 403", status)
	}
	return "", nil
}

// removeLockedBucket lifts every legal hold and deletes every version with the GOVERNANCE
// bypass (the scenario never sets COMPLIANCE), then the bucket.
func removeLockedBucket(ctx context.Context, client *s3.Client, name string) {
	bucket := aws.String(name)
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: bucket}); err != nil {
		return
	}
	listed, err := client.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: bucket})
	if err != nil {
		logf("cleanup listing of versions in %s failed: %v", name, err)
	} else {
		for _, v := range listed.Versions {
			_, _ = client.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{
				Bucket: bucket, Key: v.Key, VersionId: v.VersionId,
				LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOff},
			})
			if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{
				Bucket: bucket, Key: v.Key, VersionId: v.VersionId, BypassGovernanceRetention: aws.Bool(true),
			}); err != nil {
				logf("cleanup could not delete %s/%s version %s: %v", name, aws.ToString(v.Key), aws.ToString(v.VersionId), err)
			}
		}
		for _, m := range listed.DeleteMarkers {
			_, _ = client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: m.Key, VersionId: m.VersionId})
		}
	}
	if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: bucket}); err != nil {
		logf("cleanup could not delete bucket %s: %v", name, err)
	}
}
