package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func makeClient(e endpoint, checksumsByDefault bool) *s3.Client {
	options := s3.Options{
		Region:       e.Region,
		BaseEndpoint: aws.String(e.URL),
		UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: e.AccessKey, SecretAccessKey: e.SecretKey, Source: "environment"}, nil
		}),
	}
	if !checksumsByDefault {
		options.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		options.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	}
	return s3.New(options)
}

func statusOf(err error) int {
	var response *awshttp.ResponseError
	if errors.As(err, &response) {
		return response.HTTPStatusCode()
	}
	return 0
}

func expectNotFound(err error, what string) error {
	switch {
	case err == nil:
		return failure("%s: still exists", what)
	case statusOf(err) != 404:
		return failure("%s: expected 404, got %v", what, err)
	}
	return nil
}

func readAll(body io.ReadCloser) ([]byte, error) {
	defer body.Close()
	return io.ReadAll(body)
}

// scenarios runs the matrix against one working bucket.
type scenarios struct {
	endpoint endpoint
	s3       *s3.Client
	prefix   string
}

func (s *scenarios) bucket() *string      { return aws.String(s.prefix) }
func (s *scenarios) spareBucket() *string { return aws.String(s.prefix + "-b") }

// createBucket passes a LocationConstraint everywhere but us-east-1, where none is allowed.
func (s *scenarios) createBucket(ctx context.Context, name *string) error {
	input := &s3.CreateBucketInput{Bucket: name}
	if s.endpoint.Region != "us-east-1" {
		input.CreateBucketConfiguration = &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(s.endpoint.Region),
		}
	}
	_, err := s.s3.CreateBucket(ctx, input)
	return err
}

func (s *scenarios) bucketScenario(ctx context.Context) (string, error) {
	name := s.spareBucket()
	if err := s.createBucket(ctx, name); err != nil {
		return "", err
	}
	probe := func() error {
		if _, err := s.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: name}); err != nil {
			return err
		}
		listed, err := s.s3.ListBuckets(ctx, &s3.ListBucketsInput{})
		if err != nil {
			return err
		}
		var names []string
		for _, b := range listed.Buckets {
			names = append(names, aws.ToString(b.Name))
			if aws.ToString(b.Name) == *name {
				return nil
			}
		}
		return failure("ListBuckets does not list %s: %v", *name, names)
	}()
	_, deleted := s.s3.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: name})
	if probe != nil {
		return "", probe
	}
	if deleted != nil {
		return "", deleted
	}
	_, err := s.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: name})
	return "", expectNotFound(err, "HeadBucket after DeleteBucket")
}

func (s *scenarios) objectScenario(ctx context.Context) (string, error) {
	key := aws.String("object/hello world.txt")
	body := randomBytes(64*1024 + 7)
	blue := map[string]string{"color": "blue"}
	put, err := s.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: s.bucket(), Key: key, Body: bytes.NewReader(body),
		ContentType: aws.String("text/plain"), Metadata: blue,
	})
	if err != nil {
		return "", err
	}
	etag := aws.ToString(put.ETag)
	if etag != quotedMD5(body) {
		return "", failure("PutObject ETag %s, expected %s", etag, quotedMD5(body))
	}
	got, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: s.bucket(), Key: key})
	if err != nil {
		return "", err
	}
	data, err := readAll(got.Body)
	if err != nil {
		return "", err
	}
	if err := checkSameBytes(data, body, "GetObject body"); err != nil {
		return "", err
	}
	if aws.ToString(got.ContentType) != "text/plain" {
		return "", failure("GetObject Content-Type %q", aws.ToString(got.ContentType))
	}
	if !reflect.DeepEqual(got.Metadata, blue) {
		return "", failure("GetObject metadata %v", got.Metadata)
	}
	if aws.ToString(got.ETag) != etag {
		return "", failure("GetObject ETag %s", aws.ToString(got.ETag))
	}
	head, err := s.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: s.bucket(), Key: key})
	if err != nil {
		return "", err
	}
	if aws.ToInt64(head.ContentLength) != int64(len(body)) {
		return "", failure("HeadObject Content-Length %d", aws.ToInt64(head.ContentLength))
	}
	if aws.ToString(head.ETag) != etag {
		return "", failure("HeadObject ETag %s", aws.ToString(head.ETag))
	}
	if !reflect.DeepEqual(head.Metadata, blue) {
		return "", failure("HeadObject metadata %v", head.Metadata)
	}
	if _, err := s.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: s.bucket(), Key: key}); err != nil {
		return "", err
	}
	_, err = s.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: s.bucket(), Key: key})
	return "", expectNotFound(err, "HeadObject after DeleteObject")
}

