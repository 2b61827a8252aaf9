package main

// The matrix scenarios with minio-go, the client library warp is built on,
// used as warp uses it: default options (no region, so it asks
// GetBucketLocation; automatic bucket lookup, path style for an IP endpoint;
// its own multipart threshold and checksum choices), plus a "warp" scenario
// shaped like a warp run.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	miniotags "github.com/minio/minio-go/v7/pkg/tags"
)

// minioScenarioNames is the shared list plus the warp-shaped run and a
// browser-style form upload (minio-go's PresignedPostPolicy).
var minioScenarioNames = append(slices.Clone(scenarioNames), "warp", "presigned-post")

const (
	// warp's default concurrency.
	warpWorkers = 20
	// Small objects, as warp's mixed and stat benchmarks are usually run.
	warpObjectSize       = 16 * 1024
	warpObjectsPerWorker = 4
)

func minioMain(args []string) {
	logName = "minio-go"
	wanted, e := startUp(args, minioScenarioNames)
	client, err := makeMinioClient(e)
	if err != nil {
		logf("%v", err)
		os.Exit(2)
	}
	ctx := context.Background()
	report := reporter{sdk: "minio-go", version: moduleVersion("github.com/minio/minio-go/v7")}
	m := &minioScenarios{endpoint: e, client: client, prefix: "minio-go-" + randomSuffix()}
	bodies := map[string]func(context.Context) (string, error){
		"bucket":            m.bucketScenario,
		"object":            m.objectScenario,
		"range":             m.rangeScenario,
		"list-v2-delimiter": m.listScenario,
		"multipart":         m.multipartScenario,
		"copy":              m.copyScenario,
		"tagging":           m.taggingScenario,
		"presigned":         m.presignedScenario,
		"checksum-default":  m.checksumDefaultScenario,
		"checksum-off":      m.checksumOffScenario,
		"warp":              m.warpScenario,
		"presigned-post":    m.presignedPostScenario,
	}
	setup := func() error { return m.makeBucket(ctx, m.prefix) }
	runScenarios(ctx, report, wanted, bodies, m.prefix, setup)
	removeMinioBucket(ctx, client, m.prefix)
	removeMinioBucket(ctx, client, m.prefix+"-b")
}

// makeMinioClient leaves Region unset, as warp does without --region, so
// minio-go asks GetBucketLocation before its first request to a bucket.
func makeMinioClient(e endpoint) (*minio.Client, error) {
	parsed, err := url.Parse(e.URL)
	if err != nil {
		return nil, err
	}
	return minio.New(parsed.Host, &minio.Options{
		Creds:  credentials.NewStaticV4(e.AccessKey, e.SecretKey, ""),
		Secure: parsed.Scheme == "https",
	})
}

type minioScenarios struct {
	endpoint endpoint
	client   *minio.Client
	prefix   string
}

func (m *minioScenarios) makeBucket(ctx context.Context, name string) error {
	return m.client.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: m.endpoint.Region})
}

func minioNotFound(err error, what string) error {
	switch {
	case err == nil:
		return failure("%s: still exists", what)
	case minio.ToErrorResponse(err).StatusCode != http.StatusNotFound:
		return failure("%s: expected 404, got %v", what, err)
	}
	return nil
}

// quoted puts back the quotes minio-go strips from ETags.
func quoted(etag string) string {
	return `"` + strings.Trim(etag, `"`) + `"`
}

func (m *minioScenarios) getBytes(ctx context.Context, key string, opts minio.GetObjectOptions) ([]byte, minio.ObjectInfo, error) {
	object, err := m.client.GetObject(ctx, m.prefix, key, opts)
	if err != nil {
		return nil, minio.ObjectInfo{}, err
	}
	defer object.Close()
	data, err := io.ReadAll(object)
	if err != nil {
		return nil, minio.ObjectInfo{}, err
	}
	info, err := object.Stat()
	return data, info, err
}

