// Command sdk-matrix-go runs the SDK matrix scenarios with the AWS SDK for Go v2
// and prints one JSON line per scenario (see ../README.md). Arguments select
// scenarios; none runs all.
package main

import (
	"context"
	"os"
	"runtime/debug"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

var stderr = os.Stderr

func main() {
	wanted := os.Args[1:]
	for _, name := range wanted {
		if !slices.Contains(scenarioNames, name) {
			logf("unknown scenario %s; known: %v", name, scenarioNames)
			os.Exit(2)
		}
	}
	if len(wanted) == 0 {
		wanted = scenarioNames
	}
	e, err := endpointFromEnv()
	if err != nil {
		logf("%v", err)
		os.Exit(2)
	}
	ctx := context.Background()
	report := reporter{version: moduleVersion("github.com/aws/aws-sdk-go-v2/service/s3")}
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
	}
	var setupErr error
	if slices.ContainsFunc(wanted, func(name string) bool { return name != "bucket" }) {
		setupErr = s.createBucket(ctx, s.bucket())
	}
	for _, name := range scenarioNames {
		if !slices.Contains(wanted, name) {
			continue
		}
		if setupErr != nil && name != "bucket" {
			report.emit(name, false, "setup failed: CreateBucket "+s.prefix+": "+setupErr.Error())
			continue
		}
		note, err := bodies[name](ctx)
		if err != nil {
			report.emit(name, false, err.Error())
		} else {
			report.emit(name, true, note)
		}
	}
	removeBucket(ctx, s.s3, s.prefix)
	removeBucket(ctx, s.s3, s.prefix+"-b")
}

// moduleVersion reads a dependency's version from the build info go.sum pinned.
func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path == path {
			return dep.Version
		}
	}
	return "unknown"
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