func (s *scenarios) rangeScenario(ctx context.Context) (string, error) {
	key := aws.String("range/data.bin")
	body := randomBytes(10_000)
	if _, err := s.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: s.bucket(), Key: key, Body: bytes.NewReader(body)}); err != nil {
		return "", err
	}
	cases := []struct {
		header, contentRange string
		expected             []byte
	}{
		{"bytes=100-199", "bytes 100-199/10000", body[100:200]},
		{"bytes=9950-", "bytes 9950-9999/10000", body[9950:]},
		{"bytes=-50", "bytes 9950-9999/10000", body[9950:]},
	}
	for _, c := range cases {
		got, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: s.bucket(), Key: key, Range: aws.String(c.header)})
		if err != nil {
			return "", err
		}
		data, err := readAll(got.Body)
		if err != nil {
			return "", err
		}
		if err := checkSameBytes(data, c.expected, "Range "+c.header); err != nil {
			return "", err
		}
		if aws.ToString(got.ContentRange) != c.contentRange {
			return "", failure("Range %s: Content-Range %q", c.header, aws.ToString(got.ContentRange))
		}
	}
	return "", nil
}

func (s *scenarios) listScenario(ctx context.Context) (string, error) {
	for _, key := range treeKeys {
		input := &s3.PutObjectInput{Bucket: s.bucket(), Key: aws.String(key), Body: strings.NewReader(key)}
		if _, err := s.s3.PutObject(ctx, input); err != nil {
			return "", err
		}
	}
	var pages []listPage
	var token *string
	for len(pages) <= len(expectedTreePages) {
		page, err := s.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
			Bucket: s.bucket(), Prefix: aws.String("tree/"), Delimiter: aws.String("/"),
			MaxKeys: aws.Int32(2), ContinuationToken: token,
		})
		if err != nil {
			return "", err
		}
		seen := listPage{Keys: []string{}, Prefixes: []string{}}
		for _, object := range page.Contents {
			seen.Keys = append(seen.Keys, aws.ToString(object.Key))
		}
		for _, prefix := range page.CommonPrefixes {
			seen.Prefixes = append(seen.Prefixes, aws.ToString(prefix.Prefix))
		}
		pages = append(pages, seen)
		if int(aws.ToInt32(page.KeyCount)) != len(seen.Keys)+len(seen.Prefixes) {
			return "", failure("page %d: KeyCount %d", len(pages), aws.ToInt32(page.KeyCount))
		}
		if !aws.ToBool(page.IsTruncated) {
			break
		}
		token = page.NextContinuationToken
		if aws.ToString(token) == "" {
			return "", failure("page %d is truncated but has no NextContinuationToken", len(pages))
		}
	}
	if !reflect.DeepEqual(pages, expectedTreePages) {
		return "", failure("pages %+v, expected %+v", pages, expectedTreePages)
	}
	return "", nil
}