func (m *minioScenarios) bucketScenario(ctx context.Context) (string, error) {
	name := m.prefix + "-b"
	if err := m.makeBucket(ctx, name); err != nil {
		return "", err
	}
	probe := func() error {
		exists, err := m.client.BucketExists(ctx, name)
		if err != nil {
			return err
		}
		if !exists {
			return failure("BucketExists %s: false after MakeBucket", name)
		}
		buckets, err := m.client.ListBuckets(ctx)
		if err != nil {
			return err
		}
		var names []string
		for _, b := range buckets {
			if b.Name == name {
				return nil
			}
			names = append(names, b.Name)
		}
		return failure("ListBuckets does not list %s: %v", name, names)
	}()
	deleted := m.client.RemoveBucket(ctx, name)
	if probe != nil {
		return "", probe
	}
	if deleted != nil {
		return "", deleted
	}
	exists, err := m.client.BucketExists(ctx, name)
	if err != nil {
		return "", err
	}
	if exists {
		return "", failure("BucketExists %s: true after RemoveBucket", name)
	}
	return "", nil
}

func (m *minioScenarios) objectScenario(ctx context.Context) (string, error) {
	key := "object/hello world.txt"
	body := randomBytes(64*1024 + 7)
	put, err := m.client.PutObject(ctx, m.prefix, key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{
		ContentType: "text/plain", UserMetadata: map[string]string{"color": "blue"},
	})
	if err != nil {
		return "", err
	}
	if quoted(put.ETag) != quotedMD5(body) {
		return "", failure("PutObject ETag %s, expected %s", put.ETag, quotedMD5(body))
	}
	data, got, err := m.getBytes(ctx, key, minio.GetObjectOptions{})
	if err != nil {
		return "", err
	}
	if err := checkSameBytes(data, body, "GetObject body"); err != nil {
		return "", err
	}
	if got.ContentType != "text/plain" {
		return "", failure("GetObject Content-Type %q", got.ContentType)
	}
	// minio-go keys user metadata by the canonical header name without its prefix.
	blue := minio.StringMap{"Color": "blue"}
	if !reflect.DeepEqual(got.UserMetadata, blue) {
		return "", failure("GetObject metadata %v", got.UserMetadata)
	}
	if got.ETag != put.ETag {
		return "", failure("GetObject ETag %s", got.ETag)
	}
	stat, err := m.client.StatObject(ctx, m.prefix, key, minio.StatObjectOptions{})
	if err != nil {
		return "", err
	}
	if stat.Size != int64(len(body)) || stat.ETag != put.ETag || !reflect.DeepEqual(stat.UserMetadata, blue) {
		return "", failure("StatObject size %d, ETag %s, metadata %v", stat.Size, stat.ETag, stat.UserMetadata)
	}
	if err := m.client.RemoveObject(ctx, m.prefix, key, minio.RemoveObjectOptions{}); err != nil {
		return "", err
	}
	_, err = m.client.StatObject(ctx, m.prefix, key, minio.StatObjectOptions{})
	return "", minioNotFound(err, "StatObject after RemoveObject")
}

func (m *minioScenarios) rangeScenario(ctx context.Context) (string, error) {
	key := "range/data.bin"
	body := randomBytes(10_000)
	if _, err := m.client.PutObject(ctx, m.prefix, key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
		return "", err
	}
	core := minio.Core{Client: m.client}
	cases := []struct {
		start, end   int64
		contentRange string
		expected     []byte
	}{
		{100, 199, "bytes 100-199/10000", body[100:200]},
		{9950, 0, "bytes 9950-9999/10000", body[9950:]},
		{0, -50, "bytes 9950-9999/10000", body[9950:]},
	}
	for _, c := range cases {
		opts := minio.GetObjectOptions{}
		if err := opts.SetRange(c.start, c.end); err != nil {
			return "", err
		}
		reader, _, header, err := core.GetObject(ctx, m.prefix, key, opts)
		if err != nil {
			return "", err
		}
		data, err := readAll(reader)
		if err != nil {
			return "", err
		}
		what := fmt.Sprintf("Range %d,%d", c.start, c.end)
		if err := checkSameBytes(data, c.expected, what); err != nil {
			return "", err
		}
		if header.Get("Content-Range") != c.contentRange {
			return "", failure("%s: Content-Range %q", what, header.Get("Content-Range"))
		}
	}
	return "", nil
}

