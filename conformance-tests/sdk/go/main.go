// Command sdk-matrix-go runs the SDK matrix scenarios with the AWS SDK for Go v2,
// or with minio-go when the first argument is --minio-go, and prints one JSON
// line per scenario (see ../README.md). Further arguments select scenarios;
// none runs all.
package main

import (
	"context"
	"os"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

var stderr = os.Stderr

func main() {
	// One binary, two client libraries: the minio-go program shares this
	// module's pinned build and helpers.
	if len(os.Args) > 1 && os.Args[1] == "--minio-go" {
		minioMain(os.Args[2:])
		return
	}
	wanted, e := startUp(os.Args[1:], append(slices.Clone(scenarioNames), securityScenarioNames...))
	ctx := context.Background()
	report := reporter{sdk: "go-v2", version: moduleVersion("github.com/aws/aws-sdk-go-v2/service/s3")}
	s := &scenarios{endpoint: e, s3: makeClient(e, true), prefix: "go-v2-" + randomSuffix()}
	bodies := map[string]func(context.Context) (string, error){
		"bucket":            s.bucketScenario,
		"object":            s.objectScenario,
		"range":             s.rangeScenario,
		"list-v2-delimiter": s.listScenario,
		"multipart":         s.multipartScenario,
		"copy":              s.copyScenario,
		"tagging":           s.taggingScenario,
		"presigned":         s.presignedScenario,
		"checksum-default":  s.checksumDefaultScenario,
		"checksum-off":      s.checksumOffScenario,
		"sse-s3":            s.sseS3Scenario,
		"sse-c":             s.sseCScenario,
		"object-lock":       s.objectLockScenario,
		"policy-condition":  s.policyConditionScenario,
	}
	setup := func() error { return s.createBucket(ctx, s.bucket()) }
	runScenarios(ctx, report, wanted, bodies, s.prefix, setup)
	removeBucket(ctx, s.s3, s.prefix)
	removeBucket(ctx, s.s3, s.prefix+"-b")
	removeBucket(ctx, s.s3, s.prefix+"-e")
	removeBucket(ctx, s.s3, s.prefix+"-p")
	removeLockedBucket(ctx, s.s3, s.prefix+"-l")
}

// removeBucket is best-effort cleanup: every object and pending upload, then the bucket.
func removeBucket(ctx context.Context, client *s3.Client, name string) {
	bucket := aws.String(name)
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: bucket}); err != nil {
		return
	}
	pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: bucket})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			logf("cleanup listing of %s failed: %v", name, err)
			break
		}
		for _, object := range page.Contents {
			if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: object.Key}); err != nil {
				logf("cleanup could not delete %s/%s: %v", name, aws.ToString(object.Key), err)
			}
		}
	}
	uploads, err := client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: bucket})
	if err != nil {
		logf("cleanup of uploads in %s failed: %v", name, err)
	} else {
		for _, upload := range uploads.Uploads {
			abort := &s3.AbortMultipartUploadInput{Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId}
			if _, err := client.AbortMultipartUpload(ctx, abort); err != nil {
				logf("cleanup could not abort upload %s: %v", aws.ToString(upload.UploadId), err)
			}
		}
	}
	if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: bucket}); err != nil {
		logf("cleanup could not delete bucket %s: %v", name, err)
	}
}