func (s *scenarios) multipartScenario(ctx context.Context) (string, error) {
	key := aws.String("multipart/big.bin")
	parts := [][]byte{randomBytes(partSize), randomBytes(partSize), randomBytes(partSize)}
	created, err := s.s3.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: s.bucket(), Key: key})
	if err != nil {
		return "", err
	}
	uploadID := created.UploadId
	etag, err := func() (string, error) {
		var completed []types.CompletedPart
		for i, part := range parts {
			number := aws.Int32(int32(i + 1))
			answer, err := s.s3.UploadPart(ctx, &s3.UploadPartInput{
				Bucket: s.bucket(), Key: key, UploadId: uploadID, PartNumber: number, Body: bytes.NewReader(part),
			})
			if err != nil {
				return "", err
			}
			if aws.ToString(answer.ETag) != quotedMD5(part) {
				return "", failure("UploadPart %d ETag %s", i+1, aws.ToString(answer.ETag))
			}
			completed = append(completed, types.CompletedPart{PartNumber: number, ETag: answer.ETag})
		}
		done, err := s.s3.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
			Bucket: s.bucket(), Key: key, UploadId: uploadID,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: completed},
		})
		if err != nil {
			return "", err
		}
		return aws.ToString(done.ETag), nil
	}()
	if err != nil {
		abort := &s3.AbortMultipartUploadInput{Bucket: s.bucket(), Key: key, UploadId: uploadID}
		if _, abortErr := s.s3.AbortMultipartUpload(ctx, abort); abortErr != nil {
			logf("abort of upload %s failed: %v", aws.ToString(uploadID), abortErr)
		}
		return "", err
	}
	if !strings.HasSuffix(strings.Trim(etag, `"`), "-3") {
		return "", failure("CompleteMultipartUpload ETag %s does not end in -3", etag)
	}
	if etag != multipartETag(parts) {
		return "", failure("CompleteMultipartUpload ETag %s, expected %s", etag, multipartETag(parts))
	}
	got, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: s.bucket(), Key: key})
	if err != nil {
		return "", err
	}
	data, err := readAll(got.Body)
	if err != nil {
		return "", err
	}
	if aws.ToString(got.ETag) != etag {
		return "", failure("GetObject ETag %s, expected %s", aws.ToString(got.ETag), etag)
	}
	return "", checkSameBytes(data, bytes.Join(parts, nil), "GetObject of the completed upload")
}

func (s *scenarios) copyScenario(ctx context.Context) (string, error) {
	source, target := "copy/source.bin", aws.String("copy/target.bin")
	body := randomBytes(32 * 1024)
	origin := map[string]string{"origin": "copy-test"}
	put, err := s.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: s.bucket(), Key: aws.String(source), Body: bytes.NewReader(body), Metadata: origin,
	})
	if err != nil {
		return "", err
	}
	copied, err := s.s3.CopyObject(ctx, &s3.CopyObjectInput{
		Bucket: s.bucket(), Key: target, CopySource: aws.String(s.prefix + "/" + source),
	})
	if err != nil {
		return "", err
	}
	if copied.CopyObjectResult == nil || aws.ToString(copied.CopyObjectResult.ETag) != aws.ToString(put.ETag) {
		return "", failure("CopyObject result %+v, source ETag %s", copied.CopyObjectResult, aws.ToString(put.ETag))
	}
	got, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: s.bucket(), Key: target})
	if err != nil {
		return "", err
	}
	data, err := readAll(got.Body)
	if err != nil {
		return "", err
	}
	if !reflect.DeepEqual(got.Metadata, origin) {
		return "", failure("copy metadata %v", got.Metadata)
	}
	return "", checkSameBytes(data, body, "GetObject of the copy")
}

func (s *scenarios) taggingScenario(ctx context.Context) (string, error) {
	key := aws.String("tagging/object.txt")
	if _, err := s.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: s.bucket(), Key: key, Body: strings.NewReader("tagged")}); err != nil {
		return "", err
	}
	var tagSet []types.Tag
	for k, v := range tags {
		tagSet = append(tagSet, types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	_, err := s.s3.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{
		Bucket: s.bucket(), Key: key, Tagging: &types.Tagging{TagSet: tagSet},
	})
	if err != nil {
		return "", err
	}
	got, err := s.s3.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: s.bucket(), Key: key})
	if err != nil {
		return "", err
	}
	seen := map[string]string{}
	for _, tag := range got.TagSet {
		seen[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	if !reflect.DeepEqual(seen, tags) {
		return "", failure("GetObjectTagging %v, expected %v", seen, tags)
	}
	if _, err := s.s3.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: s.bucket(), Key: key}); err != nil {
		return "", err
	}
	left, err := s.s3.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: s.bucket(), Key: key})
	if err != nil {
		return "", err
	}
	if len(left.TagSet) != 0 {
		return "", failure("GetObjectTagging after DeleteObjectTagging: %d tags", len(left.TagSet))
	}
	return "", nil
}