func (m *minioScenarios) listScenario(ctx context.Context) (string, error) {
	for _, key := range treeKeys {
		if _, err := m.client.PutObject(ctx, m.prefix, key, strings.NewReader(key), int64(len(key)), minio.PutObjectOptions{}); err != nil {
			return "", err
		}
	}
	// minio-go's ListObjects hides paging; its Core API shows each page.
	core := minio.Core{Client: m.client}
	var pages []listPage
	token := ""
	for len(pages) <= len(expectedTreePages) {
		page, err := core.ListObjectsV2(m.prefix, "tree/", "", token, "/", 2)
		if err != nil {
			return "", err
		}
		seen := listPage{Keys: []string{}, Prefixes: []string{}}
		for _, object := range page.Contents {
			seen.Keys = append(seen.Keys, object.Key)
		}
		for _, prefix := range page.CommonPrefixes {
			seen.Prefixes = append(seen.Prefixes, prefix.Prefix)
		}
		// minio-go's result type has no KeyCount, so that check is not made here.
		pages = append(pages, seen)
		if !page.IsTruncated {
			break
		}
		token = page.NextContinuationToken
		if token == "" {
			return "", failure("page %d is truncated but has no NextContinuationToken", len(pages))
		}
	}
	if !reflect.DeepEqual(pages, expectedTreePages) {
		return "", failure("pages %+v, expected %+v", pages, expectedTreePages)
	}
	return "", nil
}

// multipartScenario lets minio-go split the upload itself, as warp's
// multipart benchmark does: PutObject with a 5 MiB part size sends the three
// parts in parallel, each with minio-go's automatic CRC32C.
func (m *minioScenarios) multipartScenario(ctx context.Context) (string, error) {
	key := "multipart/big.bin"
	parts := [][]byte{randomBytes(partSize), randomBytes(partSize), randomBytes(partSize)}
	body := bytes.Join(parts, nil)
	put, err := m.client.PutObject(ctx, m.prefix, key, bytes.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{PartSize: partSize})
	if err != nil {
		return "", err
	}
	if quoted(put.ETag) != multipartETag(parts) {
		return "", failure("multipart ETag %s, expected %s", put.ETag, multipartETag(parts))
	}
	data, got, err := m.getBytes(ctx, key, minio.GetObjectOptions{})
	if err != nil {
		return "", err
	}
	if got.ETag != put.ETag {
		return "", failure("GetObject ETag %s, expected %s", got.ETag, put.ETag)
	}
	if err := checkSameBytes(data, body, "GetObject of the completed upload"); err != nil {
		return "", err
	}
	for i, part := range parts {
		data, _, err := m.getBytes(ctx, key, minio.GetObjectOptions{PartNumber: i + 1})
		if err != nil {
			return "", err
		}
		if err := checkSameBytes(data, part, fmt.Sprintf("GetObject partNumber=%d", i+1)); err != nil {
			return "", err
		}
	}
	return "", nil
}

func (m *minioScenarios) copyScenario(ctx context.Context) (string, error) {
	source, target := "copy/source.bin", "copy/target.bin"
	body := randomBytes(32 * 1024)
	put, err := m.client.PutObject(ctx, m.prefix, source, bytes.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{UserMetadata: map[string]string{"origin": "copy-test"}})
	if err != nil {
		return "", err
	}
	copied, err := m.client.CopyObject(ctx,
		minio.CopyDestOptions{Bucket: m.prefix, Object: target},
		minio.CopySrcOptions{Bucket: m.prefix, Object: source})
	if err != nil {
		return "", err
	}
	if copied.ETag != put.ETag {
		return "", failure("CopyObject ETag %s, source ETag %s", copied.ETag, put.ETag)
	}
	data, got, err := m.getBytes(ctx, target, minio.GetObjectOptions{})
	if err != nil {
		return "", err
	}
	if !reflect.DeepEqual(got.UserMetadata, minio.StringMap{"Origin": "copy-test"}) {
		return "", failure("copy metadata %v", got.UserMetadata)
	}
	return "", checkSameBytes(data, body, "GetObject of the copy")
}

func (m *minioScenarios) taggingScenario(ctx context.Context) (string, error) {
	key := "tagging/object.txt"
	if _, err := m.client.PutObject(ctx, m.prefix, key, strings.NewReader("tagged"), 6, minio.PutObjectOptions{}); err != nil {
		return "", err
	}
	set, err := miniotags.MapToObjectTags(tags)
	if err != nil {
		return "", err
	}
	if err := m.client.PutObjectTagging(ctx, m.prefix, key, set, minio.PutObjectTaggingOptions{}); err != nil {
		return "", err
	}
	got, err := m.client.GetObjectTagging(ctx, m.prefix, key, minio.GetObjectTaggingOptions{})
	if err != nil {
		return "", err
	}
	if !reflect.DeepEqual(got.ToMap(), tags) {
		return "", failure("GetObjectTagging %v, expected %v", got.ToMap(), tags)
	}
	if err := m.client.RemoveObjectTagging(ctx, m.prefix, key, minio.RemoveObjectTaggingOptions{}); err != nil {
		return "", err
	}
	left, err := m.client.GetObjectTagging(ctx, m.prefix, key, minio.GetObjectTaggingOptions{})
	if err != nil {
		return "", err
	}
	if len(left.ToMap()) != 0 {
		return "", failure("GetObjectTagging after RemoveObjectTagging: %v", left.ToMap())
	}
	return "", nil
}

func (m *minioScenarios) presignedScenario(ctx context.Context) (string, error) {
	key := "presigned/file.bin"
	body := randomBytes(20 * 1024)
	put, err := m.client.PresignedPutObject(ctx, m.prefix, key, 10*time.Minute)
	if err != nil {
		return "", err
	}
	status, answer, err := send(ctx, http.MethodPut, put.String(), nil, body)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", failure("presigned PUT: HTTP %d: %.300s", status, answer)
	}
	get, err := m.client.PresignedGetObject(ctx, m.prefix, key, 10*time.Minute, url.Values{})
	if err != nil {
		return "", err
	}
	status, answer, err = send(ctx, http.MethodGet, get.String(), nil, nil)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", failure("presigned GET: HTTP %d: %.300s", status, answer)
	}
	return "", checkSameBytes(answer, body, "presigned GET body")
}

// checksumDefaultScenario: minio-go's defaults over plain HTTP sign the
// payload in chunks (STREAMING-AWS4-HMAC-SHA256-PAYLOAD); GET asks for the
// checksum, which minio-go then verifies itself.
func (m *minioScenarios) checksumDefaultScenario(ctx context.Context) (string, error) {
	return m.checksumRoundTrip(ctx, "checksum/default.bin", minio.PutObjectOptions{})
}

// checksumOffScenario: Content-MD5 instead of any CRC, and UNSIGNED-PAYLOAD,
// the lightest integrity minio-go can be asked for (it has no "when required").
func (m *minioScenarios) checksumOffScenario(ctx context.Context) (string, error) {
	return m.checksumRoundTrip(ctx, "checksum/off.bin", minio.PutObjectOptions{SendContentMd5: true, DisableContentSha256: true})
}

func (m *minioScenarios) checksumRoundTrip(ctx context.Context, key string, opts minio.PutObjectOptions) (string, error) {
	body := randomBytes(checksumBodySize)
	put, err := m.client.PutObject(ctx, m.prefix, key, bytes.NewReader(body), int64(len(body)), opts)
	if err != nil {
		return "", err
	}
	if quoted(put.ETag) != quotedMD5(body) {
		return "", failure("PutObject ETag %s, expected %s", put.ETag, quotedMD5(body))
	}
	data, got, err := m.getBytes(ctx, key, minio.GetObjectOptions{Checksum: true})
	if err != nil {
		return "", err
	}
	if got.ChecksumCRC32 != "" && got.ChecksumCRC32 != crc32Base64(body) {
		return "", failure("GetObject ChecksumCRC32 %s, expected %s", got.ChecksumCRC32, crc32Base64(body))
	}
	if got.ChecksumCRC32C != "" && got.ChecksumCRC32C != crc32cBase64(body) {
		return "", failure("GetObject ChecksumCRC32C %s, expected %s", got.ChecksumCRC32C, crc32cBase64(body))
	}
	return "", checkSameBytes(data, body, "GetObject body")
}