func (s *scenarios) presignedScenario(ctx context.Context) (string, error) {
	key := aws.String("presigned/file.bin")
	body := randomBytes(20 * 1024)
	presigner := s3.NewPresignClient(s.s3, s3.WithPresignExpires(10*time.Minute))
	put, err := presigner.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: s.bucket(), Key: key})
	if err != nil {
		return "", err
	}
	status, answer, err := send(ctx, put.Method, put.URL, put.SignedHeader, body)
	if err != nil {
		return "", err
	}
	if status != 200 {
		return "", failure("presigned PUT: HTTP %d: %.300s", status, answer)
	}
	get, err := presigner.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: s.bucket(), Key: key})
	if err != nil {
		return "", err
	}
	status, answer, err = send(ctx, get.Method, get.URL, get.SignedHeader, nil)
	if err != nil {
		return "", err
	}
	if status != 200 {
		return "", failure("presigned GET: HTTP %d: %.300s", status, answer)
	}
	return "", checkSameBytes(answer, body, "presigned GET body")
}

// send makes a plain net/http request, carrying the headers the presigner signed.
func send(ctx context.Context, method, url string, header http.Header, body []byte) (int, []byte, error) {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	request, err := http.NewRequestWithContext(ctx, method, url, reader)
	if err != nil {
		return 0, nil, err
	}
	for name, values := range header {
		if strings.EqualFold(name, "Host") {
			continue
		}
		request.Header[name] = values
	}
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		return 0, nil, err
	}
	data, err := readAll(response.Body)
	return response.StatusCode, data, err
}

func (s *scenarios) checksumDefaultScenario(ctx context.Context) (string, error) {
	key := aws.String("checksum/default.bin")
	body := randomBytes(checksumBodySize)
	expected := crc32Base64(body)
	put, err := s.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: s.bucket(), Key: key, Body: bytes.NewReader(body)})
	if err != nil {
		return "", err
	}
	if put.ChecksumCRC32 != nil && *put.ChecksumCRC32 != expected {
		return "", failure("PutObject ChecksumCRC32 %s, expected %s", *put.ChecksumCRC32, expected)
	}
	got, err := s.s3.GetObject(ctx, &s3.GetObjectInput{
		Bucket: s.bucket(), Key: key, ChecksumMode: types.ChecksumModeEnabled,
	})
	if err != nil {
		return "", err
	}
	data, err := readAll(got.Body)
	if err != nil {
		return "", err
	}
	if got.ChecksumCRC32 != nil && *got.ChecksumCRC32 != expected {
		return "", failure("GetObject ChecksumCRC32 %s, expected %s", *got.ChecksumCRC32, expected)
	}
	return "", checkSameBytes(data, body, "GetObject body")
}

func (s *scenarios) checksumOffScenario(ctx context.Context) (string, error) {
	client := makeClient(s.endpoint, false)
	key := aws.String("checksum/off.bin")
	body := randomBytes(checksumBodySize)
	put, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: s.bucket(), Key: key, Body: bytes.NewReader(body)})
	if err != nil {
		return "", err
	}
	if aws.ToString(put.ETag) != quotedMD5(body) {
		return "", failure("PutObject ETag %s, expected %s", aws.ToString(put.ETag), quotedMD5(body))
	}
	got, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: s.bucket(), Key: key})
	if err != nil {
		return "", err
	}
	data, err := readAll(got.Body)
	if err != nil {
		return "", err
	}
	return "", checkSameBytes(data, body, "GetObject body")
}

// logName prefixes cleanup trouble on stderr with the client that met it.
var logName = "go-v2"

func logf(format string, args ...any) {
	fmt.Fprintf(stderr, logName+": "+format+"\n", args...)
}