// warpScenario does what a short warp run does: probe the bucket (exists,
// versioning, object lock, location), clear the prefix, PUT from 20
// workers at once, then GET, STAT and DELETE concurrently, list what is
// left and remove it in bulk with DeleteObjects.
func (m *minioScenarios) warpScenario(ctx context.Context) (string, error) {
	// A client of its own, as a warp run starts with: nothing cached, so
	// minio-go's first request to the bucket is GetBucketLocation.
	client, err := makeMinioClient(m.endpoint)
	if err != nil {
		return "", err
	}
	m = &minioScenarios{endpoint: m.endpoint, client: client, prefix: m.prefix}
	exists, err := m.client.BucketExists(ctx, m.prefix)
	if err != nil || !exists {
		return "", failure("BucketExists %s: %v, %v", m.prefix, exists, err)
	}
	if _, err := m.client.GetBucketLocation(ctx, m.prefix); err != nil {
		return "", failure("GetBucketLocation: %v", err)
	}
	versioning, err := m.client.GetBucketVersioning(ctx, m.prefix)
	if err != nil {
		return "", failure("GetBucketVersioning: %v", err)
	}
	if versioning.Enabled() {
		return "", failure("GetBucketVersioning: enabled on a new bucket")
	}
	// warp tolerates an error here: no object lock is the usual answer.
	if lock, _, _, _, err := m.client.GetObjectLockConfig(ctx, m.prefix); err == nil && lock == "Enabled" {
		return "", failure("GetObjectLockConfig: object lock enabled on a new bucket")
	}
	prefix := "warp-" + randomSuffix() + "/"
	if n, err := m.removeAll(ctx, prefix); err != nil || n != 0 {
		return "", failure("clearing %s before the run: %d removed, %v", prefix, n, err)
	}

	bodies := map[string][]byte{}
	var names []string
	for w := range warpWorkers {
		for i := range warpObjectsPerWorker {
			name := fmt.Sprintf("%s%d/%d.rnd", prefix, w, i)
			names = append(names, name)
			bodies[name] = randomBytes(warpObjectSize)
		}
	}
	put := func(ctx context.Context, name string) error {
		body := bodies[name]
		info, err := m.client.PutObject(ctx, m.prefix, name, bytes.NewReader(body), int64(len(body)),
			minio.PutObjectOptions{ContentType: "application/octet-stream"})
		if err == nil && quoted(info.ETag) != quotedMD5(body) {
			err = failure("PUT %s: ETag %s, expected %s", name, info.ETag, quotedMD5(body))
		}
		return err
	}
	get := func(ctx context.Context, name string) error {
		data, _, err := m.getBytes(ctx, name, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		return checkSameBytes(data, bodies[name], "GET "+name)
	}
	stat := func(ctx context.Context, name string) error {
		info, err := m.client.StatObject(ctx, m.prefix, name, minio.StatObjectOptions{})
		if err == nil && (info.Size != warpObjectSize || quoted(info.ETag) != quotedMD5(bodies[name])) {
			err = failure("STAT %s: size %d, ETag %s", name, info.Size, info.ETag)
		}
		return err
	}
	for _, op := range []struct {
		name string
		run  func(context.Context, string) error
	}{{"PUT", put}, {"GET", get}, {"STAT", stat}} {
		if err := concurrently(ctx, names, op.run); err != nil {
			return "", failure("%s phase: %v", op.name, err)
		}
	}

	// The first half deleted one by one, concurrently; the rest in bulk.
	half := names[:len(names)/2]
	remove := func(ctx context.Context, name string) error {
		return m.client.RemoveObject(ctx, m.prefix, name, minio.RemoveObjectOptions{})
	}
	if err := concurrently(ctx, half, remove); err != nil {
		return "", failure("DELETE phase: %v", err)
	}
	listed, err := m.list(ctx, prefix)
	if err != nil {
		return "", err
	}
	if rest := names[len(half):]; !slices.Equal(listed, sorted(rest)) {
		return "", failure("listing after deletes: %d keys, expected %d", len(listed), len(rest))
	}
	n, err := m.removeAll(ctx, prefix)
	if err != nil {
		return "", err
	}
	if n != len(names)-len(half) {
		return "", failure("DeleteObjects removed %d keys, expected %d", n, len(names)-len(half))
	}
	if left, err := m.list(ctx, prefix); err != nil || len(left) != 0 {
		return "", failure("listing after DeleteObjects: %v, %v", left, err)
	}
	return fmt.Sprintf("%d objects of %d B by %d workers: PUT, GET, STAT, DELETE, list, DeleteObjects",
		len(names), warpObjectSize, warpWorkers), nil
}

// concurrently runs op for every name from warpWorkers goroutines; the first error wins.
func concurrently(ctx context.Context, names []string, op func(context.Context, string) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan string)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range warpWorkers {
		wg.Go(func() {
			for name := range work {
				if err := op(ctx, name); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		})
	}
feed:
	for _, name := range names {
		select {
		case work <- name:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	return first
}

func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

// list is warp's listing: ListObjectsV2, recursive, every page.
func (m *minioScenarios) list(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	for object := range m.client.ListObjects(ctx, m.prefix, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if object.Err != nil {
			return nil, object.Err
		}
		keys = append(keys, object.Key)
	}
	return keys, nil
}

// removeAll is warp's cleanup: list the prefix and feed it to RemoveObjects,
// which sends DeleteObjects in batches of up to 1000 keys.
func (m *minioScenarios) removeAll(ctx context.Context, prefix string) (int, error) {
	keys, err := m.list(ctx, prefix)
	if err != nil {
		return 0, err
	}
	objects := make(chan minio.ObjectInfo, len(keys))
	for _, key := range keys {
		objects <- minio.ObjectInfo{Key: key}
	}
	close(objects)
	for failed := range m.client.RemoveObjects(ctx, m.prefix, objects, minio.RemoveObjectsOptions{}) {
		return 0, failure("DeleteObjects %s: %v", failed.ObjectName, failed.Err)
	}
	return len(keys), nil
}

// removeMinioBucket is best-effort cleanup: objects, pending uploads, the bucket.
func removeMinioBucket(ctx context.Context, client *minio.Client, name string) {
	if exists, err := client.BucketExists(ctx, name); err != nil || !exists {
		return
	}
	m := &minioScenarios{client: client, prefix: name}
	if _, err := m.removeAll(ctx, ""); err != nil {
		logf("cleanup of %s failed: %v", name, err)
	}
	for upload := range client.ListIncompleteUploads(ctx, name, "", true) {
		if upload.Err != nil {
			logf("cleanup of uploads in %s failed: %v", name, upload.Err)
			break
		}
		if err := client.RemoveIncompleteUpload(ctx, name, upload.Key); err != nil {
			logf("cleanup could not abort uploads of %s: %v", upload.Key, err)
		}
	}
	if err := client.RemoveBucket(ctx, name); err != nil {
		logf("cleanup could not delete bucket %s: %v", name, err)
	}
}

// presignedPostScenario uploads with a form signed by PresignedPostPolicy,
// as a browser would post it (the file last), then reads the object back;
// a form whose key the policy does not allow must be refused.
func (m *minioScenarios) presignedPostScenario(ctx context.Context) (string, error) {
	key := "posted/form.txt"
	body := randomBytes(30 * 1024)
	policy := minio.NewPostPolicy()
	for _, set := range []error{
		policy.SetBucket(m.prefix),
		policy.SetKey(key),
		policy.SetExpires(time.Now().UTC().Add(10 * time.Minute)),
		policy.SetContentType("text/plain"),
		policy.SetContentLengthRange(1, 1024*1024),
		policy.SetUserMetadata("colour", "blue"),
		policy.SetSuccessStatusAction("201"),
	} {
		if set != nil {
			return "", set
		}
	}
	target, form, err := m.client.PresignedPostPolicy(ctx, policy)
	if err != nil {
		return "", err
	}
	status, answer, err := postForm(ctx, target.String(), form, body)
	if err != nil {
		return "", err
	}
	if status != http.StatusCreated || !bytes.Contains(answer, []byte("<Key>"+key+"</Key>")) {
		return "", failure("form upload: HTTP %d: %.300s", status, answer)
	}
	data, info, err := m.getBytes(ctx, key, minio.GetObjectOptions{})
	if err != nil {
		return "", err
	}
	if err := checkSameBytes(data, body, "posted object"); err != nil {
		return "", err
	}
	if info.ContentType != "text/plain" || info.UserMetadata["Colour"] != "blue" {
		return "", failure("posted object: content type %q, metadata %v", info.ContentType, info.UserMetadata)
	}
	form["key"] = "posted/elsewhere.txt"
	status, answer, err = postForm(ctx, target.String(), form, body)
	if err != nil {
		return "", err
	}
	if status != http.StatusForbidden {
		return "", failure("form with a key the policy does not allow: HTTP %d: %.300s", status, answer)
	}
	return "", nil
}

// postForm sends fields then the file as multipart/form-data.
func postForm(ctx context.Context, target string, fields map[string]string, file []byte) (int, []byte, error) {
	var form bytes.Buffer
	writer := multipart.NewWriter(&form)
	for name, value := range fields {
		if err := writer.WriteField(name, value); err != nil {
			return 0, nil, err
		}
	}
	part, err := writer.CreateFormFile("file", "form.txt")
	if err != nil {
		return 0, nil, err
	}
	if _, err := part.Write(file); err != nil {
		return 0, nil, err
	}
	if err := writer.Close(); err != nil {
		return 0, nil, err
	}
	header := http.Header{"Content-Type": {writer.FormDataContentType()}}
	return send(ctx, http.MethodPost, target, header, form.Bytes())
}
